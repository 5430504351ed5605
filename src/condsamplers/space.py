"""Conditional search spaces: the tree of parameters inferred from define-by-run trials.

Vocabulary (used throughout the package, see ``docs/design.md``):

- **parameter**: a name with an Optuna distribution. Inside a :class:`ConditionalSpace` each
  parameter is a :class:`ParamNode`; the same name may own several nodes (*variants*) when it is
  suggested with different distributions in mutually exclusive branches.
- **condition** of a node: the (parent node, set of parent values) under which it is suggested.
  A node without condition is a **root** node.
- **branching** node: a categorical or small integer node that is the parent of others; its
  children are **nested** nodes. Integer parents whose activating values form an up-set or a
  down-set get a *threshold* condition (``depth >= 2``), so unseen values extrapolate.
- **path**: one set of simultaneously active nodes (a leaf of the tree); a node active on
  several paths is **shared** (Jenatton et al. 2017, sec. 2.4).

Encoding (DESIGN.md sec. 3): every node is one column of a matrix ``X`` in the unit interval.
Floats and ints map linearly (log-linearly for ``log=True``) to [0, 1]; ints and stepped floats
are widened by half a step on each side so every grid value owns an equal share of [0, 1], and are
rounded on decode. Categorical nodes hold the choice index (0, 1, ...). A boolean ``active``
matrix of the same shape says which columns are active; inactive entries of ``X`` are 0.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, cast

import numpy as np
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.trial import FrozenTrial, TrialState

from condsamplers.log import get_logger

_logger = get_logger(__name__)

#: Integer parameters with more grid values than this are never taken as branching parents:
#: a ``units`` parameter whose values happen to separate two sets of trials is noise, not a
#: condition.
MAX_INT_BRANCH_VALUES = 32
#: Above this many paths, :meth:`ConditionalSpace.paths` stops enumerating.
MAX_PATHS = 256


@dataclasses.dataclass(frozen=True)
class FeatureSpec:
    """What a model needs to know about the columns of an encoded matrix.

    Attributes:
        n_categories: for each column, the number of categories of a categorical column, or 0
            for a numerical column (already scaled to [0, 1]).
        leaf_patterns: the paths of the tree as sets of active column indices, when known (a
            structure-aware model such as the tree GP builds on them; paths never observed
            included). ``None``: a model takes the distinct active patterns of its data.
        parents: for each column, the column of its branching parent (``-1``: none), when
            known; the branching-nested kernel builds on it.
        branch_values: for each column, the encoded values of its parent under which it is
            active (empty for a column without parent); aligned with ``parents``.
    """

    n_categories: np.ndarray
    leaf_patterns: tuple[frozenset[int], ...] | None = None
    parents: tuple[int, ...] | None = None
    branch_values: tuple[tuple[float, ...], ...] | None = None

    @property
    def is_categorical(self) -> np.ndarray:
        return self.n_categories > 0

    @property
    def n_features(self) -> int:
        return len(self.n_categories)

    @classmethod
    def numerical(cls, n_features: int) -> FeatureSpec:
        return cls(np.zeros(n_features, dtype=int))


@dataclasses.dataclass(frozen=True)
class Condition:
    """A node is active iff its parent is active and the parent's value satisfies this.

    ``values`` are internal representations (choice index for categoricals, the integer for
    ints). For integer parents whose activating values form an up-set (down-set) of the observed
    values, ``lower`` (``upper``) holds the threshold and new values extrapolate.
    """

    parent: str
    values: frozenset[float]
    lower: float | None = None
    upper: float | None = None

    def holds(self, parent_internal: np.ndarray | float) -> np.ndarray:
        value = np.asarray(parent_internal, dtype=float)
        if self.lower is not None:
            return value >= self.lower - 1e-9
        if self.upper is not None:
            return value <= self.upper + 1e-9
        return np.isin(np.round(value, 9), np.round(sorted(self.values), 9))


@dataclasses.dataclass
class ParamNode:
    """One parameter (or one variant of a parameter) of a conditional space."""

    key: str
    name: str
    distribution: BaseDistribution
    condition: Condition | None = None
    #: True when the node is not active in every trial and no parent explains when it is.
    unexplained: bool = False
    #: all distributions merged into this node (a distribution changed mid-study).
    accepted: list[BaseDistribution] = dataclasses.field(default_factory=list)
    #: earliest position at which the parameter was suggested in a trial (display order).
    position: float = 0.0

    def display_key(self) -> tuple[float, float, str]:
        """Siblings are shown by activating parent value, then suggestion order, then key."""
        first_value = -1.0 if self.condition is None else min(self.condition.values)
        return (first_value, self.position, self.key)

    @property
    def is_categorical(self) -> bool:
        return isinstance(self.distribution, CategoricalDistribution)

    @property
    def is_discrete(self) -> bool:
        """Int or stepped float: values on a grid."""
        d = self.distribution
        return isinstance(d, IntDistribution) or (
            isinstance(d, FloatDistribution) and d.step is not None
        )

    def n_values(self) -> int | None:
        """How many values the parameter can take; ``None`` for a continuous float."""
        d = self.distribution
        if isinstance(d, CategoricalDistribution):
            return len(d.choices)
        if not self.is_discrete:
            return None
        assert isinstance(d, (FloatDistribution, IntDistribution)) and d.step is not None
        return int(round((d.high - d.low) / d.step)) + 1

    def can_branch(self) -> bool:
        d = self.distribution
        if isinstance(d, CategoricalDistribution):
            return True
        if isinstance(d, IntDistribution) and not d.log:
            return cast(int, self.n_values()) <= MAX_INT_BRANCH_VALUES
        return False

    def grid(self) -> np.ndarray:
        """The internal values a branching node can take."""
        d = self.distribution
        if isinstance(d, CategoricalDistribution):
            return np.arange(len(d.choices), dtype=float)
        assert isinstance(d, IntDistribution)
        return np.arange(d.low, d.high + 1, d.step, dtype=float)

    # -- encoding of one column -------------------------------------------------------------
    def _bounds(self) -> tuple[float, float, bool]:
        d = self.distribution
        assert isinstance(d, (FloatDistribution, IntDistribution))
        half = 0.5 * d.step if self.is_discrete else 0.0  # type: ignore[operator]
        low, high = d.low - half, d.high + half
        if d.log:
            return math.log(max(low, 1e-300)), math.log(high), True
        return low, high, False

    def to_unit(self, internal: np.ndarray) -> np.ndarray:
        """Internal representation -> encoded column value."""
        internal = np.asarray(internal, dtype=float)
        if self.is_categorical:
            return internal
        low, high, log = self._bounds()
        v = np.log(np.maximum(internal, 1e-300)) if log else internal
        if high <= low:
            return np.full_like(v, 0.5)
        return np.clip((v - low) / (high - low), 0.0, 1.0)

    def from_unit(self, unit: np.ndarray) -> np.ndarray:
        """Encoded column value -> internal representation (rounded onto the grid)."""
        unit = np.asarray(unit, dtype=float)
        d = self.distribution
        if isinstance(d, CategoricalDistribution):
            return np.clip(np.round(unit), 0, len(d.choices) - 1)
        assert isinstance(d, (FloatDistribution, IntDistribution))
        low, high, log = self._bounds()
        v = low + np.clip(unit, 0.0, 1.0) * (high - low)
        if log:
            v = np.exp(v)
        if self.is_discrete:
            v = d.low + np.round((v - d.low) / d.step) * d.step  # type: ignore[operator]
        return np.clip(v, d.low, d.high)

    def describe_distribution(self) -> str:
        d = self.distribution
        if isinstance(d, CategoricalDistribution):
            return "categorical " + repr(tuple(d.choices))
        assert isinstance(d, (FloatDistribution, IntDistribution))
        kind = "int" if isinstance(d, IntDistribution) else "float"
        extras = (" log" if d.log else "") + (
            f" step={d.step}" if d.step is not None and d.step != 1 else ""
        )
        return f"{kind} [{d.low}, {d.high}]{extras}"


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
        #: trial numbers left out of the model (a value outside a changed distribution).
        self.excluded_trials: set[int] = set()

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

    def search_space(self) -> dict[str, BaseDistribution]:
        """Optuna search space over all parameter names.

        A name with variants in several branches (another range in each, docs/design.md sec.
        2.4) gets one distribution that covers them all (:func:`covering_distribution`):
        Optuna checks only its kind against the distribution a trial asks, then takes the
        proposed value if the asked one contains it; the first variant's range alone would
        drop the others' values.
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
        groups: dict[tuple[bool, ...], list[float]] = {}
        for value in node.grid():
            pattern = tuple(bool(k.condition.holds(value)) for k in kids)  # type: ignore[union-attr]
            groups.setdefault(pattern, []).append(float(value))
        options: list[_SubPath] = []
        for pattern, values in groups.items():
            head: list[_SubPath] | None = [({node.key}, {node.key: tuple(values)})]
            below = [
                self._node_options(kid, limit) for kid, on in zip(kids, pattern, strict=True) if on
            ]
            combos = _product_of_options([head, *below], limit)
            if combos is None:
                return None
            options.extend(combos)
        return options

    # -- encoding ------------------------------------------------------------------------
    def active_mask(self, X: np.ndarray) -> np.ndarray:
        """Which nodes are active for configurations ``X`` (rows), following the tree."""
        X = np.atleast_2d(X)
        active = np.ones(X.shape, dtype=bool)
        for j, node in enumerate(self.nodes):
            cond = node.condition
            if cond is None:
                continue
            p = self.index[cond.parent]
            parent_internal = self.nodes[p].from_unit(X[:, p])
            active[:, j] = active[:, p] & cond.holds(parent_internal)
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

    def encode_trial(
        self, params: dict[str, Any], distributions: dict[str, BaseDistribution]
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """A trial's params -> (x, active), or ``None`` if a value does not fit the space."""
        x = np.zeros(self.n_features)
        active = np.zeros(self.n_features, dtype=bool)
        for name, value in params.items():
            node = self._node_for_distribution(name, distributions.get(name))
            if node is None:
                continue
            internal = to_internal(node.distribution, value)
            if internal is None:
                return None
            j = self.index[node.key]
            x[j] = node.to_unit(np.array([internal]))[0]
            active[j] = True
        return x, active

    def encode_trials(
        self, trials: Sequence[FrozenTrial]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Encoded ``(X, active)`` of the trials the space accepts, and their positions in
        ``trials``: trials in :attr:`excluded_trials` and values that do not fit are left out."""
        rows, kept = [], []
        for i, trial in enumerate(trials):
            if trial.number in self.excluded_trials:
                continue
            encoded = self.encode_trial(trial.params, trial.distributions)
            if encoded is not None:
                rows.append(encoded)
                kept.append(i)
        d = self.n_features
        X = np.array([r[0] for r in rows], dtype=float).reshape(-1, d)
        active = np.array([r[1] for r in rows], dtype=bool).reshape(-1, d)
        return X, active, np.array(kept, dtype=int)

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
# Inference from trials
# ---------------------------------------------------------------------------------------------


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

    Only COMPLETE trials are read: a failed, pruned or running trial may have stopped before
    suggesting all of its parameters. For every parameter the parent is the categorical (or small
    integer) parameter ``q`` such that the parameter is active exactly when ``q`` is active and
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
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    observations = _Observations(complete)
    nodes = observations.variant_nodes()
    _infer_conditions(nodes, observations)
    nodes, excluded = _merge_changed_distributions(nodes, observations)
    _infer_conditions(nodes, observations)
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
    n_trials = len(obs.trials)
    actives = {n.key: obs.active(n) for n in nodes}
    for node in nodes:
        node.condition, node.unexplained = None, False
        mine = actives[node.key]
        if len(mine) == n_trials:
            continue
        best: tuple[tuple[Any, ...], Condition] | None = None
        for cand in nodes:
            if cand.name == node.name or not cand.can_branch():
                continue
            theirs = actives[cand.key]
            if len(theirs) <= len(mine) or not set(mine) <= set(theirs):
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


def covering_distribution(distributions: Sequence[BaseDistribution]) -> BaseDistribution:
    """One distribution that contains every value of ``distributions`` (variants of one name:
    the same kind and ``log`` flag, as Optuna's storage demands): the smallest range around
    their ranges, with their common step if they share it and their grids align (step 1 for
    integers, none for floats otherwise). Categorical variants cannot differ within a study;
    the first is returned, as for any other mix."""
    first = distributions[0]
    same_kind = all(type(d) is type(first) for d in distributions)
    if not isinstance(first, FloatDistribution | IntDistribution) or not same_kind:
        return first
    numeric = cast(list[FloatDistribution | IntDistribution], list(distributions))
    if any(d.log != first.log for d in numeric) or all(d == first for d in numeric):
        return first
    low, high = min(d.low for d in numeric), max(d.high for d in numeric)
    step = first.step
    aligned = step is not None and all(
        d.step == step and math.isclose((d.low - low) / step, round((d.low - low) / step))
        for d in numeric
    )
    if isinstance(first, IntDistribution):
        step = int(step) if aligned and step is not None else 1
        return IntDistribution(
            int(low), int(low + (high - low) // step * step), log=first.log, step=step
        )
    if not aligned or step is None:
        return FloatDistribution(low, high, log=first.log)
    return FloatDistribution(low, low + math.floor((high - low) / step + 1e-9) * step, step=step)


#: What a NaN value (a categorical choice ``float("nan")``) stands as in keys: ``nan != nan``,
#: and two NaN objects hash apart, yet they are one choice.
_NAN_KEY = "<condsamplers: NaN>"


def value_key(value: Any) -> Any:
    """A hashable stand-in of a parameter value, equal for equal values and for two NaNs."""
    return _NAN_KEY if isinstance(value, float) and math.isnan(value) else value


def distribution_key(distribution: BaseDistribution) -> Any:
    """A hashable stand-in of a distribution, equal for equal distributions (Optuna's own
    equality) and for two categorical ones whose choices differ only by NaN objects."""
    if isinstance(distribution, CategoricalDistribution) and any(
        value_key(c) is _NAN_KEY for c in distribution.choices
    ):
        return (CategoricalDistribution, tuple(value_key(c) for c in distribution.choices))
    return distribution


def to_internal(distribution: BaseDistribution, value: Any) -> float | None:
    """External value -> internal float, or ``None`` if the distribution does not contain it."""
    try:
        internal = distribution.to_internal_repr(value)
    except (ValueError, TypeError):
        return None
    if not distribution._contains(internal):
        return None
    return float(internal)


def to_external(distribution: BaseDistribution, internal: float) -> Any:
    if isinstance(distribution, CategoricalDistribution):
        return distribution.to_external_repr(int(round(internal)))
    if isinstance(distribution, IntDistribution):
        return int(round(internal))
    return float(internal)


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
