"""The conditional tree: :class:`ConditionalSpace` over its :class:`ParamNode` nodes.

Its structure (children, branching nodes, the Optuna search space), the enumeration of its
paths (:class:`Path`), parameters fixed from outside (:class:`FixedValues`), and, following the
tree, the active mask, the encoding and decoding of configurations, random sampling and the
readable drawing. The values and columns it encodes with come from
:mod:`condsamplers.space.encoding` and :mod:`condsamplers.space.nodes`; the tree of a study is
inferred by :mod:`condsamplers.space.inference`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from optuna.distributions import BaseDistribution
from optuna.trial import FrozenTrial

from condsamplers.space.encoding import (
    FeatureSpec,
    covering_distribution,
    distribution_key,
    to_external,
    to_internal,
)
from condsamplers.space.nodes import Condition, ParamNode

#: Above this many paths, :meth:`ConditionalSpace.paths` stops enumerating.
MAX_PATHS = 256


#: Part of a path: the active node keys and the branch values that lead there.
_SubPath = tuple[set[str], dict[str, tuple[float, ...]]]


def _product_of_options(
    option_lists: Sequence[list[_SubPath] | None], limit: int
) -> list[_SubPath] | None:
    """All combinations of one sub-path from each list (independent subtrees), or ``None`` if
    any list is ``None`` or there are more than ``limit``."""
    result: list[_SubPath] = [(set(), {})]
    for options in option_lists:
        if options is None:
            return None
        result = [(a | a2, {**b, **b2}) for a, b in result for a2, b2 in options]
        if len(result) > limit:
            return None
    return result


@dataclasses.dataclass(frozen=True)
class Path:
    """One set of simultaneously active nodes and the branch values that lead there.

    ``branch_values`` maps each active branching node to the internal values it may take on
    this path (a categorical value without known children is a path of its own, so untried
    branch values are candidates too).
    """

    active: frozenset[str]
    branch_values: tuple[tuple[str, tuple[float, ...]], ...]


@dataclasses.dataclass(frozen=True, eq=False)
class FixedValues:
    """Parameters whose values are given, as encoded columns a candidate must keep
    (:meth:`ConditionalSpace.fixed_values`): the acquisition is then maximised over the other
    parameters only, on the paths these values allow."""

    columns: np.ndarray
    units: np.ndarray
    internals: np.ndarray
    space: ConditionalSpace

    def allows(self, path: Path) -> bool:
        """Whether ``path`` is consistent with the fixed values of its branching nodes."""
        fixed = dict(zip(self.columns.tolist(), self.internals.tolist(), strict=True))
        for key, values in path.branch_values:
            j = self.space.index[key]
            if j in fixed and not np.isclose(np.asarray(values), fixed[j]).any():
                return False
        return True

    def apply(self, X: np.ndarray, active: np.ndarray) -> np.ndarray:
        """``X`` with the fixed values in their columns wherever those are active."""
        X = X.copy()
        cols = self.columns
        X[:, cols] = np.where(active[:, cols], self.units[None, :], X[:, cols])
        return X

    def keep(self, X: np.ndarray, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows of ``X`` whose path the fixed values leave as it is, with those values
        set."""
        fixed = self.apply(X, active)
        same_path = (self.space.active_mask(fixed) == active).all(axis=1)
        return fixed[same_path], active[same_path]


