"""The tree of Jenatton et al.'s tree GP and the features ``z(x)`` of its inner nodes.

One concern: from a conditional space's active patterns to the tree (:class:`TreeStructure`,
:class:`InnerNode`), and from a point to the feature vector ``z(x)`` of the inner nodes on its
path (:func:`inner_features`; the layout of its variance groups, and the random Fourier basis
of sec. 4.3, :class:`FourierBasis`). The model itself, its hyperparameters and its inference
are in :mod:`condsamplers.models.tree_gp`.

**The tree from a conditional space.** A leaf is a path of the inferred tree, i.e. a set of
active columns (``FeatureSpec.leaf_patterns``, else the distinct active patterns of the data).
For a column ``j`` let ``P(j)`` be the set of leaves on which it is active. Every distinct
``P(j)`` with two leaves or more is an inner node, whose shared parameters are the columns with
that ``P(j)``; the root (all leaves) always exists. This recovers the paper's trees: in the
small tree of its Fig. 1, ``x1`` is at the root, ``{x2, r8}`` at the node ``x1 = 0``, and the leaf
variables ``x4 .. x7`` at the leaves; for nested layers (``units_i`` active iff ``depth >= i``)
it gives the chain of its Fig. 3 (bottom). A point is on inner node ``v`` when one of ``v``'s
columns is active (the root: always), so the model also scores active patterns it never saw.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Iterable, Sequence

import numpy as np
import torch

from condsamplers.one_hot import one_hot_block, one_hot_columns
from condsamplers.space import FeatureSpec

#: Random Fourier features per inner node with ``inner_basis="fourier"`` (sec. 4.3).
N_FOURIER = 16
#: Degrees of freedom of the Student-t frequencies: the spectral density of Matern-5/2.
_MATERN_NU = 5.0


@dataclasses.dataclass(frozen=True)
class InnerNode:
    """An inner node of the tree: the leaves below it and the columns that live there."""

    leaves: frozenset[int]
    columns: tuple[int, ...]
    is_root: bool = False


@dataclasses.dataclass(frozen=True)
class TreeStructure:
    """Leaves (active column sets) and inner nodes (root first) of Jenatton's tree.

    ``leaf_columns[p]`` are the inputs of leaf ``p``'s GP. Leaves may be appended later
    (:meth:`with_leaves`, a pattern first seen among running trials) without changing the inner
    nodes; a new leaf is on every inner node one of whose columns it activates.
    """

    leaves: tuple[frozenset[int], ...]
    inner_nodes: tuple[InnerNode, ...]
    leaf_columns: tuple[tuple[int, ...], ...]
    leaf_inputs: str

    @classmethod
    def from_leaves(
        cls, leaves: Iterable[frozenset[int]], n_features: int, leaf_inputs: str = "path"
    ) -> TreeStructure:
        """Inner nodes are the distinct sets ``P(j)`` of leaves of each column (see module)."""
        leaves = tuple(dict.fromkeys(frozenset(leaf) for leaf in leaves))
        by_leaf_set: dict[frozenset[int], list[int]] = {}
        for j in range(n_features):
            on = frozenset(p for p, leaf in enumerate(leaves) if j in leaf)
            if len(on) >= 2:
                by_leaf_set.setdefault(on, []).append(j)
        everything = frozenset(range(len(leaves)))
        root = InnerNode(everything, tuple(by_leaf_set.pop(everything, [])), is_root=True)
        others = sorted(by_leaf_set.items(), key=lambda item: (-len(item[0]), item[1]))
        inner = (root, *(InnerNode(on, tuple(cols)) for on, cols in others))
        structure = cls((), inner, (), leaf_inputs)
        return structure.with_leaves(leaves)

    def with_leaves(self, extra: Iterable[frozenset[int]]) -> TreeStructure:
        """The same inner nodes, with the patterns of ``extra`` not yet known as new leaves."""
        leaves = list(self.leaves)
        for leaf in extra:
            if leaf not in leaves:
                leaves.append(frozenset(leaf))
        shared = {j for node in self.inner_nodes for j in node.columns}
        if self.leaf_inputs == "path":
            columns = [tuple(sorted(leaf)) for leaf in leaves]
        else:
            columns = [tuple(sorted(leaf - shared)) for leaf in leaves]
        return dataclasses.replace(self, leaves=tuple(leaves), leaf_columns=tuple(columns))

    def leaf_index(self, active: np.ndarray) -> np.ndarray:
        """Leaf of each row of ``active`` (``-1``: a pattern that is no known leaf)."""
        active = np.asarray(active, dtype=bool)
        if len(active) == 0:
            return np.zeros(0, dtype=int)
        lookup = {leaf: p for p, leaf in enumerate(self.leaves)}
        first, inverse = _distinct_rows(active)
        found = [lookup.get(frozenset(np.flatnonzero(active[i]).tolist()), -1) for i in first]
        return np.asarray(found, dtype=int)[inverse]

    def describe(self, names: Sequence[str] | None = None) -> str:
        """The inner nodes and the leaves, one a line (column names if given)."""

        def show(columns: Iterable[int]) -> str:
            cols = [names[j] if names else str(j) for j in columns]
            return "{" + ", ".join(cols) + "}"

        lines = []
        for v, node in enumerate(self.inner_nodes):
            kind = "root" if node.is_root else f"inner {v}"
            lines.append(f"{kind}: shared {show(node.columns)} over leaves {sorted(node.leaves)}")
        for p, columns in enumerate(self.leaf_columns):
            lines.append(f"leaf {p}: GP over {show(columns)}")
        return "\n".join(lines)


def _distinct_rows(active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For a boolean matrix: the index of one row of each distinct pattern, and for each row
    which of them it equals (``np.unique(active, axis=0)``'s grouping, from the rows packed
    into bytes, which sort much faster than rows of booleans)."""
    if active.shape[1] == 0:
        return np.zeros(1, dtype=int), np.zeros(len(active), dtype=int)
    packed = np.ascontiguousarray(np.packbits(active, axis=1))
    keys = packed.view(np.dtype((np.void, packed.shape[1]))).reshape(-1)
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


