"""Behaviour of the BOHAMIANN surrogate (Springenberg et al. 2016): calibrated uncertainty on
the supplement's sinc example, determinism, the persistent chain, conditioning."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch

from condsamplers.models.bohamiann import BOHAMIANN
from condsamplers.space import FeatureSpec

#: A short chain for the tests that check plumbing rather than calibration.
SHORT = dict(hidden_sizes=(20, 20), n_burn_in=300, n_burn_in_warm=100, n_samples=10)


def sinc_data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The supplement's Fig. 1 task as in pybnn's example: 20 points of sinc(10 x - 5)."""
    X = np.random.RandomState(42).rand(20, 1)
    return X, np.ones_like(X, dtype=bool), np.sinc(10.0 * X[:, 0] - 5.0)


def fit(X, active, y, features=None, **options) -> BOHAMIANN:
    features = features or FeatureSpec.numerical(X.shape[1])
    return BOHAMIANN(**{"seed": 0, **options}).fit(X, active, y, features)


def test_sinc_predictive_interval_covers_the_function_and_std_grows_away() -> None:
    """Acceptance (supplement Fig. 1), default settings: the 95% predictive interval (noise
    included) covers >= 90% of a dense grid on the data range, and the latent std grows
    outside it."""
    X, active, y = sinc_data()
    model = fit(X, active, y)
    assert model.samples_.shape[0] == 50 and not model.warm_started_
    grid = np.linspace(X.min(), X.max(), 500)[:, None]
    mean, var = model.predict(grid, np.ones_like(grid, dtype=bool))
    std = np.sqrt(var + model.noise_variance())
    covered = np.abs(mean - np.sinc(10.0 * grid[:, 0] - 5.0)) <= 1.96 * std
    assert covered.mean() >= 0.9
    _, var_data = model.predict(X, active)
    outside = np.array([[-0.5], [1.5]])
    _, var_out = model.predict(outside, np.ones_like(outside, dtype=bool))
    assert var_out.min() > 4.0 * np.median(var_data)


def test_predictions_are_deterministic_and_seeded() -> None:
    X, active, y = sinc_data()
    first = fit(X, active, y, seed=1, **SHORT)
    again = fit(X, active, y, seed=1, **SHORT)
    other = fit(X, active, y, seed=2, **SHORT)
    torch.testing.assert_close(first.samples_, again.samples_, rtol=0, atol=0)
    grid = np.linspace(0, 1, 9)[:, None]
    g_active = np.ones_like(grid, dtype=bool)
    np.testing.assert_array_equal(
        first.predict(grid, g_active)[0], first.predict(grid, g_active)[0]
    )
    assert not np.array_equal(first.predict(grid, g_active)[0], other.predict(grid, g_active)[0])


def test_warm_start_continues_the_chain_with_a_shorter_burn_in() -> None:
    X, active, y = sinc_data()
    cold = fit(X[:15], active[:15], y[:15], **SHORT)
    warm = fit(X, active, y, seed=1, warm_start=cold.warm_start_state(), **SHORT)
    assert warm.warm_started_ and warm.n_steps_ < cold.n_steps_
    state = cold.warm_start_state()
    wider = np.column_stack([X, X])
    fresh = fit(wider, np.ones_like(wider, dtype=bool), y, warm_start=state, **SHORT)
    assert not fresh.warm_started_


def test_posterior_is_the_total_variance_over_samples_and_differentiable() -> None:
    X, active, y = sinc_data()
    model = fit(X, active, y, **SHORT)
    grid = torch.linspace(0, 1, 7, dtype=torch.float64)[:, None].requires_grad_(True)
    mean, var = model.posterior(grid, torch.ones_like(grid, dtype=torch.bool))
    outputs = model._sample_outputs(grid.detach(), torch.ones_like(grid, dtype=torch.bool))
    outputs = outputs * model.y_std_ + model.y_mean_
    torch.testing.assert_close(mean.detach(), outputs.mean(0))
    torch.testing.assert_close(var.detach(), outputs.var(0, unbiased=False).clamp_min(1e-12))
    (mean.sum() + var.sum()).backward()
    assert torch.isfinite(grid.grad).all() and float(grid.grad.abs().sum()) > 0


