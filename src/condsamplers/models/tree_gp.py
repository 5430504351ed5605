"""The tree-structured semi-parametric GP of Jenatton, Archambeau, Gonzalez & Seeger (ICML 2017).

Model (eq. 1, with the random *linear* inner-node functions of sec. 2.4)::

    c ~ N(0, Sigma_c)                      weights of the inner nodes, Sigma_c diagonal
    g_p ~ GP(b_p, K_p)                     one GP per leaf (path) p, Matern-5/2
    y_i = g_{p_i}(x_i) + z(x_i)^T c + eps_i,   eps_i ~ N(0, sigma^2)

``z(x)`` concatenates the feature vectors ``r_v(x)`` of the inner nodes ``v`` on the path of
``x`` (zeros for the other nodes): an intercept 1 (sec. 2.1) and the values of the *shared*
parameters that live at ``v`` (sec. 2.4; numerical columns centred, ``x - 1/2``, categorical
ones one-hot); with ``inner_basis="fourier"`` (the default) also ``N_FOURIER`` random Fourier
features of the node's numerical shared columns (the basis expansion of sec. 4.3,
:class:`FourierBasis`), so that shared parameters act non-linearly across leaves.

**The tree from a conditional space.** A leaf is a path of the inferred tree, i.e. a set of
active columns (``FeatureSpec.leaf_patterns``, else the distinct active patterns of the data).
For a column ``j`` let ``P(j)`` be the set of leaves on which it is active. Every distinct
``P(j)`` with two leaves or more is an inner node, whose shared parameters are the columns with
that ``P(j)``; the root (all leaves) always exists. This recovers the paper's trees: in the
small tree of its Fig. 1, ``x1`` is at the root, ``{x2, r8}`` at the node ``x1 = 0``, and the leaf
variables ``x4 .. x7`` at the leaves; for nested layers (``units_i`` active iff ``depth >= i``)
it gives the chain of its Fig. 3 (bottom). A point is on inner node ``v`` when one of ``v``'s
columns is active (the root: always), so the model also scores active patterns it never saw.

**Leaf inputs.** ``leaf_inputs="path"`` (default): ``g_p`` is a GP over every column active on
path ``p``, so shared parameters act non-linearly within a leaf and linearly (through ``c``)
across leaves; ``"leaf"``: only the columns that live at ``p`` alone, as in the paper's
experiments (shared parameters then act linearly only). Length scales are per column and
shared by the leaves where the column appears; the signal variance is per leaf, ``s_p``
(``signal_variance="leaf"``: the paper's ``K_p`` of eq. 1), or one ``s`` for all leaves
(``"shared"``); the noise is shared; the offsets ``b_p`` are per leaf (``offsets="leaf"``, eq. 1)
or one ``b`` for all leaves (``offsets="shared"``).

**Shared offsets.** With ``b_p`` per leaf (fitted, as the paper's hyperparameters), a leaf's
level is estimated from its own observations: after two poor observations a leaf reverts to a
poor level everywhere, also far from them. With one ``b`` (``offsets="shared"``), fitted by
MAP like the rest (its maximum-likelihood value is the generalised-least-squares constant of
ordinary kriging, as in ``ExactGP(mean="gls")``; the N(0, 1) prior shrinks it a little towards
the sample mean), every leaf GP reverts to the common level away from its data, and how far a
leaf departs from it is the leaf GP's own deviation, local to its observations and scaled by its
signal variance. With ``independent=True`` the
leaves then share only that constant: independent GPs per leaf around one level. (With inner
nodes, their intercepts and the one-hot of a categorical column that selects the leaf still
give each leaf a level of its own, with a Gaussian prior.)

**Prior scale of the inner nodes.** ``Sigma_c`` has one variance per group of features of an
inner node ``v`` (its intercept, each shared column, its Fourier features); below the root it
is divided by ``g_v``, the number of groups of ``v``, so that a priori each such node adds a
variance of order 1 to ``z(x)^T c`` (``y`` is standardised), whatever the number of parameters
that live there. With one unit of variance per group (the paper fixes these hyperparameters
and is silent on this) a node holding ten parameters was a priori ten times as variable as a
node holding one: on the CASH space of ``benchmarks/hpo`` the model gave a gradient-boosting
configuration on a path it had not seen a prior standard deviation of 3.5 (the data span about
1), and EI went to the estimator families with the most parameters rather than near the best
configurations. The root is left as it was: it is on every path and fitted from every trial,
and dividing its variances too cost the branching-and-nested benchmark (median final regret
0.4 against 0.1, 10 seeds) while the CASH tasks did not need it.

**Inference** (sec. 2.2-2.3), on standardised ``y``, with ``M_p = K_p + sigma^2 I``,
``r_p = y_p - b_p`` and ``Z_p`` the feature rows of leaf ``p``::

    Lambda_c = Sigma_c^-1 + sum_p Z_p^T M_p^-1 Z_p,      f_c = sum_p Z_p^T M_p^-1 r_p
    log P(y) = -1/2 sum_p r_p^T M_p^-1 r_p + 1/2 f_c^T Lambda_c^-1 f_c
               -1/2 sum_p log|M_p| - 1/2 log|Sigma_c| - 1/2 log|Lambda_c| - n/2 log 2 pi

(eq. 3, written with Woodbury's identity and the determinant lemma), all through Cholesky
factors: ``O(V^3 + sum_p n_p^3)``. It equals the log density of the joint GP of eq. 4,
``N(y; b, Z Sigma_c Z^T + K_block + sigma^2 I)``; ``tests/test_tree_gp.py`` checks this to 1e-8.
Hyperparameters (length scales, ``s``, ``b_p``, ``Sigma_c``, ``sigma^2``) maximise ``log P(y)``
plus log priors: the length-scale prior of :func:`~condsamplers.kernels.log_omega_prior`,
Gamma(2, 1) on ``s`` and on each variance of ``Sigma_c``, Gamma(1.1, 30) on ``sigma^2``,
N(0, 1) on each ``b_p`` (so an offset is defined, 0, for a leaf without data). With
``hyperparameter_samples=S`` the same log posterior is also slice-sampled, ``S`` models.

**Prediction** (sec. 3.2): the posterior of ``g_p(x) + z(x)^T c`` has mean
``k_p(x)^T M_p^-1 r_p + t_p(x)^T Lambda_c^-1 f_c + b_p`` and variance
``S_p(x, x) + t_p(x)^T Lambda_c^-1 t_p(x)`` with ``t_p(x) = z(x) - Z_p^T M_p^-1 k_p(x)``
(:meth:`TreeGP.posterior`); the *path* posterior of ``b_p + z(x)^T c`` used by the path EI of
eq. 6 is :meth:`TreeGP.path_posterior`. ``independent=True`` fixes ``c = 0``: independent GPs
per leaf, the paper's ``independent`` baseline.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import torch

from condsamplers.kernels import (
    MaternKernel,
    log_omega_prior,
    matern52,
    one_hot,
    squared_distances,
)
from condsamplers.log import get_logger
from condsamplers.models.base import Surrogate
from condsamplers.models.fitting import (
    MIN_NOISE,
    Params,
    gamma_log_prior,
    maximise_log_posterior,
    noise_variance_of,
    random_restarts,
    robust_cholesky,
    slice_sample,
    standardise,
)
from condsamplers.space import FeatureSpec
from condsamplers.validation import check_choice, check_int

_logger = get_logger(__name__)

LEAF_INPUTS = ("path", "leaf")
SIGNAL_VARIANCES = ("leaf", "shared")
OFFSETS = ("leaf", "shared")
INNER_BASES = ("linear", "fourier")
#: Random Fourier features per inner node with ``inner_basis="fourier"`` (sec. 4.3).
N_FOURIER = 16
#: Prior mean (and default) of the log length scale of the Fourier features, unit-cube units.
FOURIER_LOG_LENGTHSCALE = math.log(0.5)
#: Degrees of freedom of the Student-t frequencies: the spectral density of Matern-5/2.
_MATERN_NU = 5.0
#: A warm-started fit also starts from the defaults once the data have grown by this factor.
REFRESH_GROWTH = 1.1
#: Slice-sampling sweeps from the MAP values before the first hyperparameter sample is kept.
SLICE_BURN_IN = 4


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
        patterns, inverse = np.unique(active, axis=0, return_inverse=True)
        found = [lookup.get(frozenset(np.flatnonzero(row).tolist()), -1) for row in patterns]
        return np.asarray(found, dtype=int)[inverse.reshape(-1)]

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


@dataclasses.dataclass(frozen=True)
class _Features:
    """Layout of ``z(x)``: for each feature its variance group (one per intercept/column)."""

    groups: np.ndarray
    group_keys: tuple[tuple[tuple[int, ...], int | None], ...]
    #: per group, ``log(1 / g_v)``, ``g_v`` the number of groups of its inner node ``v``
    #: (0 at the root).
    log_group_scale: np.ndarray

    @property
    def n_features(self) -> int:
        return len(self.groups)

    @property
    def n_groups(self) -> int:
        return len(self.group_keys)


def _numerical_columns(node: InnerNode, features: FeatureSpec) -> list[int]:
    return [j for j in node.columns if features.n_categories[j] == 0]


def _feature_layout(structure: TreeStructure, features: FeatureSpec, basis: str) -> _Features:
    groups: list[int] = []
    keys: list[tuple[tuple[int, ...], int | str | None]] = []
    scales: list[float] = []
    for node in structure.inner_nodes:
        node_key = tuple(sorted(node.leaves)) if node.is_root else node.columns
        first = len(keys)
        keys.append((node_key, None))
        groups.append(len(keys) - 1)
        for j in node.columns:
            keys.append((node_key, j))
            groups += [len(keys) - 1] * max(1, int(features.n_categories[j]))
        if basis == "fourier" and _numerical_columns(node, features):
            keys.append((node_key, "fourier"))
            groups += [len(keys) - 1] * N_FOURIER
        n_node = len(keys) - first
        scales += [0.0 if node.is_root else -math.log(n_node)] * n_node
    return _Features(np.array(groups, dtype=int), tuple(keys), np.array(scales))


@dataclasses.dataclass(frozen=True)
class FourierBasis:
    """Random Fourier features (Rahimi & Recht 2007) of the numerical shared columns of each
    inner node: ``sqrt(2 / M) cos(W_v x_v / l_v + phase_v)``, the paper's non-linear extension
    (sec. 4.3). ``W_v`` are standard Student-t(5) draws (the spectral density of a Matern-5/2
    kernel), fixed per node; the length scale ``l_v`` is a hyperparameter fitted with the rest.
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
            normal = rng.standard_normal((d, N_FOURIER))
            scale = np.sqrt(_MATERN_NU / rng.chisquare(_MATERN_NU, N_FOURIER))
            frequencies.append(torch.as_tensor(normal * scale))
            phases.append(torch.as_tensor(rng.uniform(0.0, 2.0 * np.pi, N_FOURIER)))
        return cls(tuple(frequencies), tuple(phases))


