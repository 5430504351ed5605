"""Behaviour of the DNGO surrogate (Snoek et al. 2015): fit, uncertainty, the marginal
likelihood of eq. 8, conditioning, the quadratic prior mean of eq. 9, robustness, seeding."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from condsamplers.models.dngo import DNGO
from condsamplers.space import FeatureSpec

SMALL = dict(hidden_sizes=(20, 20), n_epochs=200)


def smooth(x: np.ndarray) -> np.ndarray:
    return np.sin(3.0 * np.pi * x) * x + x


def one_d(n: int, low: float = 0.0, high: float = 1.0, seed: int = 0):
    X = np.random.default_rng(seed).uniform(low, high, (n, 1))
    return X, np.ones_like(X, dtype=bool), smooth(X[:, 0])


def fit(X, active, y, features=None, **options) -> DNGO:
    features = features or FeatureSpec.numerical(X.shape[1])
    return DNGO(**{"seed": 0, **options}).fit(X, active, y, features)


def test_fits_a_smooth_function_with_low_held_out_error() -> None:
    X, active, y = one_d(30)
    model = fit(X, active, y)
    grid = np.linspace(0.0, 1.0, 201)[:, None]
    mean, var = model.predict(grid, np.ones_like(grid, dtype=bool))
    rmse = np.sqrt(np.mean((mean - smooth(grid[:, 0])) ** 2))
    assert rmse < 0.02 * np.ptp(y)
    assert np.all(np.isfinite(var)) and np.all(var > 0)


def test_variance_grows_away_from_the_data() -> None:
    X, active, y = one_d(20, high=0.5)
    model = fit(X, active, y)
    _, var_data = model.predict(X, active)
    far = np.linspace(0.8, 1.0, 5)[:, None]
    _, var_far = model.predict(far, np.ones_like(far, dtype=bool))
    assert var_far.min() > 10.0 * var_data.max()
    near = np.array([[0.55], [0.65], [0.8], [1.0]])
    _, var_out = model.predict(near, np.ones_like(near, dtype=bool))
    assert np.all(np.diff(var_out) > 0)


@pytest.mark.parametrize("quadratic", [False, True])
def test_marginal_likelihood_equals_the_gaussian_of_the_weight_space_model(
    quadratic: bool,
) -> None:
    """Eq. 8 at the fitted alpha, beta is log N(r; 0, Phi Phi^T / alpha + I / beta)."""
    X, active, y = one_d(9)
    model = fit(X, active, y, hidden_sizes=(5, 4), n_epochs=50, quadratic_prior_mean=quadratic)
    X_t, active_t = torch.as_tensor(X), torch.as_tensor(active)
    Phi = model.basis(X_t, active_t).numpy()
    assert Phi.shape == (9, 5)
    z = (y - model.y_mean_) / model.y_std_
    r = z - model.prior_mean(X_t, active_t).numpy()
    cov = Phi @ Phi.T / model.alpha_ + np.eye(9) / model.beta_
    _, log_det = np.linalg.slogdet(cov)
    brute = -0.5 * (r @ np.linalg.solve(cov, r) + log_det + 9 * np.log(2 * np.pi))
    assert model.log_marginal_likelihood_ == pytest.approx(brute, rel=1e-8, abs=1e-8)


@pytest.mark.parametrize("quadratic", [False, True])
def test_condition_on_equals_refitting_the_regression_with_the_same_network(
    quadratic: bool,
) -> None:
    X, active, y = one_d(15)
    model = fit(X, active, y, quadratic_prior_mean=quadratic, **SMALL)
    X_new = np.array([[0.05], [0.5], [0.97]])
    y_new = np.array([0.3, -1.0, 2.0])
    conditioned = model.condition_on(X_new, np.ones_like(X_new, dtype=bool), y_new)
    # Bayesian linear regression by hand on all rows through the fitted network.
    X_all = np.concatenate([X, X_new])
    a_all = np.ones_like(X_all, dtype=bool)
    Phi = model.basis(torch.as_tensor(X_all), torch.as_tensor(a_all)).numpy()
    eta = model.prior_mean(torch.as_tensor(X_all), torch.as_tensor(a_all)).numpy()
    r = (np.concatenate([y, y_new]) - model.y_mean_) / model.y_std_ - eta
    A = model.beta_ * Phi.T @ Phi + model.alpha_ * np.eye(Phi.shape[1])
    m = model.beta_ * np.linalg.solve(A, Phi.T @ r)
    grid = np.linspace(0.0, 1.0, 13)[:, None]
    g_active = np.ones_like(grid, dtype=bool)
    Phi_g = model.basis(torch.as_tensor(grid), torch.as_tensor(g_active)).numpy()
    eta_g = model.prior_mean(torch.as_tensor(grid), torch.as_tensor(g_active)).numpy()
    expected_mean = (Phi_g @ m + eta_g) * model.y_std_ + model.y_mean_
    expected_var = np.einsum("ij,ji->i", Phi_g, np.linalg.solve(A, Phi_g.T)) * model.y_std_**2
    mean, var = conditioned.predict(grid, g_active)
    np.testing.assert_allclose(mean, expected_mean, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(var, expected_var, rtol=1e-6, atol=1e-12)
    # the original model is untouched, and the new points' variance dropped
    np.testing.assert_array_equal(
        model.predict(grid, g_active)[0],
        fit(X, active, y, quadratic_prior_mean=quadratic, **SMALL).predict(grid, g_active)[0],
    )
    before = model.predict(X_new, np.ones_like(X_new, dtype=bool))[1]
    after = conditioned.predict(X_new, np.ones_like(X_new, dtype=bool))[1]
    assert np.all(after < before)


def test_constant_columns_and_constant_targets_give_finite_output() -> None:
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(size=12), np.full(12, 0.3), np.zeros(12), np.zeros(12)])
    active = np.ones_like(X, dtype=bool)
    active[:, 2] = False  # a column never active
    features = FeatureSpec(np.array([0, 0, 0, 3]))  # the last one categorical, one choice seen
    for y in (np.sin(5 * X[:, 0]), np.full(12, 4.2)):
        for options in ({}, {"integrate_hyperparameters": True}, {"quadratic_prior_mean": True}):
            model = fit(X, active, y, features, **SMALL, **options)
            mean, var = model.predict(X, active)
            assert np.all(np.isfinite(mean)) and np.all(np.isfinite(var)) and np.all(var > 0)
    np.testing.assert_allclose(mean, 4.2, atol=1e-2)
    single = fit(X[:1], active[:1], np.array([1.0]), features, **SMALL)
    assert np.all(np.isfinite(single.predict(X, active)[0]))


def test_quadratic_prior_mean_reverts_to_high_values_away_from_the_data() -> None:
    """Data of a bowl seen only near the centre: eq. 9 predicts high values at the corners,
    where a plain DNGO's tanh basis extrapolates flat."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0.35, 0.65, (30, 2))
    y = 10.0 * ((X - 0.5) ** 2).sum(1)
    active = np.ones_like(X, dtype=bool)
    corners = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    c_active = np.ones_like(corners, dtype=bool)
    bowl = fit(X, active, y, quadratic_prior_mean=True, **SMALL).predict(corners, c_active)[0]
    flat = fit(X, active, y, **SMALL).predict(corners, c_active)[0]
    assert np.all(bowl > 3.0 * y.max())
    assert np.all(bowl > flat + 1.0)


