"""The branching-and-nested kernel (Zhang et al., eq. 4-5, Definition 1, Theorem 1).

Positive definiteness is checked on random designs with the hyperparameters exactly at the
boundary of the (generalised) Theorem 1 condition and near it; a hand-built kernel just below
the boundary shows that the check can fail, i.e. that the boundary is where it matters.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from condsamplers.kernels import BranchingNestedKernel
from condsamplers.models.gp import ExactGP
from condsamplers.space import FeatureSpec

# Columns: 0 numerical root (w); 1 categorical root branching z (3 levels);
# 2 numerical nested in z in {0, 1}; 3 categorical (4 levels) nested in z = 1;
# 4 categorical (2 levels) nested in z = 2 and itself branching; 5 numerical nested in col 4 = 1;
# 6 categorical (3 levels) nested in col 4 in {0, 1}; 7 categorical root, not branching.
N_CATEGORIES = np.array([0, 3, 0, 4, 2, 0, 3, 2])
PARENTS = (-1, -1, 1, 1, 1, 4, 4, -1)
BRANCH_VALUES = ((), (), (0.0, 1.0), (1.0,), (2.0,), (1.0,), (0.0, 1.0), ())
TREE = FeatureSpec(N_CATEGORIES, parents=PARENTS, branch_values=BRANCH_VALUES)


def random_design(n: int, rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Points of the tree above: values drawn per column, activity from the parent's value."""
    X = np.zeros((n, len(N_CATEGORIES)))
    active = np.zeros_like(X, dtype=bool)
    for j, (k, p) in enumerate(zip(N_CATEGORIES, PARENTS, strict=True)):
        values = rng.integers(k, size=n) if k else rng.random(n)
        on = np.ones(n, dtype=bool) if p < 0 else active[:, p] & np.isin(X[:, p], BRANCH_VALUES[j])
        X[:, j] = np.where(on, values, 0.0)
        active[:, j] = on
    return torch.as_tensor(X), torch.as_tensor(active)


def kernel_params(kernel: BranchingNestedKernel, rng: np.random.Generator, slack: float) -> dict:
    params = kernel.initial_params(TREE)
    params["log_omega"] = torch.as_tensor(rng.uniform(-1, 2, params["log_omega"].shape))
    params["log_phi"] = torch.as_tensor(rng.uniform(-3, 3, params["log_phi"].shape))
    params["log_gamma"] = torch.as_tensor(rng.uniform(-3, 3, params["log_gamma"].shape))
    layout = kernel.layout(TREE)
    for z in layout.children:
        params["log_gamma"][layout.gamma_slot[z]] = slack
    return params


@pytest.mark.parametrize("slack", [-60.0, -8.0, -2.0], ids=["boundary", "1e-4", "0.14"])
@pytest.mark.parametrize("seed", range(5))
def test_kernel_is_positive_definite_at_and_near_the_theorem_1_boundary(
    seed: int, slack: float
) -> None:
    rng = np.random.default_rng(seed)
    kernel = BranchingNestedKernel()
    X, active = random_design(80, rng)
    # duplicates of levels are the hard case for qualitative variables: add exact repeats
    X, active = torch.cat([X, X[:10]]), torch.cat([active, active[:10]])
    params = kernel_params(kernel, rng, slack)
    R = kernel.correlation(X, active, X, active, params, TREE)
    torch.testing.assert_close(R, R.T)
    torch.testing.assert_close(torch.diagonal(R), torch.ones(len(X), dtype=torch.float64))
    assert torch.linalg.eigvalsh(R).min() > -1e-10


