"""Kernels, the exact GP and the acquisition: the maths the samplers stand on."""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest
import torch

from condsamplers.acquisition import log_expected_improvement
from condsamplers.kernels import ArcKernel, MaternKernel, squared_distances
from condsamplers.models.gp import ExactGP, NumericalError, robust_cholesky
from condsamplers.models.tree_gp import TreeGP
from condsamplers.one_hot import one_hot, one_hot_columns
from condsamplers.space import FeatureSpec


def test_one_hot_columns_equal_one_hot_per_column() -> None:
    """One scatter for every categorical column gives each column's :func:`one_hot`, rounding
    and clipping out-of-range indices the same way; numerical columns get none."""
    features = FeatureSpec(n_categories=np.array([3, 0, 2, 5]))
    X = torch.tensor(
        [[0.0, 0.3, 1.0, 4.0], [2.0, 0.9, 0.0, 0.4], [1.6, 0.1, 7.0, -1.0]], dtype=torch.float64
    )
    blocks = one_hot_columns(X, features)
    assert list(blocks) == [0, 2, 3]
    for j, k in ((0, 3), (2, 2), (3, 5)):
        assert blocks[j].dtype == X.dtype
        assert torch.equal(blocks[j], one_hot(X[:, j], k))
    assert one_hot_columns(X[:, 1:2], FeatureSpec.numerical(1)) == {}


def _arc_distance2(x, a, params, features) -> torch.Tensor:
    emb = ArcKernel().embed(
        torch.tensor(x, dtype=torch.float64), torch.tensor(a), params, features
    )
    return squared_distances(emb, emb)


def test_arc_kernel_distances_follow_eq_4() -> None:
    """Both inactive: 0; one active: omega; both active: omega sqrt2 sqrt(1 - cos(pi rho d))."""
    features = FeatureSpec.numerical(1)
    omega, rho = 1.7, 0.6
    params = {
        "log_omega": torch.tensor([math.log(omega)], dtype=torch.float64),
        "logit_rho": torch.tensor([math.log(rho / (1 - rho))], dtype=torch.float64),
    }
    x = [[0.2], [0.9], [0.0], [0.0]]
    a = [[True], [True], [False], [False]]
    d2 = _arc_distance2(x, a, params, features).numpy()
    both = omega**2 * 2 * (1 - math.cos(math.pi * rho * 0.7))
    assert d2[0, 1] == pytest.approx(both)
    assert d2[0, 2] == pytest.approx(omega**2)
    assert d2[2, 3] == pytest.approx(0.0, abs=1e-12)


def test_arc_kernel_categories_sit_on_a_simplex_around_the_inactive_point() -> None:
    features = FeatureSpec(np.array([3]))
    omega, rho = 0.8, 0.5
    params = {
        "log_omega": torch.tensor([math.log(omega)], dtype=torch.float64),
        "logit_rho": torch.tensor([0.0], dtype=torch.float64),
    }
    x = [[0.0], [1.0], [2.0], [0.0]]
    a = [[True], [True], [True], [False]]
    d2 = _arc_distance2(x, a, params, features).numpy()
    between = 2 * omega**2 * rho**2
    assert d2[0, 1] == pytest.approx(between) and d2[1, 2] == pytest.approx(between)
    assert d2[0, 3] == pytest.approx(omega**2) and d2[2, 3] == pytest.approx(omega**2)


def test_robust_cholesky_adds_jitter_and_says_so(caplog: pytest.LogCaptureFixture) -> None:
    singular = torch.ones((4, 4), dtype=torch.float64)
    with caplog.at_level(logging.WARNING, logger="optuna.condsamplers"):
        L = robust_cholesky(singular)
    assert "jitter" in caplog.text
    assert torch.allclose(L @ L.T, singular, atol=1e-4)
    with pytest.raises(NumericalError):
        robust_cholesky(torch.full((3, 3), float("nan"), dtype=torch.float64))


def test_log_ei_is_finite_and_matches_the_direct_formula() -> None:
    mean = torch.tensor([0.0, 0.0, 5.0, 40.0], dtype=torch.float64)
    var = torch.ones(4, dtype=torch.float64)
    values = log_expected_improvement(mean, var, best=0.5)
    z = (0.5 - mean[:3]) / 1.0
    normal = torch.distributions.Normal(0.0, 1.0)
    direct = torch.log(torch.exp(normal.log_prob(z)) + z * normal.cdf(z))
    assert torch.allclose(values[:3], direct, atol=1e-9)
    assert torch.isfinite(values).all() and values[3] < values[2]