def test_same_seed_same_predictions_and_warm_start_trains_less() -> None:
    X, active, y = one_d(20)
    grid = np.linspace(0, 1, 7)[:, None]
    g_active = np.ones_like(grid, dtype=bool)
    first = fit(X, active, y, seed=3, **SMALL)
    second = fit(X, active, y, seed=3, **SMALL)
    other = fit(X, active, y, seed=4, **SMALL)
    np.testing.assert_array_equal(
        first.predict(grid, g_active)[0], second.predict(grid, g_active)[0]
    )
    assert not np.array_equal(first.predict(grid, g_active)[0], other.predict(grid, g_active)[0])
    warm = fit(X, active, y, seed=5, warm_start=first.warm_start_state(), **SMALL)
    assert warm.warm_started_ and not first.warm_started_
    assert warm.n_updates_ < first.n_updates_
    inside = np.linspace(0.1, 0.9, 17)[:, None]
    error = warm.predict(inside, np.ones_like(inside, dtype=bool))[0] - smooth(inside[:, 0])
    assert np.sqrt(np.mean(error**2)) < 0.05
    # a network of another layout (a new parameter appeared) is not reused
    X2 = np.column_stack([X, X])
    fresh = fit(X2, np.ones_like(X2, dtype=bool), y, warm_start=first.warm_start_state(), **SMALL)
    assert not fresh.warm_started_


def test_integrated_hyperparameters_average_a_posterior_grid() -> None:
    X, active, y = one_d(20, high=0.5)
    point = fit(X, active, y, **SMALL)
    grid_model = fit(X, active, y, integrate_hyperparameters=True, **SMALL)
    weights = grid_model.blr_.weights
    assert len(weights) > 1 and float(weights.sum()) == pytest.approx(1.0)
    test = np.linspace(0, 1, 11)[:, None]
    t_active = np.ones_like(test, dtype=bool)
    mean_p, var_p = point.predict(test, t_active)
    mean_g, var_g = grid_model.predict(test, t_active)
    np.testing.assert_allclose(mean_g, mean_p, atol=0.05 * np.ptp(y))
    assert np.all(var_g > 0.2 * var_p) and np.all(var_g < 5.0 * var_p + 1e-8)


def test_posterior_is_differentiable_in_the_inputs_and_conditional_inputs_work() -> None:
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(25, 3))
    X[:, 2] = rng.integers(0, 3, 25)
    active = np.ones_like(X, dtype=bool)
    active[:10, 1] = False
    X[~active] = 0.0
    y = np.sin(4 * X[:, 0]) + np.where(active[:, 1], X[:, 1], 1.0) + 0.3 * X[:, 2]
    model = fit(X, active, y, FeatureSpec(np.array([0, 0, 3])), **SMALL)
    X_t = torch.as_tensor(X[:4]).clone().requires_grad_(True)
    mean, var = model.posterior(X_t, torch.as_tensor(active[:4]))
    assert mean.dtype == var.dtype == torch.float64
    (mean.sum() + var.sum()).backward()
    assert torch.isfinite(X_t.grad).all() and float(X_t.grad[:, 0].abs().sum()) > 0


@pytest.mark.parametrize(
    ("options", "name"),
    [
        ({"hidden_sizes": ()}, "hidden_sizes"),
        ({"hidden_sizes": (10, 0)}, "hidden_sizes"),
        ({"n_epochs": 0}, "n_epochs"),
        ({"batch_size": 1.5}, "batch_size"),
        ({"learning_rate": -1.0}, "learning_rate"),
        ({"weight_decay": -1e-3}, "weight_decay"),
        ({"n_restarts": -1}, "n_restarts"),
        ({"device": "tpu"}, "device"),
    ],
)
def test_bad_options_raise_value_errors_naming_them(options: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        DNGO(**options)