def test_condition_on_reweights_samples_towards_the_new_observations(
    caplog: pytest.LogCaptureFixture,
) -> None:
    X, active, y = sinc_data()
    model = fit(X, active, y, **SHORT)
    point = np.array([[1.3]])  # outside the data: the samples disagree there
    p_active = np.ones_like(point, dtype=bool)
    mean, var = model.predict(point, p_active)
    believed = model.condition_on(point, p_active, mean)
    _, var_after = believed.predict(point, p_active)
    assert var_after[0] < var[0]
    assert believed.effective_sample_size >= 0.2 * 10 - 1e-9
    assert model.effective_sample_size == pytest.approx(10.0)  # the original is untouched
    # An observation far from every sample: weights would collapse; tempered and logged.
    with caplog.at_level(logging.INFO, logger="optuna.condsamplers.models.bohamiann"):
        surprised = model.condition_on(point, p_active, mean + 50.0 * np.sqrt(var))
    assert "tempered" in caplog.text
    assert surprised.effective_sample_size == pytest.approx(2.0, rel=0.05)
    assert np.all(np.isfinite(surprised.predict(X, active)[1]))


def test_constant_columns_constant_targets_and_one_observation_are_fine() -> None:
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(size=12), np.full(12, 0.3), np.zeros(12)])
    active = np.ones_like(X, dtype=bool)
    active[:, 2] = False
    for y in (np.sin(5 * X[:, 0]), np.full(12, -2.0)):
        mean, var = fit(X, active, y, **SHORT).predict(X, active)
        assert np.all(np.isfinite(mean)) and np.all(np.isfinite(var)) and np.all(var > 0)
    single = fit(X[:1], active[:1], np.array([1.0]), **SHORT)
    assert np.all(np.isfinite(single.predict(X, active)[0]))


@pytest.mark.parametrize(
    ("options", "name"),
    [
        ({"hidden_sizes": (0,)}, "hidden_sizes"),
        ({"n_samples": 0}, "n_samples"),
        ({"keep_every": -1}, "keep_every"),
        ({"step_size": 0.0}, "step_size"),
        ({"mdecay": 1.5}, "mdecay"),
        ({"noise_prior_median": -1.0}, "noise_prior_median"),
        ({"min_ess_fraction": 2.0}, "min_ess_fraction"),
        ({"device": "nope"}, "device"),
    ],
)
def test_bad_options_raise_value_errors_naming_them(options: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        BOHAMIANN(**options)


def test_the_sampler_and_the_regressor_pass_the_noise_prior_to_the_model() -> None:
    """``noise_prior_median`` / ``noise_prior_log_var`` are options of BOHAMIANNSampler and
    BOHAMIANNRegressor: a bad one is named, and pybnn's prior (1e-6, 0.01) fits a smaller noise
    to noise-free sinc data than the default (1e-2, 1)."""
    from condsamplers import BOHAMIANNSampler
    from condsamplers.sklearn import BOHAMIANNRegressor

    with pytest.raises(ValueError, match="noise_prior_log_var"):
        BOHAMIANNSampler(noise_prior_log_var=0.0)
    X, _, y = sinc_data()
    short = dict(hidden_sizes=(20, 20), n_burn_in=300, n_samples=10, random_state=0)
    with pytest.raises(ValueError, match="noise_prior_median"):
        BOHAMIANNRegressor(noise_prior_median=-1.0, **short).fit(X, y)
    default = BOHAMIANNRegressor(**short).fit(X, y).model_.noise_variance()
    pulled = BOHAMIANNRegressor(noise_prior_median=1e-6, noise_prior_log_var=0.01, **short)
    assert pulled.fit(X, y).model_.noise_variance() < 0.1 * default