@pytest.mark.parametrize("kernel", ["arc", "matern"])
def test_gp_interpolates_a_noise_free_conditional_function(kernel: str) -> None:
    rng = np.random.default_rng(0)
    n = 40
    X = rng.random((n, 2))
    active = np.ones((n, 2), dtype=bool)
    active[: n // 2, 1] = False
    X[~active] = 0.0
    y = np.sin(4 * X[:, 0]) + np.where(active[:, 1], X[:, 1] ** 2, 0.0)
    gp = ExactGP(kernel, n_restarts=1, seed=0).fit(X, active, y, FeatureSpec.numerical(2))
    mean, var = gp.predict(X, active)
    assert np.max(np.abs(mean - y)) < 0.05
    assert np.all(var >= 0)
    X_new = rng.random((20, 2))
    active_new = np.ones((20, 2), dtype=bool)
    truth = np.sin(4 * X_new[:, 0]) + X_new[:, 1] ** 2
    prediction, _ = gp.predict(X_new, active_new)
    assert np.mean((prediction - truth) ** 2) < 0.1 * np.var(truth)


def test_gp_refuses_non_finite_targets() -> None:
    X = np.zeros((3, 1))
    with pytest.raises(ValueError, match="NaN or inf"):
        ExactGP().fit(X, X > -1, np.array([0.0, np.inf, 1.0]), FeatureSpec.numerical(1))


@pytest.mark.parametrize(("kernel", "mean"), [("arc", "sample"), ("bn", "gls"), ("matern", "gls")])
def test_exact_gp_mean_at_observations_is_the_prediction_there(kernel: str, mean: str) -> None:
    """``y - sigma^2 alpha`` from the cached factor equals a prediction at the rows fitted
    (noisy values, so that the noise term matters), also after ``condition_on``."""
    rng = np.random.default_rng(0)
    features = FeatureSpec(n_categories=np.array([2, 0, 0]))
    X = np.column_stack([rng.integers(0, 2, 20), rng.random(20), rng.random(20)])
    active = np.ones_like(X, dtype=bool)
    active[X[:, 0] == 1, 2] = False
    X[~active] = 0.0
    y = np.sin(4 * X[:, 1]) + X[:, 2] + 0.1 * rng.standard_normal(20)
    model = ExactGP(kernel, seed=0, max_iter=30, min_noise=1e-2, mean=mean)
    model.fit(X, active, y, features)
    np.testing.assert_allclose(
        model.mean_at_observations(), model.predict(X, active)[0], rtol=1e-9, atol=1e-9
    )
    X_new = X[:3].copy()
    X_new[:, 1] = 1.0 - X_new[:, 1]
    other = model.condition_on(X_new, active[:3], np.array([0.1, 0.2, 0.3]))
    X_all, active_all = np.vstack([X, X_new]), np.vstack([active, active[:3]])
    np.testing.assert_allclose(
        other.mean_at_observations(), other.predict(X_all, active_all)[0], rtol=1e-9, atol=1e-9
    )


@pytest.mark.parametrize("kernel", [ArcKernel(), MaternKernel()])
def test_length_scale_is_the_distance_over_which_the_embedding_moves_by_one(kernel) -> None:
    """Near any point, a step ``delta`` along column ``i`` moves the embedding by
    ``delta / length_scale_i`` (what the acquisition's local search divides its steps by)."""
    features = FeatureSpec.numerical(3)
    shift = torch.tensor([0.3, -1.2, 2.0], dtype=torch.float64)
    params = {k: v + shift for k, v in kernel.initial_params(features).items()}
    scales = kernel.length_scales(params)
    x = torch.tensor([[0.2, 0.5, 0.7]], dtype=torch.float64)
    active = torch.ones((1, 3), dtype=torch.bool)
    delta = 1e-6
    for i in range(3):
        moved = x.clone()
        moved[0, i] += delta
        step = kernel.embed(moved, active, params, features) - kernel.embed(
            x, active, params, features
        )
        assert float(step.norm()) / delta == pytest.approx(1.0 / scales[i], rel=1e-4)


def test_models_report_their_kernels_length_scales() -> None:
    rng = np.random.default_rng(1)
    X = rng.random((15, 2))
    active = np.ones_like(X, dtype=bool)
    y = np.sin(6 * X[:, 0])
    features = FeatureSpec.numerical(2)
    for kernel in ("arc", "matern"):
        gp = ExactGP(kernel, seed=0, max_iter=30).fit(X, active, y, features)
        np.testing.assert_allclose(gp.length_scales(), gp.kernel.length_scales(gp.params_))
    assert ExactGP("bn", seed=0, max_iter=30).fit(X, active, y, features).length_scales() is None
    tree = TreeGP(seed=0).fit(X, active, y, features)
    np.testing.assert_allclose(tree.length_scales(), np.exp(-tree.params_["log_omega"].numpy()))
    assert tree.length_scales()[0] < tree.length_scales()[1]  # y moves with column 0 only