def inner_features(
    structure: TreeStructure,
    features: FeatureSpec,
    X: torch.Tensor,
    active: torch.Tensor,
    fourier: FourierBasis | None = None,
    log_lengthscales: torch.Tensor | None = None,
) -> torch.Tensor:
    """``z(x)`` of each row (sec. 2.4): per inner node on the path, ``[1, r_v(x)]``; zeros off it.

    With ``fourier`` (and one log length scale per inner node), ``r_v(x)`` also holds the
    random Fourier features of the node's numerical columns (sec. 4.3). Differentiable in the
    numerical columns of ``X`` and in ``log_lengthscales``.
    """
    on = active.to(X.dtype)
    parts = []
    for v, node in enumerate(structure.inner_nodes):
        if node.is_root:
            member = torch.ones(X.shape[0], dtype=X.dtype)
        elif node.columns:
            member = on[:, list(node.columns)].amax(dim=1)
        else:
            member = torch.zeros(X.shape[0], dtype=X.dtype)
        parts.append(member[:, None])
        for j in node.columns:
            k = int(features.n_categories[j])
            if k > 0:
                parts.append(one_hot(X[:, j], k) * on[:, j : j + 1])
            else:
                parts.append(((X[:, j] - 0.5) * on[:, j])[:, None])
        if fourier is not None and fourier.frequencies[v] is not None:
            assert log_lengthscales is not None
            x_v = X[:, _numerical_columns(node, features)]
            angle = x_v @ fourier.frequencies[v] * torch.exp(-log_lengthscales[v])
            parts.append(math.sqrt(2.0 / N_FOURIER) * torch.cos(angle + fourier.phases[v]))
            parts[-1] = parts[-1] * member[:, None]
    return torch.cat(parts, dim=1)