class ConditionalSpace:
    """A tree of :class:`ParamNode` with the unit-cube encoding of configurations.

    Build it with :func:`infer_space` (from trials) or directly from nodes. Nodes are kept in
    topological order: a parent comes before its children.
    """

    def __init__(self, nodes: Sequence[ParamNode]) -> None:
        self.nodes: list[ParamNode] = _topological(nodes)
        self.index: dict[str, int] = {n.key: i for i, n in enumerate(self.nodes)}
        paths = self.paths()
        self.features = FeatureSpec(
            np.array(
                [
                    len(n.distribution.choices)  # type: ignore[attr-defined]
                    if n.is_categorical
                    else 0
                    for n in self.nodes
                ],
                dtype=int,
            ),
            leaf_patterns=None
            if paths is None
            else tuple(frozenset(self.index[k] for k in path.active) for path in paths),
            parents=tuple(
                -1 if n.condition is None else self.index[n.condition.parent] for n in self.nodes
            ),
            branch_values=tuple(self._branch_values(n) for n in self.nodes),
        )
        #: each distinct condition, its parent's column and the columns it governs, in the
        #: order of their first column (a parent's activity is known before it is read).
        self._condition_groups = _condition_groups(self.nodes, self.index)
        #: trial numbers left out of the model (a value outside a changed distribution).
        self.excluded_trials: set[int] = set()
        #: ``(name, distribution key)`` -> column, filled by :meth:`_column_for`.
        self._columns: dict[tuple[str, Any], int | None] = {}

    # -- structure -----------------------------------------------------------------------
    def _branch_values(self, node: ParamNode) -> tuple[float, ...]:
        """Encoded values of ``node``'s parent under which ``node`` is active (sorted)."""
        if node.condition is None:
            return ()
        parent = self.nodes[self.index[node.condition.parent]]
        internal = np.array(sorted(node.condition.values), dtype=float)
        return tuple(float(v) for v in parent.to_unit(internal))

    @property
    def n_features(self) -> int:
        return len(self.nodes)

    def children(self, key: str | None) -> list[ParamNode]:
        """Nodes whose condition names ``key`` as parent (``None``: root and unexplained)."""
        if key is None:
            kids = [n for n in self.nodes if n.condition is None]
        else:
            kids = [n for n in self.nodes if n.condition is not None and n.condition.parent == key]
        return sorted(kids, key=ParamNode.display_key)

    def branching_nodes(self) -> list[ParamNode]:
        parents = {n.condition.parent for n in self.nodes if n.condition is not None}
        return [n for n in self.nodes if n.key in parents]

    def branch_groups(self, node: ParamNode) -> list[tuple[float, ...]]:
        """``node``'s grid values (internal) grouped by the children they activate: one group
        per branch, in grid order (one group for a node without children); none for a
        continuous node, which has no grid."""
        if node.n_values() is None:
            return []
        return list(self._branches(node, self.children(node.key)).values())

    def _branches(
        self, node: ParamNode, kids: list[ParamNode]
    ) -> dict[tuple[bool, ...], tuple[float, ...]]:
        """``node``'s grid values by the pattern of ``kids`` (its children) they activate."""
        grid = node.grid()
        held = np.zeros((len(kids), len(grid)), dtype=bool)
        for i, kid in enumerate(kids):
            held[i] = kid.condition.holds(grid)  # type: ignore[union-attr]
        groups: dict[tuple[bool, ...], list[float]] = {}
        for value, column in zip(grid, held.T, strict=True):
            groups.setdefault(tuple(column.tolist()), []).append(float(value))
        return {pattern: tuple(values) for pattern, values in groups.items()}

    def search_space(self) -> dict[str, BaseDistribution]:
        """Optuna search space over all parameter names.

        A name with variants in several branches (another range in each) gets one distribution that
        covers them all (:func:`covering_distribution`): Optuna checks only its kind against the
        distribution a trial asks, then takes the proposed value if the asked one contains it; the
        first variant's range alone would drop the others' values.
        """
        variants: dict[str, list[BaseDistribution]] = {}
        for node in self.nodes:
            variants.setdefault(node.name, []).append(node.distribution)
        return {name: covering_distribution(dists) for name, dists in variants.items()}

    def paths(self, limit: int = MAX_PATHS) -> list[Path] | None:
        """All paths of the tree, or ``None`` if there are more than ``limit``."""
        combos = _product_of_options(
            [self._node_options(root, limit) for root in self.children(None)], limit
        )
        if combos is None:
            return None
        return [Path(frozenset(a), tuple(sorted(b.items()))) for a, b in combos]

    def _node_options(self, node: ParamNode, limit: int) -> list[_SubPath] | None:
        """Sub-paths that start at ``node``: one per group of values with the same children."""
        kids = self.children(node.key)
        if not kids:
            return [({node.key}, {})]
        options: list[_SubPath] = []
        for pattern, values in self._branches(node, kids).items():
            head: list[_SubPath] | None = [({node.key}, {node.key: values})]
            below = [
                self._node_options(kid, limit) for kid, on in zip(kids, pattern, strict=True) if on
            ]
            combos = _product_of_options([head, *below], limit)
            if combos is None:
                return None
            options.extend(combos)
        return options

    # -- encoding ------------------------------------------------------------------------
    def path_pattern(self, path: Path) -> np.ndarray:
        """The active mask of a configuration on ``path``: its parameters' columns."""
        pattern = np.zeros(self.n_features, dtype=bool)
        pattern[[self.index[key] for key in path.active]] = True
        return pattern

    def active_mask(self, X: np.ndarray) -> np.ndarray:
        """Which nodes are active for configurations ``X`` (rows), following the tree."""
        X = np.atleast_2d(X)
        active = np.ones(X.shape, dtype=bool)
        internal: dict[int, np.ndarray] = {}  # each parent's column, decoded once
        for cond, p, columns in self._condition_groups:
            if p not in internal:
                internal[p] = self.nodes[p].from_unit(X[:, p])
            active[:, columns] = (active[:, p] & cond.holds(internal[p]))[:, None]
        return active

    def fixed_values(self, params: Mapping[str, Any]) -> FixedValues | None:
        """The columns of ``params`` (values set outside the model: enqueued, fixed by another
        sampler, already suggested in the trial) that the tree can encode, with their encoded
        values; ``None`` if there is none. A name with variants fixes each variant whose
        distribution holds the value; names and values the tree does not know are ignored."""
        columns, units, internals = [], [], []
        for j, node in enumerate(self.nodes):
            internal = (
                to_internal(node.distribution, params[node.name])
                if (node.name in params)
                else None
            )
            if internal is not None:
                columns.append(j)
                internals.append(internal)
                units.append(float(node.to_unit(np.array([internal]))[0]))
        if not columns:
            return None
        return FixedValues(
            np.array(columns, dtype=int), np.array(units), np.array(internals), self
        )

    def activity_predictor(
        self, X_seen: np.ndarray, active_seen: np.ndarray
    ) -> Callable[[np.ndarray, np.ndarray], np.ndarray] | None:
        """Predict, for candidate configurations, whether each unexplained node will be active.

        The tree gives an unexplained node (one asked, say, only beyond a float threshold) no
        condition, so a candidate would always set it; the objective then may not ask it, and
        the model would keep valuing a pattern it never observes there. Instead each candidate
        takes the activity of its nearest observed configuration (squared distance on the
        explained columns, a mismatched categorical choice or activity counting 1), and
        the descendants of a node predicted inactive are inactive. ``None`` without unexplained
        nodes (the activity of the tree is then exact).
        """
        unexplained = np.array([n.unexplained for n in self.nodes], dtype=bool)
        if not unexplained.any() or len(X_seen) == 0:
            return None
        explained = ~unexplained
        categorical = self.features.is_categorical[explained]
        seen_X = np.where(active_seen, X_seen, 0.0)[:, explained]
        seen_active = active_seen[:, explained]
        labels = active_seen[:, unexplained]

        def predict(X: np.ndarray, active: np.ndarray) -> np.ndarray:
            values = np.where(active, X, 0.0)[:, explained]
            on = active[:, explained]
            nearest = np.empty(len(X), dtype=int)
            for start in range(0, len(X), 256):  # bounded memory: 256 x n_seen distances
                a = values[start : start + 256, None, :]
                gap = np.where(categorical, a != seen_X[None], (a - seen_X[None]) ** 2)
                mismatch = on[start : start + 256, None, :] != seen_active[None]
                nearest[start : start + 256] = (gap.sum(-1) + mismatch.sum(-1)).argmin(1)
            out = active.copy()
            out[:, unexplained] &= labels[nearest]
            for j, node in enumerate(self.nodes):
                if node.condition is not None:
                    out[:, j] &= out[:, self.index[node.condition.parent]]
            return out

        return predict

    def node_for(self, params: dict[str, Any], name: str) -> ParamNode | None:
        """The node a trial's value of ``name`` belongs to (variants by their condition)."""
        candidates = [n for n in self.nodes if n.name == name]
        if len(candidates) <= 1:
            return candidates[0] if candidates else None
        for node in candidates:
            if _condition_met(self, node, params):
                return node
        return None

    def implies_active(self, params: Mapping[str, Any], name: str) -> bool:
        """Whether the tree makes a node named ``name`` active under the values in ``params``:
        a node with no condition, or one whose condition and each ancestor's hold there. An
        unexplained node's activity is predicted from the trials, not implied: ``False``."""
        for node in self.nodes:
            if node.name != name or node.unexplained:
                continue
            current: ParamNode | None = node
            while current is not None and _condition_met(self, current, params):
                if current.condition is None:
                    return True
                current = self.nodes[self.index[current.condition.parent]]
        return False

    def encode_trial(
        self, params: dict[str, Any], distributions: dict[str, BaseDistribution]
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """A trial's params -> (x, active), or ``None`` if a value does not fit the space."""
        internal = self._internal_row(params, distributions)
        if internal is None:
            return None
        active = ~np.isnan(internal)
        return self._to_unit_columns(internal[None, :], active[None, :])[0], active

    def encode_trials(
        self, trials: Sequence[FrozenTrial]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Encoded ``(X, active)`` of the trials the space accepts, and their positions in
        ``trials``: trials in :attr:`excluded_trials` and values that do not fit are left out."""
        rows, kept = [], []
        for i, trial in enumerate(trials):
            if trial.number in self.excluded_trials:
                continue
            internal = self._internal_row(trial.params, trial.distributions)
            if internal is not None:
                rows.append(internal)
                kept.append(i)
        internal_values = np.array(rows, dtype=float).reshape(-1, self.n_features)
        active = ~np.isnan(internal_values)
        return self._to_unit_columns(internal_values, active), active, np.array(kept, dtype=int)

    def _internal_row(
        self, params: dict[str, Any], distributions: dict[str, BaseDistribution]
    ) -> np.ndarray | None:
        """A trial's internal values by column (``NaN`` where inactive), or ``None`` if a
        value does not fit its node's distribution."""
        row = np.full(self.n_features, np.nan)
        for name, value in params.items():
            j = self._column_for(name, distributions.get(name))
            if j is None:
                continue
            internal = to_internal(self.nodes[j].distribution, value)
            if internal is None:
                return None
            row[j] = internal
        return row

    def _to_unit_columns(self, internal: np.ndarray, active: np.ndarray) -> np.ndarray:
        """Internal values -> encoded values, a column at a time (0 where inactive)."""
        X = np.zeros(internal.shape)
        for j, node in enumerate(self.nodes):
            rows = active[:, j]
            if rows.any():
                X[rows, j] = node.to_unit(internal[rows, j])
        return X

    def _column_for(self, name: str, distribution: BaseDistribution | None) -> int | None:
        """The column of the node that takes ``name`` under ``distribution`` (memoised)."""
        key = (name, None if distribution is None else distribution_key(distribution))
        if key not in self._columns:
            node = self._node_for_distribution(name, distribution)
            self._columns[key] = None if node is None else self.index[node.key]
        return self._columns[key]

    def _node_for_distribution(
        self, name: str, distribution: BaseDistribution | None
    ) -> ParamNode | None:
        fallback = None
        for node in self.nodes:
            if node.name != name:
                continue
            if distribution is None or distribution_key(distribution) in {
                distribution_key(d) for d in node.accepted
            }:
                return node
            fallback = fallback or node
        return fallback

    def decode(self, x: np.ndarray, active: np.ndarray) -> dict[str, Any]:
        """An encoded configuration -> ``{name: external value}`` for its active nodes."""
        params: dict[str, Any] = {}
        for j, node in enumerate(self.nodes):
            if not active[j]:
                continue
            internal = float(node.from_unit(np.array([x[j]]))[0])
            params[node.name] = to_external(node.distribution, internal)
        return params

    def sample(
        self, n: int, rng: np.random.Generator, path: Path | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """``n`` uniform random configurations (of one ``path`` if given), encoded."""
        X = rng.random((n, self.n_features))
        for j, node in enumerate(self.nodes):
            if node.is_categorical:
                X[:, j] = rng.integers(0, len(node.distribution.choices), n)  # type: ignore[attr-defined]
        if path is not None:
            for key, values in path.branch_values:
                j = self.index[key]
                chosen = rng.choice(np.asarray(values), n)
                X[:, j] = self.nodes[j].to_unit(chosen)
        active = self.active_mask(X)
        X[~active] = 0.0
        return X, active

    # -- display -------------------------------------------------------------------------
    def describe(self) -> str:
        """A readable drawing of the tree, one node a line, children indented."""
        lines: list[str] = []
        paths = self.paths()
        shared = _shared_counts(paths) if paths else {}

        def draw(node: ParamNode, depth: int) -> None:
            pad = "  " * depth
            text = f"{pad}{node.name}: {node.describe_distribution()}"
            if node.condition is not None:
                text += f"  [if {_describe_condition(self, node.condition)}]"
            if node.unexplained:
                text += "  [condition not inferred: active only in some trials]"
            if shared.get(node.key, 0) > 1 and self.children(node.key) == []:
                text += f"  (shared by {shared[node.key]} paths)"
            lines.append(text)
            for kid in self.children(node.key):
                draw(kid, depth + 1)

        for root in self.children(None):
            draw(root, 0)
        n_paths = f"more than {MAX_PATHS}" if paths is None else str(len(paths))
        lines.append(f"({len(self.nodes)} parameters, {n_paths} paths)")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"ConditionalSpace(\n{self.describe()}\n)"


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def _topological(nodes: Sequence[ParamNode]) -> list[ParamNode]:
    by_key = {n.key: n for n in nodes}
    ordered: list[ParamNode] = []
    placed: set[str] = set()

    def place(node: ParamNode) -> None:
        if node.key in placed:
            return
        if node.condition is not None and node.condition.parent in by_key:
            place(by_key[node.condition.parent])
        placed.add(node.key)
        ordered.append(node)

    for node in nodes:
        place(node)
    return ordered


def _condition_groups(
    nodes: Sequence[ParamNode], index: Mapping[str, int]
) -> list[tuple[Condition, int, np.ndarray]]:
    """Nodes grouped by their condition (a branch's parameters share theirs): per group the
    condition, the parent's column and the nodes' columns, in the order of first appearance."""
    groups: dict[Condition, list[int]] = {}
    for j, node in enumerate(nodes):
        if node.condition is not None:
            groups.setdefault(node.condition, []).append(j)
    return [(cond, index[cond.parent], np.array(js)) for cond, js in groups.items()]


def _condition_met(space: ConditionalSpace, node: ParamNode, params: dict[str, Any]) -> bool:
    cond = node.condition
    if cond is None:
        return True
    parent = space.nodes[space.index[cond.parent]]
    if parent.name not in params:
        return False
    internal = to_internal(parent.distribution, params[parent.name])
    return internal is not None and bool(cond.holds(internal))


def _describe_condition(space: ConditionalSpace, cond: Condition) -> str:
    parent = space.nodes[space.index[cond.parent]]
    if cond.lower is not None:
        return f"{parent.name} >= {cond.lower:g}"
    if cond.upper is not None:
        return f"{parent.name} <= {cond.upper:g}"
    shown = [to_external(parent.distribution, v) for v in sorted(cond.values)]
    if len(shown) == 1:
        return f"{parent.name} == {shown[0]!r}"
    return f"{parent.name} in {tuple(shown)!r}"


def _shared_counts(paths: Sequence[Path]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for path in paths:
        for key in path.active:
            counts[key] = counts.get(key, 0) + 1
    return counts
