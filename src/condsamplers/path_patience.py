"""Path patience: a path that has had ``patience`` trials since the best value last improved
sits out the search until the best value improves again.

On quantised, noisy objectives such as CV scores, EI can keep proposing on the path of the
incumbent long after the path stopped paying: on CASH wine (CondBayesSearchCV, random_state 1) the
16 candidates after a gradient-boosting dict reached 0.972 all went to that dict, six of them tying
0.972, while other dicts reach 0.994. The rule is the failure counter of a trust region (TuRBO,
Eriksson et al. 2019, sec. 2: after ``tau_fail`` consecutive failures the region shrinks, and at
its smallest a new one starts elsewhere), kept per path: with the observations in the order they
were evaluated and ``y`` minimised,

    t*   = the last row i with y_i < min_{j < i} y_j     (the last improvement; row 0 counts)
    n_p  = #{i > t* : row i lies on path p}
    path p sits out while n_p >= patience                                               (1)

A new best anywhere resets every count; a path that sits out comes back then. Every path is
kept where (1) would leave none.
"""

from __future__ import annotations

import numpy as np

from condsamplers.space import ConditionalSpace, Path


def on_path(space: ConditionalSpace, path: Path, X: np.ndarray, active: np.ndarray) -> np.ndarray:
    """Which rows of the encoded ``X`` / ``active`` lie on ``path``: the same active
    parameters, and each branching parameter at one of the path's values."""
    rows = (active == space.path_pattern(path)).all(axis=1)
    for key, values in path.branch_values:
        j = space.index[key]
        internal = space.nodes[j].from_unit(X[:, j])
        rows &= np.isclose(internal[:, None], np.asarray(values)[None, :]).any(axis=1)
    return rows


def last_improvement(y: np.ndarray) -> int:
    """The index ``t*`` of eq. (1): the last row whose value is below every earlier one."""
    running = np.minimum.accumulate(y)
    improved = np.ones(len(y), dtype=bool)
    improved[1:] = y[1:] < running[:-1]
    return int(np.flatnonzero(improved)[-1])


def paths_out_of_patience(
    space: ConditionalSpace,
    paths: list[Path],
    X: np.ndarray,
    active: np.ndarray,
    y: np.ndarray,
    patience: int,
) -> list[Path]:
    """The ``paths`` that sit out by eq. (1) (none where that would be all of them). ``X``,
    ``active``, ``y``: the encoded observations in the order they were evaluated, ``y`` to be
    minimised."""
    if len(y) == 0:
        return []
    since = last_improvement(y) + 1
    X, active = X[since:], active[since:]
    out = [p for p in paths if on_path(space, p, X, active).sum() >= patience]
    return out if len(out) < len(paths) else []
