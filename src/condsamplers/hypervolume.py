"""Pareto fronts, hypervolumes and the boxes of the region a new point can improve, for any
number of objectives, all minimised.

The non-dominated region below a reference point ``r`` (the points that no front point
dominates) is cut into axis-aligned boxes: the grid of the front's coordinates splits it into
cells, a cell is non-dominated when no front point is below its lower corner, and in each
column of cells along the last objective the non-dominated ones are a run from ``-inf`` up,
merged into one box. The hypervolume improvement of a point ``f`` is then
``HVI(f) = sum_boxes prod_j max(0, u_j - max(l_j, f_j))`` (Yang et al. 2019, eq. 3; Daulton et
al. 2020, eq. 1), what :func:`condsamplers.acquisition.make_log_ehvi` averages over posterior
samples. At most ``(n + 1) ** (k - 1)`` boxes for ``n`` front points and ``k`` objectives.
"""

from __future__ import annotations

import itertools

import numpy as np


def pareto_mask(Y: np.ndarray) -> np.ndarray:
    """Rows of ``Y`` (``(n, k)``, minimised) that no other row dominates (a row equal to an
    earlier one is dropped, so each point of the front appears once)."""
    Y = np.asarray(Y, dtype=float)
    keep = np.ones(len(Y), dtype=bool)
    for i in range(len(Y)):
        others = np.delete(np.arange(len(Y)), i)
        dominated = np.all(Y[others] <= Y[i], axis=1) & np.any(Y[others] < Y[i], axis=1)
        same_before = np.all(Y[:i] == Y[i], axis=1)
        keep[i] = not dominated.any() and not same_before.any()
    return keep


def reference_point(Y: np.ndarray) -> np.ndarray:
    """A reference point beyond every observation: the worst value of each objective pushed
    out by a tenth of its range (of its magnitude when the range is 0), as Optuna's
    ``GPSampler`` does for its hypervolume."""
    Y = np.asarray(Y, dtype=float)
    worst, best = Y.max(axis=0), Y.min(axis=0)
    spread = np.where(worst > best, worst - best, np.maximum(np.abs(worst), 1.0))
    return worst + 0.1 * spread


def non_dominated_boxes(front: np.ndarray, ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper corners ``(m, k)`` of boxes that tile the region below ``ref`` that no
    point of ``front`` (``(n, k)``, minimised, each below ``ref``) dominates; the lower
    corners of the first cells are ``-inf``."""
    front = np.asarray(front, dtype=float).reshape(-1, len(ref))
    k = len(ref)
    edges = [np.concatenate([[-np.inf], np.unique(front[:, j]), [ref[j]]]) for j in range(k)]
    lowers, uppers = [], []
    for cell in itertools.product(*(range(len(e) - 1) for e in edges[:-1])):
        lower = np.array([edges[j][c] for j, c in enumerate(cell)])
        below = np.all(front[:, :-1] <= lower, axis=1)  # front points whose column it is in
        # The run of non-dominated cells ends at the lowest last coordinate of those points.
        top = ref[-1] if not below.any() else min(ref[-1], front[below, -1].min())
        uppers.append([*(edges[j][c + 1] for j, c in enumerate(cell)), top])
        lowers.append([*lower, -np.inf])
    if not lowers:
        return np.empty((0, k)), np.empty((0, k))
    return np.array(lowers), np.array(uppers)


def hypervolume(front: np.ndarray, ref: np.ndarray) -> float:
    """The volume dominated by ``front`` below ``ref`` (points not below ``ref`` add nothing),
    as the volume of the box from the front's lower bounds minus the non-dominated boxes."""
    front = np.asarray(front, dtype=float).reshape(-1, len(ref))
    front = front[np.all(front < ref, axis=1)]
    if len(front) == 0:
        return 0.0
    low = front.min(axis=0)
    lowers, uppers = non_dominated_boxes(front[pareto_mask(front)], ref)
    free = np.prod(np.clip(uppers - np.maximum(lowers, low), 0.0, None), axis=1).sum()
    return float(np.prod(ref - low) - free)


def hypervolume_improvement(
    points: np.ndarray, lowers: np.ndarray, uppers: np.ndarray
) -> np.ndarray:
    """``HVI`` of each row of ``points`` over the front whose non-dominated boxes are
    ``(lowers, uppers)``: the volume of the boxes' parts that the point dominates."""
    points = np.asarray(points, dtype=float)
    sides = uppers[None] - np.maximum(lowers[None], points[:, None])
    return np.prod(np.clip(sides, 0.0, None), axis=2).sum(axis=1)
