"""Structure inference: the conditional tree of a define-by-run study from its Optuna trials
(:func:`infer_space`), and the branching parents of encoded columns from data alone
(:func:`infer_parents`)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from optuna.distributions import BaseDistribution, IntDistribution
from optuna.trial import FrozenTrial, TrialState

from condsamplers.log import get_logger
from condsamplers.space.encoding import distribution_key, to_internal
from condsamplers.space.nodes import MAX_INT_BRANCH_VALUES, Condition, ParamNode
from condsamplers.space.tree import ConditionalSpace

_logger = get_logger(__name__)


def infer_parents(
    X: np.ndarray, active: np.ndarray, n_categories: np.ndarray
) -> tuple[tuple[int, ...], tuple[tuple[float, ...], ...]]:
    """Branching parents of encoded columns from data alone (``NaN`` patterns of a regressor).

    Column ``j``'s parent is a column ``z`` active wherever ``j`` is, also active on some rows
    where ``j`` is not, discrete (categorical, or at most ``MAX_INT_BRANCH_VALUES`` distinct
    values), whose values where ``j`` is active never occur where ``j`` is inactive; of several,
    the one active on the fewest rows (the deepest). Returns ``(parents, branch_values)`` as in
    :class:`FeatureSpec` (``-1`` and ``()`` for a column without parent).
    """
    X, active = np.asarray(X, dtype=float), np.asarray(active, dtype=bool)
    d = X.shape[1]
    parents, values = [-1] * d, [()] * d
    for j in range(d):
        on = active[:, j]
        if on.all() or not on.any():
            continue
        best = None
        for z in range(d):
            if z == j or not active[on, z].all():
                continue
            off = active[:, z] & ~on
            inside, outside = set(X[on, z].tolist()), set(X[off, z].tolist())
            discrete = n_categories[z] > 0 or len(inside | outside) <= MAX_INT_BRANCH_VALUES
            if off.any() and discrete and not inside & outside:
                if best is None or active[:, z].sum() < active[:, best].sum():
                    best = z
        if best is not None:
            parents[j] = best
            values[j] = tuple(sorted(set(X[on, best].tolist())))
    return tuple(parents), tuple(values)


def infer_space(trials: Iterable[FrozenTrial]) -> ConditionalSpace:
    """Reconstruct the conditional structure of a define-by-run study from its trials.

    COMPLETE trials are read, and PRUNED trials that reported an intermediate value (a trial
    that reports has, as a rule, suggested its parameters before training); a failed, running
    or otherwise pruned trial may have stopped before suggesting all of its parameters.

    For every parameter the parent is the categorical (or small integer) parameter ``q`` such
    that the parameter is active exactly when ``q`` is active and
    takes one of a set of values. Among several such ``q`` (with few trials a parameter of another
    branch can fit by chance: two k-NN trials that both happened to use the same normaliser)
    the one suggested nearest before the parameter wins (mean distance over the trials where
    both were suggested; a ``q`` suggested after the parameter in some trial comes last), as a
    define-by-run objective asks a branch's parameters right after its choice and an ancestor
    before its descendants; then the one active in the fewest trials (the closest ancestor),
    then the one suggested first. A parameter active in every trial
    is a root. The same name with different distributions in branches that exclude each other
    becomes several variants; with different distributions that no branch explains, the
    distribution changed mid-study: the latest one is kept, a warning is logged, and trials whose
    value lies outside it are recorded in ``excluded_trials``.
    """
    complete = [
        t
        for t in trials
        if t.state == TrialState.COMPLETE
        or (t.state == TrialState.PRUNED and t.intermediate_values)
    ]
    observations = _Observations(complete)
    nodes = observations.variant_nodes()
    _infer_conditions(nodes, observations)
    merged, excluded = _merge_changed_distributions(nodes, observations)
    if len(merged) < len(nodes):  # variants merged: the conditions of the new node set
        _infer_conditions(merged, observations)
    nodes = merged
    space = ConditionalSpace(nodes)
    space.excluded_trials = excluded
    return space


class _Observations:
    """Which node (name, distribution) is active in which trial, with its internal value."""

    def __init__(self, trials: Sequence[FrozenTrial]) -> None:
        self.trials = list(trials)
        #: name -> {trial index: position of the name among that trial's parameters}
        self.positions: dict[str, dict[int, int]] = {}
        self.values: dict[tuple[str, Any], dict[int, float]] = {}
        self.distributions: dict[tuple[str, Any], BaseDistribution] = {}
        for t_idx, trial in enumerate(self.trials):
            for position, (name, dist) in enumerate(trial.distributions.items()):
                internal = dist.to_internal_repr(trial.params[name])
                key = (name, distribution_key(dist))
                self.distributions.setdefault(key, dist)
                self.values.setdefault(key, {})[t_idx] = float(internal)
                self.positions.setdefault(name, {})[t_idx] = position
        #: name -> its earliest position in any trial
        self.order: dict[str, float] = {
            name: min(positions.values()) for name, positions in self.positions.items()
        }

    def variant_nodes(self) -> list[ParamNode]:
        nodes = []
        counts: dict[str, int] = {}
        for name, _ in self.values:
            counts[name] = counts.get(name, 0) + 1
        seen: dict[str, int] = {}
        for name, dist_key in self.values:
            i = seen.get(name, 0)
            seen[name] = i + 1
            key = name if counts[name] == 1 else f"{name}#{i}"
            dist = self.distributions[(name, dist_key)]
            nodes.append(ParamNode(key, name, dist, accepted=[dist], position=self.order[name]))
        return sorted(nodes, key=lambda n: (n.position, n.key))

    def active(self, node: ParamNode) -> dict[int, float]:
        merged: dict[int, float] = {}
        for dist in node.accepted:
            merged.update(self.values.get((node.name, distribution_key(dist)), {}))
        return merged

    def last_trial(self, node: ParamNode) -> int:
        return max(self.active(node), default=-1)

    def gap(self, parent: str, child: str, trials: Iterable[int]) -> float:
        """Mean number of positions from ``parent`` to ``child`` in ``trials`` (where both
        were suggested); ``inf`` if ``parent`` came after ``child`` in one of them, as a
        define-by-run parent is asked before its children."""
        mine, theirs = self.positions.get(child, {}), self.positions.get(parent, {})
        gaps = [mine[t] - theirs[t] for t in trials if t in mine and t in theirs]
        if not gaps or min(gaps) <= 0:
            return math.inf
        return float(np.mean(gaps))


def _infer_conditions(nodes: list[ParamNode], obs: _Observations) -> None:
    """Set each node's ``condition`` (or ``unexplained``) as :func:`infer_space` describes;
    the result depends on the set of nodes only, not on their order."""
    n_trials = len(obs.trials)
    actives = {n.key: obs.active(n) for n in nodes}
    can_branch = [n for n in nodes if n.can_branch()]
    for node in nodes:
        node.condition, node.unexplained = None, False
        mine = actives[node.key]
        if len(mine) == n_trials:
            continue
        best: tuple[tuple[Any, ...], Condition] | None = None
        for cand in can_branch:
            theirs = actives[cand.key]
            if cand.name == node.name or len(theirs) <= len(mine):
                continue
            if not mine.keys() <= theirs.keys():
                continue
            inside = {theirs[t] for t in mine}
            outside = {v for t, v in theirs.items() if t not in mine}
            if inside & outside:
                continue
            gap = obs.gap(cand.name, node.name, mine)
            rank = (
                gap,
                len(theirs),
                not cand.is_categorical,
                obs.order.get(cand.name, 0),
                cand.key,
            )
            if best is None or rank < best[0]:
                best = (rank, _make_condition(cand, inside, outside))
        if best is None:
            node.unexplained = True
        else:
            node.condition = best[1]


def _make_condition(parent: ParamNode, inside: set[float], outside: set[float]) -> Condition:
    values = frozenset(inside)
    if isinstance(parent.distribution, IntDistribution) and outside:
        if min(inside) > max(outside):
            return Condition(parent.key, values, lower=min(inside))
        if max(inside) < min(outside):
            return Condition(parent.key, values, upper=max(inside))
    return Condition(parent.key, values)


def _merge_changed_distributions(
    nodes: list[ParamNode], obs: _Observations
) -> tuple[list[ParamNode], set[int]]:
    """Merge variants that no branch separates into the latest distribution."""
    by_name: dict[str, list[ParamNode]] = {}
    for node in nodes:
        by_name.setdefault(node.name, []).append(node)
    merged: list[ParamNode] = []
    excluded: set[int] = set()
    for name, variants in by_name.items():
        if len(variants) == 1 or _are_branch_variants(variants):
            merged.extend(variants)
            continue
        variants.sort(key=obs.last_trial)
        latest = variants[-1]
        kept = ParamNode(
            name,
            name,
            latest.distribution,
            accepted=[v.distribution for v in variants],
            position=latest.position,
        )
        for old in variants[:-1]:
            for t_idx, internal in obs.active(old).items():
                value = old.distribution.to_external_repr(internal)
                if to_internal(latest.distribution, value) is None:
                    excluded.add(obs.trials[t_idx].number)
        _logger.warning(
            "Parameter %r changed its distribution during the study (%s -> %s). The latest "
            "distribution is used; %d trial(s) with values outside it are left out of the model.",
            name,
            ", ".join(repr(v.distribution) for v in variants[:-1]),
            repr(latest.distribution),
            len(excluded),
        )
        merged.append(kept)
    return merged, excluded


def _are_branch_variants(variants: list[ParamNode]) -> bool:
    """Variants live in different branches iff each has an explained, distinct condition."""
    conditions = [v.condition for v in variants]
    if any(c is None for c in conditions):
        return False
    keys = [(c.parent, c.values) for c in conditions]  # type: ignore[union-attr]
    if len(set(keys)) != len(keys):
        return False
    same_parent = len({c.parent for c in conditions}) == 1  # type: ignore[union-attr]
    if same_parent:
        value_sets = [c.values for c in conditions]  # type: ignore[union-attr]
        return all(not (a & b) for i, a in enumerate(value_sets) for b in value_sets[i + 1 :])
    return True
