"""A Thompson draw of the branch at branching parameters with three or more branches.

The two-step search (Jenatton et al. 2017, sec. 3.2) chooses a path by its path EI. Where a
parameter selects among many branches (an estimator family, a preprocessing), each branch holds a
few trials and the model judges it by their level: one poor first trial writes a branch off (seen
on the CASH tasks of ``benchmarks/hpo``). Before the path EI, each such parameter takes one group
of its values by Bernoulli Thompson sampling (Thompson 1933; Russo et al. 2018, sec. 3) on how
often a branch holds one of the *good* trials:

    theta_g ~ Beta(1 + good_g, 1 + other_g),      g* = argmax_g theta_g           (1)

The parameters are drawn one after another, as a chain: the root ones with the most branches
first (the estimator family, then the preprocessing), then the nested ones, parents first.
Each counts only the trials that *agree* with the branches drawn before it (a trial where an
earlier parameter is inactive agrees), so the preprocessing of an SVC is judged on the SVCs'
trials and an SVC's kernel on the SVCs with that preprocessing. Among those trials ``good_g``
counts branch ``g``'s among the best ``ceil(0.1 m)`` of the ``m`` counted ones (at least 1, at
most 25: the split of Optuna's TPE, Watanabe 2023, sec. 3.2), ``other_g`` the rest of its
trials. A branch whose values activate a nested parameter with three or more branches is judged
at its best nested branch, on its own trials:

    theta_g = max_h theta_gh,      theta_gh ~ Beta(1 + good_gh, 1 + other_gh)       (2)

so a family is not written off for its poor kernels (an SVC with a sigmoid kernel) while its
good one is barely tried. The path EI then chooses among the paths of the drawn branches.
(:mod:`condsamplers.branch_tpe` chooses the branches by TPE's rule instead, with
``TreeGPSampler(branch_draw="tpe")``.) A
branch with few trials keeps a wide draw, so it is tried again; a branch that holds the good
trials is drawn most of the time.

Parameters with two branches are left to the path EI (and the generator is not drawn from):
on two branches each holds about half of the trials, which the model tells apart, and there a
draw costs regret: on ``branching_nested`` the draws keep sending trials to one branch while
the other still needs refining.
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
    more groups of values (module docstring), in :func:`draw_order`. ``X``, ``active``, ``y``:
    the encoded feasible trials, ``y`` to be minimised. A parameter on none of the paths left,
    or active in none of the trials that agree with the branches drawn so far, is skipped; a
    drawn branch none of whose paths is left gives way to the next highest draw."""
    if len(y) == 0:
        return paths
    kept = paths
    agree = np.ones(len(y), dtype=bool)
    for node in draw_order(space):
        groups = space.branch_groups(node)
        if len(groups) < MIN_BRANCHES or not any(on_path(p, node) for p in kept):
            continue
        member = membership(space, node, groups, X, active) & agree
        if not member.any():
            continue
        counted = member.any(axis=0)
        good = np.zeros(len(y), dtype=bool)
        good[np.flatnonzero(counted)] = good_trials(y[counted])
        draws = _branch_draws(space, node, groups, X, active, member, good, rng)
        for g in np.argsort(-draws, kind="stable"):
            narrowed = [p for p in kept if keeps(p, node, groups[g])]
            if narrowed:
                kept = narrowed
                agree &= member[g] | ~active[:, space.index[node.key]]
                break
    return kept


def draw_order(space: ConditionalSpace) -> list[ParamNode]:
    """The branching parameters in the order of the draw: the root ones with the most branches
    first (an estimator family before a preprocessing), then the nested ones, parents first."""
    nodes = space.branching_nodes()
    roots = [n for n in nodes if n.condition is None]
    roots.sort(key=lambda n: -len(space.branch_groups(n)))
    return roots + [n for n in nodes if n.condition is not None]


def _branch_draws(
    space: ConditionalSpace,
    node: ParamNode,
    groups: list[tuple[float, ...]],
    X: np.ndarray,
    active: np.ndarray,
    member: np.ndarray,
    good: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """One draw per branch of ``node`` (eq. 1); a branch whose values activate a branching
    parameter with ``MIN_BRANCHES`` or more groups takes the highest draw among those groups,
    each counted on the branch's trials (eq. 2)."""
    draws = _beta_draws(member, good, rng)
    branching = {n.key for n in space.branching_nodes()}
    nested = [n for n in space.children(node.key) if n.key in branching]
    for g, values in enumerate(groups):
        best = None
        for child in nested:
            if not _activated(child, values):
                continue
            sub_groups = space.branch_groups(child)
            if len(sub_groups) < MIN_BRANCHES:
                continue
            sub = membership(space, child, sub_groups, X, active) & member[g]
            sub_draws = _beta_draws(sub, good, rng)
            best = sub_draws.max() if best is None else max(best, sub_draws.max())
        if best is not None:
            draws[g] = best
    return draws


def _beta_draws(member: np.ndarray, good: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Eq. 1 for each row of ``member`` (``(groups, trials)``): ``Beta(1 + good, 1 + other)``."""
    return rng.beta(1.0 + (member & good).sum(axis=1), 1.0 + (member & ~good).sum(axis=1))


def _activated(child: ParamNode, values: tuple[float, ...]) -> bool:
    """Whether one of ``values`` (its parent's) activates ``child``."""
    assert child.condition is not None
    return bool(child.condition.holds(np.asarray(values, dtype=float)).any())


def on_path(path: Path, node: ParamNode) -> bool:
    """Whether ``path`` takes a branch of ``node``."""
    return any(key == node.key for key, _ in path.branch_values)


def membership(
    space: ConditionalSpace,
    node: ParamNode,
    groups: list[tuple[float, ...]],
    X: np.ndarray,
    active: np.ndarray,
) -> np.ndarray:
    """``(groups, trials)``: whether each trial has ``node`` active with a value of the group."""
    j = space.index[node.key]
    internal = node.from_unit(X[:, j])
    return np.stack([isin_values(internal, values) & active[:, j] for values in groups])


def keeps(path: Path, node: ParamNode, values: tuple[float, ...]) -> bool:
    """Whether ``path`` is off ``node`` or takes only ``values`` there."""
    on = dict(path.branch_values).get(node.key)
    return on is None or bool(isin_values(np.asarray(on, dtype=float), values).all())


def isin_values(internal: np.ndarray, values: tuple[float, ...]) -> np.ndarray:
    """Whether each of ``internal`` (a parameter's internal values) is one of ``values``."""
    return np.isclose(internal[:, None], np.asarray(values, dtype=float)[None, :]).any(axis=1)
