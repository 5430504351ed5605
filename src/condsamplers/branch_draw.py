"""A Thompson draw of the branch at branching parameters with three or more branches.

The two-step search (Jenatton et al. 2017, sec. 3.2) chooses a path by its path EI. Where a
parameter selects among many branches (an estimator family, a preprocessing), each branch
holds a few trials and the model judges it by their level: one poor first trial writes a
branch off (docs/benchmarks.md, the CASH section). Before the path EI, each such parameter
takes one group of its values by Bernoulli Thompson sampling (Thompson 1933; Russo et al.
2018, sec. 3) on how often a branch holds one of the *good* trials:

    theta_g ~ Beta(1 + good_g, 1 + other_g),      g* = argmax_g theta_g

``good_g`` counts the feasible trials of branch ``g`` among the best ``ceil(0.1 n)`` (at least
1, at most 25: the split of Optuna's TPE, Watanabe 2023, sec. 3.2) and ``other_g`` the rest of
its trials; a nested parameter counts only the trials where it is active. The path EI then
chooses among the paths of the drawn branches. A branch with few trials keeps a wide draw, so
it is tried again; a branch that holds the good trials is drawn most of the time.

Parameters with two branches are left to the path EI (and the generator is not drawn from):
on two branches each holds about half of the trials, which the model tells apart, and there a
draw cost the synthetic figures (docs/benchmarks_history.md, issue 24, tenth session).
"""

from __future__ import annotations

import math

import numpy as np

from condsamplers.space import ConditionalSpace, ParamNode, Path

#: Share of the feasible trials that count as good (Optuna TPE's default split).
GOOD_FRACTION = 0.1
#: Most good trials (Optuna TPE's default split).
MAX_GOOD = 25
#: Fewest branches of a parameter whose branch is drawn.
MIN_BRANCHES = 3


def good_trials(y: np.ndarray) -> np.ndarray:
    """Which of ``y`` (to be minimised) are the best ``ceil(GOOD_FRACTION n)``, at least 1 and
    at most ``MAX_GOOD`` of them; ties are broken by position."""
    n = len(y)
    n_good = max(1, min(math.ceil(GOOD_FRACTION * n), MAX_GOOD))
    good = np.zeros(n, dtype=bool)
    good[np.argsort(y, kind="stable")[:n_good]] = True
    return good


def draw_branches(
    space: ConditionalSpace,
    X: np.ndarray,
    active: np.ndarray,
    y: np.ndarray,
    paths: list[Path],
    rng: np.random.Generator,
) -> list[Path]:
    """The ``paths`` of the branches drawn at each branching parameter with ``MIN_BRANCHES`` or
    more groups of values (module docstring), parents first. ``X``, ``active``, ``y``: the
    encoded feasible trials, ``y`` to be minimised. A parameter on none of the paths left, or
    never active, is skipped; a drawn branch none of whose paths is left gives way to the next
    highest draw."""
    if len(y) == 0:
        return paths
    good = good_trials(y)
    kept = paths
    for node in space.branching_nodes():
        groups = space.branch_groups(node)
        if len(groups) < MIN_BRANCHES or not any(_on_path(p, node) for p in kept):
            continue
        member = _membership(space, node, groups, X, active)
        if not member.any():
            continue
        draws = rng.beta(1.0 + (member & good).sum(axis=1), 1.0 + (member & ~good).sum(axis=1))
        for g in np.argsort(-draws, kind="stable"):
            narrowed = [p for p in kept if _keeps(p, node, groups[g])]
            if narrowed:
                kept = narrowed
                break
    return kept


def _on_path(path: Path, node: ParamNode) -> bool:
    return any(key == node.key for key, _ in path.branch_values)


def _membership(
    space: ConditionalSpace,
    node: ParamNode,
    groups: list[tuple[float, ...]],
    X: np.ndarray,
    active: np.ndarray,
) -> np.ndarray:
    """``(groups, trials)``: whether each trial has ``node`` active with a value of the group."""
    j = space.index[node.key]
    internal = node.from_unit(X[:, j])
    return np.stack([_isin(internal, values) & active[:, j] for values in groups])


def _keeps(path: Path, node: ParamNode, values: tuple[float, ...]) -> bool:
    """Whether ``path`` is off ``node`` or takes only ``values`` there."""
    on = dict(path.branch_values).get(node.key)
    return on is None or bool(_isin(np.asarray(on, dtype=float), values).all())


def _isin(internal: np.ndarray, values: tuple[float, ...]) -> np.ndarray:
    return np.isclose(internal[:, None], np.asarray(values, dtype=float)[None, :]).any(axis=1)