@dataclasses.dataclass(frozen=True)
class _Bucket:
    """Leaves of similar size, padded to the largest: ``rows (B, m)`` indices into the data
    (padding 0), ``valid (B, m)`` 1 for real rows, ``masks (B, e)`` each leaf's embedding
    coordinates."""

    leaves: torch.Tensor
    rows: torch.Tensor
    valid: torch.Tensor
    masks: torch.Tensor


#: One leaf's Cholesky factor ``L_p`` and ``L_p^-1 [r_p, Z_p]``.
_LeafFactor = tuple[int, torch.Tensor, torch.Tensor]


def _per_leaf(
    values: torch.Tensor, leaf: torch.Tensor | np.ndarray, shared: bool, missing: float
) -> torch.Tensor:
    """``values[p]`` for each leaf ``p`` in ``leaf`` (``missing`` where ``p = -1``, a pattern
    that is no known leaf), or ``values[0]`` for every leaf if ``shared``."""
    if shared:
        return values[0].expand(len(leaf))
    padded = torch.cat([values, torch.full((1,), missing, dtype=torch.float64)])
    index = torch.as_tensor(np.asarray(leaf))
    return padded[torch.where(index < 0, len(padded) - 1, index)]


class TreeGP(Surrogate):
    """Jenatton et al. (2017) tree GP: leaf GPs plus random linear inner-node functions.

    See the module docstring for the model, eq. 1-4 of the paper and how the tree is built.

    Args:
        leaf_inputs: ``"path"`` (leaf GP over every column active on the path) or ``"leaf"``
            (only the columns of that leaf alone, the paper's setting).
        independent: ``c = 0``, independent GPs per leaf (the paper's baseline).
        signal_variance: ``"leaf"`` (a signal variance ``s_p`` per leaf GP, eq. 1's ``K_p``;
            a leaf without data keeps its prior's mode, 1) or ``"shared"`` (one for all).
        inner_basis: ``"linear"`` (sec. 2.4: intercept and shared values) or ``"fourier"``
            (also ``N_FOURIER`` random Fourier features of each node's numerical shared
            columns, sec. 4.3: shared parameters then act non-linearly across leaves too).
        n_restarts: random restarts of a cold hyperparameter fit.
        seed: seed of the random restarts.
        warm_start: what :meth:`warm_start_state` returned after a previous fit.
        max_iter: L-BFGS-B iterations per start.
        min_noise: floor of the noise variance (standardised units).
        offsets: ``"leaf"`` (an offset ``b_p`` per leaf, eq. 1; a leaf without data gets 0,
            its prior's mean) or ``"shared"`` (one ``b`` for every leaf; module docstring).
        hyperparameter_samples: ``0`` (default): the MAP hyperparameters alone. ``S > 0``:
            also ``S`` samples of the hyperparameter posterior by slice sampling, started at
            the MAP values (:func:`~condsamplers.models.fitting.slice_sample`); each is a model
            in :meth:`hyperparameter_models`, and the acquisition averages EI over them, the
            integrated acquisition of DNGO (Snoek et al. 2015, sec. 3.3, eq. 11-12, after
            Snoek, Larochelle & Adams 2012).

    Attributes (after ``fit``): ``structure_`` (:class:`TreeStructure`), ``params_``,
    ``log_marginal_likelihood_`` (eq. 3 at ``params_``, standardised ``y``),
    ``log_posterior_`` (plus the log priors: what the fit maximises), ``samples_`` (the
    models of the hyperparameter samples; empty without them).
    """

    def __init__(
        self,
        leaf_inputs: str = "path",
        independent: bool = False,
        n_restarts: int = 2,
        seed: int | None = None,
        warm_start: dict[str, Any] | None = None,
        max_iter: int = 200,
        min_noise: float = MIN_NOISE,
        inner_basis: str = "fourier",
        signal_variance: str = "shared",
        hyperparameter_samples: int = 0,
        offsets: str = "leaf",
    ) -> None:
        self.offsets = check_choice("offsets", offsets, OFFSETS)
        self.leaf_inputs = check_choice("leaf_inputs", leaf_inputs, LEAF_INPUTS)
        self.signal_variance = check_choice("signal_variance", signal_variance, SIGNAL_VARIANCES)
        self.inner_basis = check_choice("inner_basis", inner_basis, INNER_BASES)
        if not min_noise > 0:
            raise ValueError(f"min_noise must be positive; got {min_noise!r}.")
        self.independent = independent
        self.n_restarts = n_restarts
        self.seed = seed
        self.warm_start = warm_start
        self.max_iter = max_iter
        self.min_noise = min_noise
        check_int("hyperparameter_samples", hyperparameter_samples, minimum=0)
        self.hyperparameter_samples = hyperparameter_samples

    # -- fitting -------------------------------------------------------------------------
    def fit(
        self, X: np.ndarray, active: np.ndarray, y: np.ndarray, features: FeatureSpec
    ) -> TreeGP:
        z, self.y_mean_, self.y_std_ = standardise(y, "TreeGP")
        active = np.asarray(active, dtype=bool)
        observed = [frozenset(np.flatnonzero(row).tolist()) for row in active]
        known = features.leaf_patterns or ()
        self.features_ = features
        self.structure_ = TreeStructure.from_leaves(
            [*known, *observed], features.n_features, self.leaf_inputs
        )
        self.layout_ = _feature_layout(self.structure_, features, self._basis)
        self.fourier_ = (
            FourierBasis.draw(self.structure_, features) if self._basis == "fourier" else None
        )
        self._set_data(X, active, z)
        self.params_ = self._optimise_hyperparameters()
        self._factorise()
        self.samples_: list[TreeGP] = []
        if self.hyperparameter_samples > 0:
            draws = slice_sample(
                self._log_posterior,
                self.params_,
                self.hyperparameter_samples,
                SLICE_BURN_IN,
                1,
                self.seed,
            )
            self.samples_ = [self._with_params(params) for params in draws]
        return self

    def _with_params(self, params: Params) -> TreeGP:
        """This fitted model with other hyperparameters (same data and tree)."""
        other = copy.copy(self)
        other.params_ = params
        other.samples_ = []
        other._factorise()
        return other

    def hyperparameter_models(self) -> list[TreeGP]:
        """One model per hyperparameter sample (``hyperparameter_samples > 0``), else
        ``[self]``."""
        return list(self.samples_) or [self]

    def _set_data(self, X: np.ndarray, active: np.ndarray, z: torch.Tensor) -> None:
        self.X_ = torch.as_tensor(X, dtype=torch.float64)
        self.active_ = torch.as_tensor(active, dtype=torch.bool)
        self.z_ = z
        self.masks_: dict[int, torch.Tensor] = {}
        self.leaf_of_ = self.structure_.leaf_index(np.asarray(active, dtype=bool))
        # The Fourier basis depends on fitted length scales: recomputed per evaluation instead.
        linear = self.fourier_ is None
        self.Z_ = self.inner_features(self.X_, self.active_).detach() if linear else None
        self.rows_ = {
            int(p): torch.as_tensor(np.flatnonzero(self.leaf_of_ == p))
            for p in np.unique(self.leaf_of_)
        }
        self.buckets_ = self._buckets()

    @property
    def n_leaves(self) -> int:
        return len(self.structure_.leaves)

    @property
    def _n_offsets(self) -> int:
        return self.n_leaves if self.offsets == "leaf" else 1

    def _leaf_offsets(self, params: Params, leaf: torch.Tensor | np.ndarray) -> torch.Tensor:
        """Offset ``b_p`` of each leaf in ``leaf`` (``-1``, a pattern that is no known leaf:
        0, its prior's mean, or the shared ``b``)."""
        return _per_leaf(params["offsets"], leaf, self.offsets == "shared", 0.0)

    @property
    def _n_amplitudes(self) -> int:
        return self.n_leaves if self.signal_variance == "leaf" else 1

    def _amplitudes(self, params: Params, leaf: torch.Tensor | np.ndarray) -> torch.Tensor:
        """Signal variance ``s_p`` of each leaf in ``leaf`` (``-1``, a pattern that is no known
        leaf: 1, what a leaf without data gets from its prior)."""
        shared = self.signal_variance == "shared"
        return _per_leaf(torch.exp(params["log_amplitude"]), leaf, shared, 1.0)

    @property
    def _basis(self) -> str:
        return "linear" if self.independent else self.inner_basis

    def inner_features(
        self, X: torch.Tensor, active: torch.Tensor, params: Params | None = None
    ) -> torch.Tensor:
        """``z(x)`` of each row; an empty ``(n, 0)`` matrix for the independent model.

        ``params`` (default: the fitted ones) matter only for the Fourier basis.
        """
        if self.independent:
            return torch.zeros((X.shape[0], 0), dtype=torch.float64)
        if self.fourier_ is None:
            return inner_features(self.structure_, self.features_, X, active)
        params = self.params_ if params is None else params
        return inner_features(
            self.structure_,
            self.features_,
            X,
            active,
            self.fourier_,
            params["log_fourier_lengthscale"],
        )

    def _training_features(self, params: Params) -> torch.Tensor:
        """``z(x_i)`` of the training rows (fixed, except the Fourier basis's length scales)."""
        if self.Z_ is not None:
            return self.Z_
        return self.inner_features(self.X_, self.active_, params)

    def _default_params(self) -> Params:
        d = self.features_.n_features
        offsets = torch.zeros(self._n_offsets, dtype=torch.float64)
        if self.offsets == "leaf":
            for p, rows in getattr(self, "rows_", {}).items():
                offsets[p] = self.z_[rows].mean()
        params = {
            "log_omega": torch.zeros(d, dtype=torch.float64),
            "log_amplitude": torch.zeros(self._n_amplitudes, dtype=torch.float64),
            "log_noise": torch.tensor([math.log(1e-2)], dtype=torch.float64),
            "offsets": offsets,
        }
        if not self.independent:
            params["log_variance_c"] = torch.zeros(self.layout_.n_groups, dtype=torch.float64)
        if self._basis == "fourier":
            n_nodes = len(self.structure_.inner_nodes)
            params["log_fourier_lengthscale"] = torch.full(
                (n_nodes,), FOURIER_LOG_LENGTHSCALE, dtype=torch.float64
            )
        return params

    def _starts(self) -> list[Params]:
        """Cold fit: defaults and random restarts. Warm fit: the previous optimum, plus the
        defaults once the data have grown by ``REFRESH_GROWTH`` since the last fit that
        included them (between two BO steps the optimum moves little; the warm start then
        converges in a few iterations while a start from the defaults takes tens)."""
        default = self._default_params()
        warm = self._warm_params(default)
        n = len(self.z_)
        if warm is None:
            self.full_fit_n_ = n
            return [default, *random_restarts(default, self.n_restarts, self.seed)]
        last_full = int(self.warm_start.get("full_fit_n", 0))  # type: ignore[union-attr]
        if n < REFRESH_GROWTH * last_full:
            self.full_fit_n_ = last_full
            return [warm]
        self.full_fit_n_ = n
        return [warm, default]

    def warm_start_state(self) -> dict[str, Any]:
        """What the next fit needs to start from this one (hyperparameters by meaning)."""
        return {
            "params": {k: v.detach().clone() for k, v in self.params_.items()},
            "leaves": self.structure_.leaves,
            "group_keys": self.layout_.group_keys,
            "full_fit_n": self.full_fit_n_,
        }

    def _warm_params(self, default: Params) -> Params | None:
        """The previous fit's values, matched by leaf / feature group; ``None`` if unusable."""
        state = self.warm_start
        if not state or state["params"]["log_omega"].shape != default["log_omega"].shape:
            return None
        old = state["params"]
        params = {
            k: old[k].clone() if k in old and old[k].shape == v.shape else v.clone()
            for k, v in default.items()
        }
        old_leaf = {leaf: p for p, leaf in enumerate(state["leaves"])}
        per_leaf = (["offsets"] if self.offsets == "leaf" else []) + (
            ["log_amplitude"] if self.signal_variance == "leaf" else []
        )
        for p, leaf in enumerate(self.structure_.leaves):
            for key in per_leaf:
                matched = leaf in old_leaf and len(old[key]) == len(state["leaves"])
                params[key][p] = old[key][old_leaf[leaf]] if matched else default[key][p]
        if not self.independent and "log_variance_c" in old:
            old_group = {key: g for g, key in enumerate(state["group_keys"])}
            params["log_variance_c"] = torch.stack(
                [
                    old["log_variance_c"][old_group[key]]
                    if key in old_group
                    else default["log_variance_c"][g]
                    for g, key in enumerate(self.layout_.group_keys)
                ]
            )
        return params

    def _optimise_hyperparameters(self) -> Params:
        params = maximise_log_posterior(
            self._log_posterior, self._starts(), len(self.z_), self.max_iter
        )
        if params is None:
            _logger.warning("Tree GP hyperparameter fit failed from every start; using defaults.")
            params = self._default_params()
        with torch.no_grad():
            self.log_marginal_likelihood_ = float(self._log_evidence(params))
            self.log_posterior_ = float(self._log_posterior(params))
        return params

    def _log_posterior(self, params: Params) -> torch.Tensor:
        amplitude = torch.exp(params["log_amplitude"])
        noise = torch.exp(params["log_noise"])[0] + self.min_noise
        log_prior = (
            log_omega_prior(params["log_omega"])
            + gamma_log_prior(amplitude, 2.0, 1.0).sum()
            + gamma_log_prior(noise, 1.1, 30.0)
            - 0.5 * (params["offsets"] ** 2).sum()
        )
        if not self.independent:
            variance = torch.exp(params["log_variance_c"])
            log_prior = log_prior + gamma_log_prior(variance, 2.0, 1.0).sum()
        if "log_fourier_lengthscale" in params:
            shift = params["log_fourier_lengthscale"] - FOURIER_LOG_LENGTHSCALE
            log_prior = log_prior - 0.5 * (shift**2).sum()
        return self._log_evidence(params) + log_prior

    # -- the pieces of eq. 3 ---------------------------------------------------------------
    def _embedding(self, X: torch.Tensor, active: torch.Tensor, params: Params) -> torch.Tensor:
        """Matern embedding over all columns; a leaf's kernel uses only its own columns."""
        return MaternKernel().embed(X, active, {"log_omega": params["log_omega"]}, self.features_)

    def _leaf_covariance(
        self, p: int, emb_a: torch.Tensor, emb_b: torch.Tensor, params: Params
    ) -> torch.Tensor:
        """``K_p`` between two sets of rows of leaf ``p`` (``s * matern52`` on its columns)."""
        mask = self._leaf_embedding_mask(p)
        sq = squared_distances(emb_a * mask, emb_b * mask)
        return self._amplitudes(params, np.array([p]))[0] * matern52(sq)

    def _leaf_embedding_mask(self, p: int) -> torch.Tensor:
        """Which embedding coordinates belong to leaf ``p``'s input columns."""
        if p not in self.masks_:
            # MaternKernel.embed lists numerical columns first, then each categorical one-hot.
            n_categories = self.features_.n_categories
            categorical = np.flatnonzero(n_categories > 0)
            numerical = np.flatnonzero(n_categories == 0)
            owner = np.concatenate([numerical, np.repeat(categorical, n_categories[categorical])])
            keep = np.isin(owner, self.structure_.leaf_columns[p])
            self.masks_[p] = torch.as_tensor(keep, dtype=torch.float64)
        return self.masks_[p]

    def _buckets(self) -> list[_Bucket]:
        """Leaves with data, grouped by similar size and padded, for batched Cholesky."""
        sizes = sorted((len(rows), p) for p, rows in self.rows_.items())
        groups: list[list[tuple[int, int]]] = []
        for size, p in sizes:
            smallest = groups[-1][0][0] if groups else 0
            if not groups or size > max(1.5 * smallest, smallest + 8):
                groups.append([])
            groups[-1].append((size, p))
        buckets = []
        for group in groups:
            m = group[-1][0]
            rows = torch.zeros((len(group), m), dtype=torch.long)
            valid = torch.zeros((len(group), m), dtype=torch.float64)
            for b, (size, p) in enumerate(group):
                rows[b, :size] = self.rows_[p]
                valid[b, :size] = 1.0
            leaves = torch.as_tensor([p for _, p in group])
            masks = torch.stack([self._leaf_embedding_mask(p) for _, p in group])
            buckets.append(_Bucket(leaves, rows, valid, masks))
        return buckets

    def _leaf_terms(
        self, params: Params, log: bool
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, list[_LeafFactor]]:
        """The per-leaf sums of eq. 3: ``sum r_p^T M_p^-1 r_p``, ``sum log|M_p|``, ``f_c``,
        ``sum Z_p^T M_p^-1 Z_p``, and each leaf's ``(p, L_p, A_p = L_p^-1 [r_p, Z_p])``.

        Leaves are batched by size; padding rows carry an identity block (log-determinant 0,
        no residual, no features), so each leaf's factor is the top-left block of its batch's.
        """
        noise = torch.exp(params["log_noise"])[0] + self.min_noise
        emb = self._embedding(self.X_, self.active_, params)
        quad = torch.zeros((), dtype=torch.float64)
        log_det = torch.zeros((), dtype=torch.float64)
        Z = self._training_features(params)
        d_c = Z.shape[1]
        f_c = torch.zeros(d_c, dtype=torch.float64)
        gram = torch.zeros((d_c, d_c), dtype=torch.float64)
        factors: list[_LeafFactor] = []
        for bucket in self.buckets_:
            E = emb[bucket.rows] * bucket.masks[:, None, :]
            sq = (E * E).sum(-1)
            sq = (sq[:, :, None] + sq[:, None, :] - 2.0 * E @ E.transpose(1, 2)).clamp_min(0.0)
            both = bucket.valid[:, :, None] * bucket.valid[:, None, :]
            eye = torch.eye(E.shape[1], dtype=torch.float64)
            amplitude = self._amplitudes(params, bucket.leaves)[:, None, None]
            K = (
                amplitude * matern52(sq) * both
                + eye * (noise * bucket.valid + 1.0 - bucket.valid)[:, None, :]
            )
            L = robust_cholesky(K, log=log)
            offsets = self._leaf_offsets(params, bucket.leaves)
            r = (self.z_[bucket.rows] - offsets[:, None]) * bucket.valid
            rhs = torch.cat([r[..., None], Z[bucket.rows] * bucket.valid[..., None]], dim=2)
            A = torch.linalg.solve_triangular(L, rhs, upper=False)
            quad = quad + (A[..., 0] ** 2).sum()
            log_det = log_det + 2.0 * torch.log(L.diagonal(dim1=-2, dim2=-1)).sum()
            f_c = f_c + torch.einsum("bmi,bm->i", A[..., 1:], A[..., 0])
            gram = gram + torch.einsum("bmi,bmj->ij", A[..., 1:], A[..., 1:])
            for b, p in enumerate(bucket.leaves.tolist()):
                size = len(self.rows_[p])
                factors.append((p, L[b, :size, :size], A[b, :size]))
        return quad, log_det, f_c, gram, factors

    def _log_variance_c(self, params: Params) -> torch.Tensor:
        """Log of the diagonal of ``Sigma_c``, one entry per feature of ``z(x)``: the group's
        variance (Gamma(2, 1) prior) over ``g_v``, the number of groups of its inner node
        (module docstring, "Prior scale of the inner nodes")."""
        groups = torch.as_tensor(self.layout_.groups)
        scale = torch.as_tensor(self.layout_.log_group_scale, dtype=torch.float64)
        return (params["log_variance_c"] + scale)[groups]

    def _c_precision_factor(self, params: Params, gram: torch.Tensor, log: bool) -> torch.Tensor:
        """Cholesky factor of ``Lambda_c = Sigma_c^-1 + sum_p Z_p^T M_p^-1 Z_p``."""
        diagonal = torch.exp(-self._log_variance_c(params))
        return robust_cholesky(torch.diag(diagonal) + gram, log=log)

    def _log_evidence(self, params: Params) -> torch.Tensor:
        """``log P(y)`` of eq. 3 for the standardised ``y``."""
        quad, log_det, f_c, gram, _ = self._leaf_terms(params, log=False)
        if len(f_c):
            L_c = self._c_precision_factor(params, gram, log=False)
            u = torch.linalg.solve_triangular(L_c, f_c[:, None], upper=False)[:, 0]
            quad = quad - u @ u
            log_det = log_det + self._log_variance_c(params).sum()
            log_det = log_det + 2.0 * torch.log(L_c.diagonal()).sum()
        n = len(self.z_)
        return -0.5 * quad - 0.5 * log_det - 0.5 * n * math.log(2.0 * math.pi)

    def _factorise(self) -> None:
        """Cache what prediction needs: per leaf ``L_p``, ``M_p^-1 r_p``, ``M_p^-1 Z_p``;
        ``L`` of ``Lambda_c`` and the posterior mean ``mu_c = Lambda_c^-1 f_c``."""
        with torch.no_grad():
            params = self.params_
            self.train_embedding_ = self._embedding(self.X_, self.active_, params)
            _, _, f_c, gram, factors = self._leaf_terms(params, log=True)
            self.leaf_cache_: dict[int, tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = {}
            for p, L, A in factors:
                solved = torch.linalg.solve_triangular(L.T, A, upper=True)  # M_p^-1 [r_p, Z_p]
                self.leaf_cache_[p] = (L, solved[:, 0], solved[:, 1:])
            if len(f_c):
                self.variance_c_ = torch.exp(self._log_variance_c(params))
                self.L_c_ = self._c_precision_factor(params, gram, log=True)
                self.mu_c_ = torch.cholesky_solve(f_c[:, None], self.L_c_)[:, 0]
            else:
                self.variance_c_ = torch.zeros(0, dtype=torch.float64)
                self.L_c_ = torch.zeros((0, 0), dtype=torch.float64)
                self.mu_c_ = torch.zeros(0, dtype=torch.float64)

    # -- prediction ----------------------------------------------------------------------
    def _c_variance(self, T: torch.Tensor) -> torch.Tensor:
        """``t^T Lambda_c^-1 t`` for each row ``t`` of ``T``."""
        if T.shape[1] == 0:
            return torch.zeros(T.shape[0], dtype=torch.float64)
        v = torch.linalg.solve_triangular(self.L_c_, T.T, upper=False)
        return (v * v).sum(0)

    def noise_variance(self) -> float:
        """The fitted ``sigma^2`` of eq. 1 (module docstring), in the units of ``y``."""
        return noise_variance_of(self.params_, self.min_noise, self.y_std_)

    def posterior(
        self, X: torch.Tensor, active: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean and variance of ``g_p(x) + z(x)^T c`` (sec. 3.2), in the units of ``y``."""
        leaf = self.structure_.leaf_index(active.detach().numpy().astype(bool))
        Z = self.inner_features(X, active)
        emb = self._embedding(X, active, self.params_)
        n = X.shape[0]
        amplitude = self._amplitudes(self.params_, leaf)
        k_alpha = torch.zeros(n, dtype=torch.float64)
        explained = torch.zeros(n, dtype=torch.float64)
        k_W = torch.zeros_like(Z)
        for p, (L, alpha, W) in self.leaf_cache_.items():
            rows = torch.as_tensor(np.flatnonzero(leaf == p))
            if len(rows) == 0:
                continue
            train = self.train_embedding_[self.rows_[p]]
            k = self._leaf_covariance(p, emb[rows], train, self.params_)
            v = torch.linalg.solve_triangular(L, k.T, upper=False)
            k_alpha = k_alpha.index_put((rows,), k @ alpha)
            explained = explained.index_put((rows,), (v * v).sum(0))
            k_W = k_W.index_put((rows,), k @ W)
        T = Z - k_W
        mean = self._leaf_offsets(self.params_, leaf) + k_alpha + T @ self.mu_c_
        var = (amplitude - explained + self._c_variance(T)).clamp_min(1e-12)
        return mean * self.y_std_ + self.y_mean_, var * self.y_std_**2

    def path_posterior(
        self, X: torch.Tensor, active: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean and variance of ``b_p + z(x)^T c`` (the quantity of the path EI, eq. 6).

        Depends on ``x`` only through the path and the shared parameters in ``z(x)``.
        """
        leaf = self.structure_.leaf_index(active.detach().numpy().astype(bool))
        Z = self.inner_features(X, active)
        mean = self._leaf_offsets(self.params_, leaf) + Z @ self.mu_c_
        var = self._c_variance(Z).clamp_min(1e-12)
        return mean * self.y_std_ + self.y_mean_, var * self.y_std_**2

    @property
    def has_path_posterior(self) -> bool:
        """Whether the path EI is defined (not for the independent model, where c = 0)."""
        return not self.independent

    def condition_on(self, X: np.ndarray, active: np.ndarray, y: np.ndarray) -> TreeGP:
        other = TreeGP(
            self.leaf_inputs,
            self.independent,
            self.n_restarts,
            self.seed,
            self.warm_start,
            self.max_iter,
            self.min_noise,
            self.inner_basis,
            self.signal_variance,
            offsets=self.offsets,
        )
        other.y_mean_, other.y_std_ = self.y_mean_, self.y_std_
        other.features_ = self.features_
        active = np.asarray(active, dtype=bool)
        other.structure_ = self.structure_.with_leaves(
            frozenset(np.flatnonzero(row).tolist()) for row in active
        )
        other.layout_ = self.layout_
        other.fourier_ = self.fourier_
        offsets = self.params_["offsets"]
        if self.offsets == "leaf":  # a new leaf (a pending pattern): no data, prior mean 0
            new = torch.zeros(other.n_leaves - self.n_leaves, dtype=torch.float64)
            offsets = torch.cat([offsets, new])
        other.params_ = {**self.params_, "offsets": offsets}
        if self.signal_variance == "leaf":  # a new leaf (a pending pattern): no data, prior 1
            log_amplitude = torch.zeros(other.n_leaves, dtype=torch.float64)
            log_amplitude[: self.n_leaves] = self.params_["log_amplitude"]
            other.params_["log_amplitude"] = log_amplitude
        z_new = (torch.as_tensor(y, dtype=torch.float64) - self.y_mean_) / self.y_std_
        X_all = np.concatenate([self.X_.numpy(), np.asarray(X, dtype=float)])
        active_all = np.concatenate([self.active_.numpy(), active])
        other._set_data(X_all, active_all, torch.cat([self.z_, z_new]))
        other._factorise()
        other.samples_ = []
        return other
