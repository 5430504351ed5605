"""The augmented-EI factor (Huang et al. 2006) that log-EI carries for noisy models."""

from __future__ import annotations

import math

import numpy as np
import optuna
import pytest
import torch

from condsamplers import ArcGPSampler, DNGOSampler, TreeGPSampler
from condsamplers.acquisition import Fantasy, log_noise_penalty, make_log_mc_ei
from condsamplers.models.dngo import DNGO
from condsamplers.models.gp import ExactGP
from condsamplers.space import FeatureSpec


def _fit_gp(noise_std: float, seed: int = 0) -> ExactGP:
    """A 1-D Matern GP on a smooth function, observed 8 times at x = 0.5 and on a coarse grid."""
    rng = np.random.default_rng(seed)
    x = np.concatenate([np.full(8, 0.5), np.linspace(0.0, 1.0, 6)])[:, None]
    y = np.sin(6.0 * x[:, 0]) + noise_std * rng.standard_normal(len(x))
    return ExactGP("matern", n_restarts=2, seed=seed).fit(
        x, np.ones_like(x, dtype=bool), y, FeatureSpec.numerical(1)
    )


def test_log_noise_penalty_matches_the_direct_formula_and_stays_finite() -> None:
    var = torch.tensor([1e-30, 1e-8, 0.01, 1.0, 100.0], dtype=torch.float64)
    noise = 0.04
    direct = torch.log(1.0 - torch.sqrt(noise / (var + noise)))
    stable = log_noise_penalty(var, noise)
    assert torch.all(torch.isfinite(stable))
    np.testing.assert_allclose(stable[2:].numpy(), direct[2:].numpy(), rtol=1e-10)
    # for s^2 << tau^2 the factor is s^2 / (2 tau^2)
    assert math.isclose(float(stable[1]), math.log(1e-8 / (2 * noise)), rel_tol=1e-6)


def test_noisy_gp_discounts_a_point_it_has_already_measured_many_times() -> None:
    gp = _fit_gp(noise_std=0.3)
    assert gp.noise_variance() > 0.01
    best = float(gp.predict(np.array([[0.5]]), np.ones((1, 1), bool))[0][0])
    plain = make_log_mc_ei([Fantasy(gp, best)])
    augmented = make_log_mc_ei([Fantasy(gp, best)], gp.noise_variance())
    X = torch.tensor([[0.5], [0.9]], dtype=torch.float64)
    on = torch.ones_like(X, dtype=torch.bool)
    drop = (plain(X, on) - augmented(X, on)).numpy()
    # the replicated point loses more than a point between grid nodes
    assert drop[0] > drop[1] > 0


def test_noise_free_gp_keeps_plain_ei_away_from_its_data() -> None:
    gp = _fit_gp(noise_std=0.0)
    plain = make_log_mc_ei([Fantasy(gp, -1.0)])
    augmented = make_log_mc_ei([Fantasy(gp, -1.0)], gp.noise_variance())
    X = torch.tensor([[0.1], [0.3], [0.7], [0.9]], dtype=torch.float64)
    on = torch.ones_like(X, dtype=torch.bool)
    difference = (plain(X, on) - augmented(X, on)).numpy()
    assert np.all(difference < 0.05)


def test_the_factor_is_the_same_for_every_fantasy_of_a_gp() -> None:
    gp = _fit_gp(noise_std=0.3)
    noise = gp.noise_variance()
    fantasies = [Fantasy(gp, -1.0), Fantasy(gp, -0.5)]
    X = torch.tensor([[0.2], [0.5]], dtype=torch.float64)
    on = torch.ones_like(X, dtype=torch.bool)
    _, var = gp.posterior(X, on)
    shift = make_log_mc_ei(fantasies, noise)(X, on) - make_log_mc_ei(fantasies)(X, on)
    np.testing.assert_allclose(shift.numpy(), log_noise_penalty(var, noise).numpy(), rtol=1e-9)


def test_models_without_a_noise_estimate_report_none() -> None:
    x = np.linspace(0.0, 1.0, 12)[:, None]
    model = DNGO(hidden_sizes=(8, 8), n_epochs=50, seed=0).fit(
        x, np.ones_like(x, dtype=bool), np.sin(6.0 * x[:, 0]), FeatureSpec.numerical(1)
    )
    assert model.noise_variance() is None


@pytest.mark.parametrize(
    ("sampler_cls", "augmented"),
    [(TreeGPSampler, True), (ArcGPSampler, True), (DNGOSampler, False)],
)
def test_each_sampler_steps_with_the_ei_measured_for_it(
    ei_noises: list[float | None], sampler_cls: type, augmented: bool
) -> None:
    """The tree GP and the arc GP carry the augmented-EI factor of their fitted noise
    (Huang et al. 2006); DNGO keeps plain EI."""
    study = optuna.create_study(sampler=sampler_cls(seed=0, n_startup_trials=5))
    study.optimize(lambda t: (t.suggest_float("x", 0, 1) - 0.3) ** 2, n_trials=6)
    assert len(ei_noises) == 1
    assert (ei_noises[0] is not None and ei_noises[0] > 0) if augmented else ei_noises[0] is None
