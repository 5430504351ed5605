"""The quadratic forms of eq. 3 with their analytic gradient (models/leaf_algebra.py)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch

import condsamplers.models.gp as exact
import condsamplers.models.tree_gp_posterior as posterior
from condsamplers.models.gp import ExactGP
from condsamplers.models.leaf_algebra import ANALYTIC_GRADIENT_ROWS, quadratic_forms
from condsamplers.models.tree_gp import TreeGP
from condsamplers.space import FeatureSpec


def _spd_batch(rng: np.random.Generator, batch: int, m: int) -> torch.Tensor:
    B = rng.standard_normal((batch, m, m))
    return torch.as_tensor(B @ B.transpose(0, 2, 1) / m + np.eye(m), dtype=torch.float64)


def test_values_are_the_quadratic_forms_and_log_determinant() -> None:
    rng = np.random.default_rng(0)
    K = _spd_batch(rng, 2, 7)
    W = torch.as_tensor(rng.standard_normal((2, 7, 3)), dtype=torch.float64)
    S, log_det, L, A = quadratic_forms(K, W)
    expected = W.transpose(1, 2) @ torch.linalg.solve(K, W)
    np.testing.assert_allclose(S.numpy(), expected.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(log_det.numpy(), torch.logdet(K).numpy(), rtol=1e-12)
    np.testing.assert_allclose((L @ A).numpy(), W.numpy(), atol=1e-12)


def test_the_analytic_gradient_passes_gradcheck() -> None:
    """Finite differences of ``S`` and ``log|K|`` through a symmetric ``K(theta)``, as the
    tree GP builds it (only the symmetric part of ``dl/dK`` is returned)."""
    rng = np.random.default_rng(1)
    base = _spd_batch(rng, 2, 5)
    direction = torch.as_tensor(rng.standard_normal((2, 5, 5)), dtype=torch.float64)
    W0 = torch.as_tensor(rng.standard_normal((2, 5, 3)), dtype=torch.float64)

    def forms(theta: torch.Tensor, W: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        step = theta * direction
        S, log_det, _, _ = quadratic_forms(base + 0.1 * (step + step.transpose(1, 2)), W)
        return S, log_det

    theta = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
    W = W0.clone().requires_grad_(True)
    assert torch.autograd.gradcheck(forms, (theta, W))


def _large_leaf_data(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, FeatureSpec]:
    """Two paths under a binary root; path 0 gets ``n`` rows, path 1 a few."""
    rng = np.random.default_rng(2)
    sizes = [n, 12]
    X = np.zeros((sum(sizes), 4))
    active = np.zeros_like(X, dtype=bool)
    start = 0
    for path, size in enumerate(sizes):
        rows = slice(start, start + size)
        X[rows, 0] = path
        X[rows, 1] = rng.random(size)
        X[rows, 2 + path] = rng.random(size)
        active[rows, [0, 1, 2 + path]] = True
        start += size
    y = np.sin(4 * X[:, 1]) + X[:, 2] ** 2 - X[:, 3] + 0.05 * rng.standard_normal(len(X))
    return X, active, y, FeatureSpec(np.array([2, 0, 0, 0]))


def _value_and_gradient(
    log_posterior: Callable[[dict[str, torch.Tensor]], torch.Tensor],
    params: dict[str, torch.Tensor],
    seed: int,
) -> Callable[[], tuple[float, list[np.ndarray]]]:
    """A function giving ``log_posterior`` and its gradient at ``params`` moved by a fixed
    random step (away from the fitted optimum, where the gradient is about 0)."""
    rng = np.random.default_rng(seed)
    shifted = {
        k: v + 0.2 * torch.as_tensor(rng.standard_normal(v.shape)) for k, v in params.items()
    }

    def evaluate() -> tuple[float, list[np.ndarray]]:
        moved = {k: v.clone().requires_grad_(True) for k, v in shifted.items()}
        value = log_posterior(moved)
        gradient = torch.autograd.grad(value, list(moved.values()))
        return value.item(), [g.numpy() for g in gradient]

    return evaluate


def _assert_same(
    first: tuple[float, list[np.ndarray]], second: tuple[float, list[np.ndarray]]
) -> None:
    assert first[0] == pytest.approx(second[0], rel=1e-10)
    for a, b in zip(first[1], second[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("options", [{}, {"signal_variance": "leaf"}], ids=["default", "leaf"])
def test_a_large_leaf_gives_the_value_and_gradient_of_the_batched_path(
    monkeypatch: pytest.MonkeyPatch, options: dict
) -> None:
    """A leaf of ``ANALYTIC_GRADIENT_ROWS`` rows or more (alone, analytic gradient) and the same
    leaf in the batched autograd path give one log posterior and one gradient."""
    X, active, y, features = _large_leaf_data(posterior.ANALYTIC_GRADIENT_ROWS + 4)
    model = TreeGP(seed=0, max_iter=5, **options).fit(X, active, y, features)
    assert (
        max(bucket.rows.shape[1] for bucket in model.buckets_) >= posterior.ANALYTIC_GRADIENT_ROWS
    )
    value_and_gradient = _value_and_gradient(model._log_posterior, model.params_, seed=3)
    analytic = value_and_gradient()
    monkeypatch.setattr(posterior, "ANALYTIC_GRADIENT_ROWS", 10**9)
    model.buckets_ = model._buckets()
    _assert_same(analytic, value_and_gradient())


@pytest.mark.parametrize(
    ("kernel", "mean"), [("arc", "sample"), ("arc", "gls"), ("matern", "gls")]
)
def test_an_exact_gp_of_many_rows_gives_the_value_and_gradient_of_autograd(
    monkeypatch: pytest.MonkeyPatch, kernel: str, mean: str
) -> None:
    """From ``ANALYTIC_GRADIENT_ROWS`` rows the exact GP's log posterior takes the analytic
    gradient (with the GLS mean as a profile over ``beta``): the value and gradient of the
    autograd path."""
    X, active, y, features = _large_leaf_data(ANALYTIC_GRADIENT_ROWS)
    model = ExactGP(kernel=kernel, mean=mean, seed=0, max_iter=5).fit(X, active, y, features)
    value_and_gradient = _value_and_gradient(
        lambda params: model._log_posterior(params)[0], model.params_, seed=4
    )
    analytic = value_and_gradient()
    monkeypatch.setattr(exact, "ANALYTIC_GRADIENT_ROWS", 10**9)
    _assert_same(analytic, value_and_gradient())