def off_the_tree(
    X: torch.Tensor, active: torch.Tensor, rng: np.random.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """A quarter of the nested entries flipped: expected columns left out (a trial that has
    not suggested them yet) and unexpected ones given a value."""
    X, active = X.numpy().copy(), active.numpy().copy()
    flip = rng.random(active.shape) < 0.25
    flip[:, [j for j, p in enumerate(PARENTS) if p < 0]] = False
    active ^= flip
    for j, k in enumerate(N_CATEGORIES):
        value = rng.integers(k, size=len(X)) if k else rng.random(len(X))
        X[:, j] = np.where(active[:, j], np.where(flip[:, j], value, X[:, j]), 0.0)
    return torch.as_tensor(X), torch.as_tensor(active)


@pytest.mark.parametrize("slack", [-60.0, -2.0], ids=["boundary", "0.14"])
@pytest.mark.parametrize("seed", range(5))
def test_kernel_is_positive_definite_on_points_off_the_tree(seed: int, slack: float) -> None:
    """Partial points (pending trials) and points against the tree keep R positive
    definite; the kernel used to reach eigenvalues of -1 on such designs."""
    rng = np.random.default_rng(seed)
    kernel = BranchingNestedKernel()
    X, active = off_the_tree(*random_design(80, rng), rng)
    X, active = torch.cat([X, X[:10]]), torch.cat([active, active[:10]])
    R = kernel.correlation(X, active, X, active, kernel_params(kernel, rng, slack), TREE)
    torch.testing.assert_close(R, R.T)
    assert torch.linalg.eigvalsh(R).min() > -1e-10


def test_an_unknown_qualitative_value_correlates_as_the_mean_over_its_levels() -> None:
    """z in {0, 1}; v (3 levels) nested in z = 0. A point with z = 0 and v not yet set."""
    features = FeatureSpec(np.array([2, 3]), parents=(-1, 0), branch_values=((), (0.0,)))
    kernel = BranchingNestedKernel()
    params = kernel.initial_params(features)
    params["log_phi"] = torch.tensor([0.7], dtype=torch.float64)
    levels = torch.tensor([[0.0, 0.0], [0.0, 1.0], [0.0, 2.0]], dtype=torch.float64)
    unknown = torch.tensor([[0.0, 0.0]], dtype=torch.float64)
    on = torch.ones_like(levels, dtype=torch.bool)
    partial = torch.tensor([[True, False]])
    to_levels = kernel.correlation(unknown, partial, levels, on, params, features)
    to_each_other = kernel.correlation(levels, on, levels, on, params, features)
    torch.testing.assert_close(to_levels[0], to_each_other.mean(dim=0))
    itself = kernel.correlation(unknown, partial, unknown, partial, params, features)
    assert float(itself) == 1.0


def test_a_gamma_below_the_theorem_1_bound_can_break_positive_definiteness() -> None:
    """One qualitative nested variable with g = 3 levels under both values of z: the block
    is ``a J + (1 - a) I`` with ``a = exp(-phi)``, the cross-block correlation is
    ``exp(-gamma)``. Theorem 1: PD iff ``exp(-gamma) <= a + (1 - a) / g``."""
    g, phi = 3, 2.0
    a = math.exp(-phi)
    bound = -math.log(a + (1 - a) / g)
    levels = np.repeat(np.arange(g), 1)
    block = np.where(levels[:, None] == levels[None, :], 1.0, a)

    def min_eigenvalue(gamma: float) -> float:
        R = np.block(
            [
                [block, np.full_like(block, math.exp(-gamma))],
                [np.full_like(block, math.exp(-gamma)), block],
            ]
        )
        return float(np.linalg.eigvalsh(R).min())

    assert min_eigenvalue(bound) > -1e-12
    assert min_eigenvalue(0.8 * bound) < -1e-3

    kernel = BranchingNestedKernel()
    features = FeatureSpec(np.array([2, 3]), parents=(-1, 0), branch_values=((), (0.0, 1.0)))
    params = kernel.initial_params(features)
    params["log_phi"] = torch.full((2,), math.log(phi), dtype=torch.float64)
    params["log_gamma"] = torch.tensor([-60.0], dtype=torch.float64)
    gamma = kernel.gammas(params, features)[0]
    assert float(gamma) == pytest.approx(bound, rel=1e-9)


def test_kernel_is_the_papers_on_the_two_level_example() -> None:
    """Eq. 4-5 and Definition 1 written out for w = (x1, x2), z in {0, 1}, v nested."""
    features = FeatureSpec(
        np.array([0, 0, 2, 0]), parents=(-1, -1, -1, 2), branch_values=((), (), (), (0.0, 1.0))
    )
    kernel = BranchingNestedKernel()
    rng = np.random.default_rng(0)
    X = torch.as_tensor(
        np.column_stack([rng.random(12), rng.random(12), rng.integers(2, size=12), rng.random(12)])
    )
    active = torch.ones_like(X, dtype=torch.bool)
    params = kernel.initial_params(features)
    params["log_omega"] = torch.tensor([0.3, -0.2], dtype=torch.float64)
    params["log_phi"] = torch.tensor([0.5, -1.0], dtype=torch.float64)
    params["log_gamma"] = torch.tensor([0.1], dtype=torch.float64)
    R = kernel.correlation(X, active, X, active, params, features).numpy()

    omega, phi = np.exp([0.3, -0.2]), np.exp([0.5, -1.0])
    gamma = max(phi) + math.exp(0.1)
    x = X.numpy()
    for i in range(12):
        for k in range(12):
            r = math.sqrt(sum((omega[c] * (x[i, c] - x[k, c])) ** 2 for c in range(2)))
            matern = (1 + math.sqrt(5) * r + 5 / 3 * r**2) * math.exp(-math.sqrt(5) * r)
            if x[i, 2] != x[k, 2]:
                nested = math.exp(-gamma)
            else:
                nested = math.exp(-phi[int(x[i, 2])] * abs(x[i, 3] - x[k, 3]))
            assert R[i, k] == pytest.approx(matern * nested, rel=1e-12)


def test_exact_gp_with_the_bn_kernel_learns_a_branch_dependent_nested_effect() -> None:
    """v matters under z = 0 only; the GP fits that and predicts held-out points."""
    features = FeatureSpec(
        np.array([0, 2, 0]), parents=(-1, -1, 1), branch_values=((), (), (0.0, 1.0))
    )
    rng = np.random.default_rng(1)

    def sample(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        X = np.column_stack([rng.random(n), rng.integers(2, size=n), rng.random(n)])
        y = np.sin(4 * X[:, 0]) + np.where(X[:, 1] == 0, 2 * (X[:, 2] - 0.5) ** 2, 0.5)
        return X, np.ones_like(X, dtype=bool), y

    X, active, y = sample(60)
    X_test, active_test, y_test = sample(40)
    model = ExactGP(kernel="bn", seed=0).fit(X, active, y, features)
    mean, var = model.predict(X_test, active_test)
    assert np.mean((mean - y_test) ** 2) < 0.05 * np.var(y_test)
    assert np.all(var > 0)


def test_kernel_does_not_depend_on_the_column_order() -> None:
    """A regressor's columns come in the user's order, a nested column before its parent
    (this raised a KeyError): the kernel of permuted columns is the same matrix."""
    rng = np.random.default_rng(3)
    kernel = BranchingNestedKernel()
    X, active = random_design(30, rng)
    params = kernel_params(kernel, rng, slack=-1.0)
    R = kernel.correlation(X, active, X, active, params, TREE)
    order = np.array([5, 6, 2, 3, 4, 0, 7, 1])  # every nested column before its parent
    where = np.argsort(order)
    permuted = FeatureSpec(
        N_CATEGORIES[order],
        parents=tuple(-1 if PARENTS[j] < 0 else int(where[PARENTS[j]]) for j in order),
        branch_values=tuple(BRANCH_VALUES[j] for j in order),
    )
    # the same parameters, in the permuted layout's slots
    layout, permuted_layout = kernel.layout(TREE), BranchingNestedKernel().layout(permuted)
    moved = {key: value.clone() for key, value in params.items()}
    for j, k in layout.gamma_slot.items():
        moved["log_gamma"][permuted_layout.gamma_slot[int(where[j])]] = params["log_gamma"][k]
    for j, k in layout.phi_slot.items():
        n_values = max(1, len(BRANCH_VALUES[j]))
        slot = permuted_layout.phi_slot[int(where[j])]
        moved["log_phi"][slot : slot + n_values] = params["log_phi"][k : k + n_values]
    omega_of = dict(zip(layout.root_numerical, params["log_omega"], strict=True))
    moved["log_omega"] = torch.stack(
        [omega_of[int(order[j])] for j in permuted_layout.root_numerical]
    )
    X_p, active_p = X[:, order], active[:, order]
    R_p = BranchingNestedKernel().correlation(X_p, active_p, X_p, active_p, moved, permuted)
    torch.testing.assert_close(R_p, R)