@dataclasses.dataclass(frozen=True)
class _Features:
    """Layout of ``z(x)``: for each feature its variance group (one per intercept/column)."""

    groups: np.ndarray
    group_keys: tuple[tuple[tuple[int, ...], int | None], ...]
    #: per group, ``log(1 / g_v)``, ``g_v`` the number of groups of its inner node ``v``
    #: (0 at the root).
    log_group_scale: np.ndarray
    #: per inner node, the ``[start, stop)`` of its features in ``z(x)``.
    node_bounds: tuple[tuple[int, int], ...] = ()
    #: :class:`FeatureRecipe` per tuple of inner nodes, built on first use.
    recipes: dict[tuple[int, ...], FeatureRecipe] = dataclasses.field(
        default_factory=dict, compare=False, repr=False
    )

    def columns_of(self, nodes: Sequence[int]) -> np.ndarray:
        """The positions in ``z(x)`` of the features of ``nodes``, in their order."""
        if not nodes:
            return np.zeros(0, dtype=int)
        return np.concatenate([np.arange(*self.node_bounds[v]) for v in nodes])

    @property
    def n_features(self) -> int:
        return len(self.groups)

    @property
    def n_groups(self) -> int:
        return len(self.group_keys)


@dataclasses.dataclass(frozen=True)
class FeatureRecipe:
    """Where each feature of ``z(x)`` on some inner nodes comes from, so that
    :func:`inner_features` builds it with one gather per kind of feature (memberships, centred
    numerical columns, one-hots, Fourier features) instead of small tensors per node and
    column; the same values in the same order."""

    #: per node, the columns whose largest activity is its membership (padded with the index
    #: of an appended zero column; the root: none, its membership is 1).
    member_columns: torch.Tensor
    is_root: torch.Tensor
    #: numerical columns in the linear basis (centred values).
    numerical: torch.Tensor
    #: per one-hot feature, its position in :func:`~condsamplers.one_hot.one_hot_block`'s
    #: block and its column.
    one_hot_positions: torch.Tensor
    one_hot_columns: torch.Tensor
    #: numerical columns in the Fourier basis, the position of each one's node in the
    #: recipe's nodes and in the tree's, and each one's frequencies and phases (``(J, M)``).
    fourier_columns: torch.Tensor
    fourier_member: torch.Tensor
    fourier_node: torch.Tensor
    frequencies: torch.Tensor
    phases: torch.Tensor
    #: from ``[memberships, numerical, one-hots, Fourier features]`` to the order of ``z(x)``.
    order: torch.Tensor

    @classmethod
    def of(
        cls,
        structure: TreeStructure,
        features: FeatureSpec,
        nodes: Sequence[int],
        fourier: FourierBasis | None,
    ) -> FeatureRecipe:
        """The recipe of ``z(x)`` on ``nodes`` in the linear basis, or with ``fourier`` in
        that Fourier basis."""
        categorical = np.flatnonzero(features.n_categories > 0)
        sizes = features.n_categories[categorical]
        starts = (np.cumsum(sizes) - sizes).tolist()
        block_start = dict(zip(categorical.tolist(), starts, strict=True))
        width = max([1, *(len(structure.inner_nodes[v].columns) for v in nodes)])
        members = np.full((len(nodes), width), features.n_features)
        numerical: list[int] = []
        positions: list[int] = []
        columns: list[int] = []
        # per Fourier column: (column, position of its node, its node, its row in the node's)
        fourier_of: list[tuple[int, int, int, int]] = []
        # (kind, index): 0 membership, 1 centred value, 2 one-hot, 3 Fourier feature
        source: list[tuple[int, int]] = []
        for k, v in enumerate(nodes):
            node = structure.inner_nodes[v]
            if not node.is_root:
                members[k, : len(node.columns)] = node.columns
            source.append((0, k))
            for j in node.columns:
                n = int(features.n_categories[j])
                if n == 0 and fourier is None:
                    source.append((1, len(numerical)))
                    numerical.append(j)
                for c in range(n):
                    source.append((2, len(positions)))
                    positions.append(block_start[j] + c)
                    columns.append(j)
            if fourier is not None:
                for r, j in enumerate(_numerical_columns(node, features)):
                    source += [(3, len(fourier_of) * N_FOURIER + m) for m in range(N_FOURIER)]
                    fourier_of.append((j, k, v, r))
        offset = [0, len(nodes), len(nodes) + len(numerical)]
        offset.append(offset[2] + len(positions))
        long = functools.partial(torch.as_tensor, dtype=torch.long)
        empty = torch.zeros((0, N_FOURIER), dtype=torch.float64)
        frequencies, phases = empty, empty
        if fourier_of:
            assert fourier is not None
            frequencies = torch.stack([fourier.frequencies[v][r] for _, _, v, r in fourier_of])  # type: ignore[index]
            phases = torch.stack([fourier.phases[v][r] for _, _, v, r in fourier_of])  # type: ignore[index]
        return cls(
            long(members),
            torch.as_tensor([structure.inner_nodes[v].is_root for v in nodes], dtype=torch.bool),
            long(numerical),
            long(positions),
            long(columns),
            *(long([f[i] for f in fourier_of]) for i in range(3)),
            frequencies,
            phases,
            long([offset[kind] + i for kind, i in source]),
        )

    def features(
        self,
        X: torch.Tensor,
        on: torch.Tensor,
        features: FeatureSpec,
        log_lengthscales: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """``z(x)`` on the recipe's nodes (:func:`inner_features`; ``log_lengthscales``: one
        per inner node, for the Fourier basis)."""
        padded = torch.cat([on, torch.zeros((on.shape[0], 1), dtype=on.dtype)], dim=1)
        member = padded[:, self.member_columns].amax(dim=2)
        member = torch.where(self.is_root, torch.ones_like(member), member)
        parts = [member, (X[:, self.numerical] - 0.5) * on[:, self.numerical]]
        if len(self.one_hot_positions):
            block = one_hot_block(X, features)[2]
            parts.append(block[:, self.one_hot_positions] * on[:, self.one_hot_columns])
        if len(self.fourier_columns):
            assert log_lengthscales is not None
            scale = torch.exp(-log_lengthscales[self.fourier_node])
            angle = X[:, self.fourier_columns][:, :, None] * self.frequencies * scale[:, None]
            cosines = math.sqrt(2.0 / N_FOURIER) * torch.cos(angle + self.phases)
            on_node = member[:, self.fourier_member]
            parts.append((cosines * on_node[:, :, None]).reshape(X.shape[0], -1))
        return torch.cat(parts, dim=1)[:, self.order]


def _numerical_columns(node: InnerNode, features: FeatureSpec) -> list[int]:
    return [j for j in node.columns if features.n_categories[j] == 0]


def _feature_layout(structure: TreeStructure, features: FeatureSpec, basis: str) -> _Features:
    """Groups of ``z(x)`` per inner node, in :func:`inner_features`'s order: the intercept,
    then the node's columns in order (a categorical one: its one-hot; a numerical one with
    ``basis="linear"``: its centred value), then with ``basis="fourier"`` each numerical
    column's ``N_FOURIER`` Fourier features."""
    groups: list[int] = []
    keys: list[tuple[tuple[int, ...], int | str | None]] = []
    scales: list[float] = []
    bounds: list[tuple[int, int]] = []
    for node in structure.inner_nodes:
        start = len(groups)
        node_key = tuple(sorted(node.leaves)) if node.is_root else node.columns
        first = len(keys)
        keys.append((node_key, None))
        groups.append(len(keys) - 1)
        for j in node.columns:
            k = int(features.n_categories[j])
            if k > 0 or basis == "linear":
                keys.append((node_key, j))
                groups += [len(keys) - 1] * max(1, k)
        if basis == "fourier":
            for j in _numerical_columns(node, features):
                keys.append((node_key, f"fourier {j}"))
                groups += [len(keys) - 1] * N_FOURIER
        n_node = len(keys) - first
        scales += [0.0 if node.is_root else -math.log(n_node)] * n_node
        bounds.append((start, len(groups)))
    return _Features(np.array(groups, dtype=int), tuple(keys), np.array(scales), tuple(bounds))


def nodes_on_rows(structure: TreeStructure, active: np.ndarray) -> list[tuple[int, ...]]:
    """The inner nodes on the path of each row of ``active``: the root, and each node one of
    whose columns is active (:func:`inner_features` is 0 on the others)."""
    d = active.shape[1]
    columns = np.zeros((len(structure.inner_nodes), d), dtype=bool)
    for v, node in enumerate(structure.inner_nodes):
        columns[v, list(node.columns)] = True
    root = np.array([node.is_root for node in structure.inner_nodes])
    on = (active.astype(np.int64) @ columns.T.astype(np.int64) > 0) | root
    return [tuple(np.flatnonzero(row).tolist()) for row in on]


@dataclasses.dataclass(frozen=True)
class FourierBasis:
    """Random Fourier features (Rahimi & Recht 2007) of each numerical shared column ``j`` of
    each inner node ``v``, one column at a time: ``sqrt(2 / M) cos(w_jm x_j / l_v + phase_jm)``,
    ``m = 1..M``, the paper's non-linear extension (sec. 4.3) made additive. ``w_jm`` are
    standard Student-t(5) draws (the spectral density of a Matern-5/2 kernel), fixed per
    column; the length scale ``l_v`` is a hyperparameter fitted with the rest.

    Each column's features form one variance group of ``Sigma_c``, so the inner node's
    function is a sum of one-dimensional functions, ``sum_j h_j(x_j)``, with ``Var h_j``
    fitted per column: a shared parameter whose effect differs from path to path gets a small
    shared part, and the leaf GPs carry the rest. ``frequencies[v]`` and ``phases[v]`` are
    ``(d_v, M)``, ``d_v`` the node's numerical columns (``None`` without any).
    """

    frequencies: tuple[torch.Tensor | None, ...]
    phases: tuple[torch.Tensor | None, ...]

    @classmethod
    def draw(cls, structure: TreeStructure, features: FeatureSpec) -> FourierBasis:
        """Frequencies from a fixed stream: the same tree always gets the same basis."""
        rng = np.random.default_rng(20170806)
        frequencies: list[torch.Tensor | None] = []
        phases: list[torch.Tensor | None] = []
        for node in structure.inner_nodes:
            d = len(_numerical_columns(node, features))
            if d == 0:
                frequencies.append(None)
                phases.append(None)
                continue
            rows = []
            for _ in range(d):
                normal = rng.standard_normal(N_FOURIER)
                scale = np.sqrt(_MATERN_NU / rng.chisquare(_MATERN_NU, N_FOURIER))
                rows.append(normal * scale)
            frequencies.append(torch.as_tensor(np.stack(rows)))
            phase = rng.uniform(0.0, 2.0 * np.pi, d * N_FOURIER).reshape(d, N_FOURIER)
            phases.append(torch.as_tensor(phase))
        return cls(tuple(frequencies), tuple(phases))


def inner_features(
    structure: TreeStructure,
    features: FeatureSpec,
    X: torch.Tensor,
    active: torch.Tensor,
    fourier: FourierBasis | None = None,
    log_lengthscales: torch.Tensor | None = None,
    cache: dict[int, torch.Tensor] | None = None,
    nodes: Sequence[int] | None = None,
    layout: _Features | None = None,
) -> torch.Tensor:
    """``z(x)`` of each row (sec. 2.4): per inner node on the path, ``[1, r_v(x)]``; zeros off it.

    ``r_v(x)``: the one-hot of each categorical column, and of each numerical column either
    its centred value ``x_j - 1/2`` (without ``fourier``: the linear basis of sec. 2.4) or, with
    ``fourier`` and one log length scale per inner node, its random Fourier features (sec.
    4.3, :class:`FourierBasis`). Differentiable in the numerical columns of ``X`` and in
    ``log_lengthscales``. ``cache`` (for a fixed ``X`` without gradient, such as the training
    rows while the length scales are fitted) keeps each node's features that do not depend
    on the length scales between calls. ``nodes``: the features of these inner nodes only
    (:meth:`_Features.columns_of`'s columns; rows whose path holds no other node lose nothing).
    ``layout``: the layout of ``z(x)`` for this ``fourier`` basis, whose
    :class:`FeatureRecipe` then builds ``z(x)`` when there is no ``cache`` (the same values).
    """
    on = active.to(X.dtype)
    chosen = range(len(structure.inner_nodes)) if nodes is None else nodes
    if layout is not None and cache is None:
        key = tuple(chosen)
        if key not in layout.recipes:
            layout.recipes[key] = FeatureRecipe.of(structure, features, key, fourier)
        return layout.recipes[key].features(X, on, features, log_lengthscales)
    parts = []
    one_hots: dict[int, torch.Tensor] | None = None
    for v in chosen:
        node = structure.inner_nodes[v]
        fixed = None if cache is None else cache.get(v)
        if fixed is None:
            one_hots = one_hot_columns(X, features) if one_hots is None else one_hots
            fixed = _fixed_node_features(node, features, X, on, one_hots, fourier is None)
            if cache is not None:
                cache[v] = fixed
        parts.append(fixed)
        member = fixed[:, 0]
        if fourier is not None and fourier.frequencies[v] is not None:
            assert log_lengthscales is not None
            x_v = X[:, _numerical_columns(node, features)]
            angle = x_v[:, :, None] * fourier.frequencies[v] * torch.exp(-log_lengthscales[v])
            cosines = math.sqrt(2.0 / N_FOURIER) * torch.cos(angle + fourier.phases[v])
            cosines = cosines.reshape(X.shape[0], -1)
            parts.append(cosines * member[:, None])
    return torch.cat(parts, dim=1)


def _fixed_node_features(
    node: InnerNode,
    features: FeatureSpec,
    X: torch.Tensor,
    on: torch.Tensor,
    one_hots: dict[int, torch.Tensor],
    linear: bool,
) -> torch.Tensor:
    """The features of inner node ``node`` that no hyperparameter changes: its membership
    (the intercept: 1 on the node's paths), the one-hot of each categorical column (from
    ``one_hots``, :func:`~condsamplers.one_hot.one_hot_columns` of ``X``), and with the
    ``linear`` basis each numerical column's centred value."""
    if node.is_root:
        member = torch.ones(X.shape[0], dtype=X.dtype)
    elif node.columns:
        member = on[:, list(node.columns)].amax(dim=1)
    else:
        member = torch.zeros(X.shape[0], dtype=X.dtype)
    parts = [member[:, None]]
    for j in node.columns:
        if features.n_categories[j] > 0:
            parts.append(one_hots[j] * on[:, j : j + 1])
        elif linear:
            parts.append(((X[:, j] - 0.5) * on[:, j])[:, None])
    return torch.cat(parts, dim=1)
