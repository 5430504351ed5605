"""Maximise an acquisition function over a conditional space.

1. For each path of the tree (every group of branch values, untried ones included), draw
   quasi-uniform candidates whose branch values follow the path; add the caller's start points
   (e.g. the best observed configurations).
2. Take the best candidate of each of the ``n_local_search`` best paths and improve it by
   L-BFGS-B on its active numerical columns (branch values and categoricals fixed; integers
   relaxed, then rounded back onto their grid).
3. Sweep the non-branching categorical columns of the winner one at a time.
Returns the candidates ranked by acquisition value, best first, so that a caller can skip one
that duplicates an existing trial.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.optimize
import torch

from condsamplers.acquisition import Acquisition
from condsamplers.space import ConditionalSpace


@dataclasses.dataclass(frozen=True)
class OptimizerSettings:
    """Budget of the acquisition optimisation.

    Attributes:
        n_candidates: quasi-random candidates in total, spread over the paths.
        min_candidates_per_path: floor on the candidates of each path.
        n_local_search: starts of the gradient-based local search.
        local_search_max_iter: L-BFGS-B iterations of the (joint) local search.
    """

    n_candidates: int = 1024
    min_candidates_per_path: int = 16
    n_local_search: int = 5
    local_search_max_iter: int = 100


def round_to_grid(space: ConditionalSpace, X: np.ndarray) -> np.ndarray:
    """Snap discrete (int, stepped float, categorical) columns onto their grid."""
    X = X.copy()
    for j, node in enumerate(space.nodes):
        if node.is_discrete or node.is_categorical:
            X[:, j] = node.to_unit(node.from_unit(X[:, j]))
    return X


def _evaluate(acquisition: Acquisition, X: np.ndarray, active: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        values = acquisition(torch.as_tensor(X), torch.as_tensor(active))
    values = values.numpy().astype(float)
    values[~np.isfinite(values)] = -np.inf
    return values


def _candidates(
    space: ConditionalSpace, rng: np.random.Generator, settings: OptimizerSettings
) -> tuple[np.ndarray, np.ndarray]:
    paths = space.paths()
    if not paths:
        return space.sample(settings.n_candidates, rng)
    per_path = max(settings.n_candidates // len(paths), settings.min_candidates_per_path)
    samples = [space.sample(per_path, rng, path) for path in paths]
    return np.concatenate([s[0] for s in samples]), np.concatenate([s[1] for s in samples])


def _path_keys(space: ConditionalSpace, X: np.ndarray, active: np.ndarray) -> list[bytes]:
    branching = [space.index[n.key] for n in space.branching_nodes()]
    keys = np.concatenate([active, np.where(active[:, branching], X[:, branching], -1)], axis=1)
    return [row.tobytes() for row in keys]


def _best_per_path(
    space: ConditionalSpace, X: np.ndarray, active: np.ndarray, values: np.ndarray, k: int
) -> np.ndarray:
    """Indices of the best candidate of each of the ``k`` best paths."""
    keys = _path_keys(space, X, active)
    chosen: dict[bytes, int] = {}
    for i in np.argsort(-values, kind="stable"):
        chosen.setdefault(keys[i], int(i))
        if len(chosen) == k:
            break
    return np.array(list(chosen.values()), dtype=int)


def _free_columns(space: ConditionalSpace, active: np.ndarray) -> np.ndarray:
    branching = {n.key for n in space.branching_nodes()}
    numerical = np.array(
        [not n.is_categorical and n.key not in branching for n in space.nodes], dtype=bool
    )
    return active & numerical[None, :]


def local_search(
    acquisition: Acquisition,
    space: ConditionalSpace,
    X0: np.ndarray,
    active: np.ndarray,
    max_iter: int,
) -> np.ndarray:
    """Jointly improve the rows of ``X0`` by L-BFGS-B on their free numerical columns.

    The rows are independent, so maximising the sum of their acquisition values maximises each.
    """
    free = _free_columns(space, active)
    if not free.any():
        return X0
    base = torch.as_tensor(X0)
    active_t = torch.as_tensor(active)
    free_t = torch.as_tensor(free)

    def negative_sum(flat: np.ndarray) -> tuple[float, np.ndarray]:
        v = torch.tensor(flat, requires_grad=True)
        X = base.clone()
        X[free_t] = v
        values = acquisition(X, active_t)
        total = -values.clamp_min(-1e4).sum()
        total.backward()
        grad = v.grad.numpy()  # type: ignore[union-attr]
        if not np.isfinite(total.item()) or not np.all(np.isfinite(grad)):
            return 1e10, np.zeros_like(flat)
        return total.item(), grad

    x0 = X0[free]
    result = scipy.optimize.minimize(
        negative_sum,
        x0,
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, 1.0)] * len(x0),
        options={"maxiter": max_iter},
    )
    X = X0.copy()
    X[free] = result.x
    return X


def _sweep_categoricals(
    acquisition: Acquisition,
    space: ConditionalSpace,
    x: np.ndarray,
    active: np.ndarray,
    value: float,
) -> tuple[np.ndarray, float]:
    branching = {n.key for n in space.branching_nodes()}
    for j, node in enumerate(space.nodes):
        if not (node.is_categorical and active[j]) or node.key in branching:
            continue
        options = np.repeat(x[None, :], int(space.features.n_categories[j]), axis=0)
        options[:, j] = np.arange(len(options))
        values = _evaluate(acquisition, options, np.repeat(active[None, :], len(options), 0))
        best = int(np.argmax(values))
        if values[best] > value:
            x, value = options[best], float(values[best])
    return x, value


def maximize_acquisition(
    acquisition: Acquisition,
    space: ConditionalSpace,
    rng: np.random.Generator,
    settings: OptimizerSettings = OptimizerSettings(),
    X_start: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Candidates ``(X, active, values)`` sorted by acquisition value, best first."""
    X, active = _candidates(space, rng, settings)
    if X_start is not None and len(X_start):
        X = np.concatenate([X, X_start])
        active = np.concatenate([active, space.active_mask(X_start)])
    X = round_to_grid(space, X)
    X[~active] = 0.0
    values = _evaluate(acquisition, X, active)

    starts = _best_per_path(space, X, active, values, settings.n_local_search)
    improved = local_search(
        acquisition, space, X[starts], active[starts], settings.local_search_max_iter
    )
    improved = round_to_grid(space, improved)
    improved_values = _evaluate(acquisition, improved, active[starts])

    X = np.concatenate([improved, X])
    active = np.concatenate([active[starts], active])
    values = np.concatenate([improved_values, values])
    order = np.argsort(-values, kind="stable")
    X, active, values = X[order], active[order], values[order]
    X[0], values[0] = _sweep_categoricals(acquisition, space, X[0], active[0], values[0])
    return X, active, values
