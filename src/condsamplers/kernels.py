"""Kernels over conditional spaces (torch): correlation functions ``R(x, x')`` of encoded
configurations ``(x, active)``; a GP's covariance is ``s * R``.

The arc and Matern kernels are ``R = matern52(||phi(x) - phi(x')||)`` where ``phi`` embeds a
configuration into a Euclidean space: an explicit embedding makes the kernel positive definite for
any hyperparameters (Swersky et al. 2014, sec. 2.2: "embed each dimension ... then use the
embedded input space within any kernel that is defined in terms of Euclidean distance"). The
branching-and-nested kernel of Zhang et al. is a product of correlation functions, positive
definite under a condition on its hyperparameters that its parametrisation enforces
(:class:`BranchingNestedKernel`).

Notation: ``n`` rows, ``d`` columns (one per parameter), ``omega[i] > 0`` a per-column scale
(an inverse length scale), ``rho[i] in (0, 1)`` the per-column arc angle.
"""

from __future__ import annotations

import abc
import dataclasses
import functools
import math

import numpy as np
import torch

from condsamplers.one_hot import one_hot, one_hot_block, one_hot_columns  # noqa: F401 (importable from here)
from condsamplers.space import FeatureSpec

Params = dict[str, torch.Tensor]


def matern52(sqdist: torch.Tensor) -> torch.Tensor:
    """Matern-5/2 correlation ``(1 + sqrt5 r + 5/3 r^2) exp(-sqrt5 r)`` from ``r^2``."""
    r = torch.sqrt(sqdist.clamp_min(1e-30))
    sqrt5_r = math.sqrt(5.0) * r
    return (1.0 + sqrt5_r + (5.0 / 3.0) * sqdist) * torch.exp(-sqrt5_r)


def squared_distances(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Pairwise squared Euclidean distances between the rows of ``a`` and ``b``."""
    sq = (a * a).sum(-1)[:, None] + (b * b).sum(-1)[None, :] - 2.0 * a @ b.T
    return sq.clamp_min(0.0)


class Kernel(abc.ABC):
    """A correlation function over encoded configurations; hyperparameters live in ``Params``.

    Raw (unconstrained) hyperparameters are optimised; the kernel maps them to their
    constrained values. :meth:`log_prior` is the log density of the priors on the raw values,
    up to a constant.
    """

    name: str
    #: the constant prior mean :class:`~condsamplers.models.gp.ExactGP` uses with this kernel
    #: unless told otherwise: ``"sample"`` (the sample mean) or ``"gls"`` (estimated by GLS)
    default_mean: str = "sample"

    @abc.abstractmethod
    def initial_params(self, features: FeatureSpec) -> Params:
        """Default raw hyperparameters for columns ``features``."""

    @abc.abstractmethod
    def correlation(
        self,
        X_a: torch.Tensor,
        active_a: torch.Tensor,
        X_b: torch.Tensor,
        active_b: torch.Tensor,
        params: Params,
        features: FeatureSpec,
    ) -> torch.Tensor:
        """``R(x_a, x_b)`` for every pair of rows, ``(n_a, n_b)``, 1 on the diagonal."""

    @abc.abstractmethod
    def log_prior(self, params: Params) -> torch.Tensor:
        """Log prior density of the hyperparameters (up to a constant), as a density of the raw
        (log / logit) parameters that are optimised, change of variables included: the other
        convention's shorter length scales sent EI to the wrong branches."""

    def length_scales(self, params: Params) -> np.ndarray | None:
        """Per encoded column, the distance in the unit cube over which the correlation
        falls appreciably (``None``: the kernel has no such per-column scale)."""
        return None

    def random_params(self, features: FeatureSpec, generator: torch.Generator) -> Params:
        """A random restart point near the defaults."""
        init = self.initial_params(features)
        return {
            k: v + torch.randn(v.shape, generator=generator, dtype=v.dtype)
            for k, v in init.items()
        }


class EmbeddingKernel(Kernel):
    """A kernel defined by an embedding: ``R = matern52(||phi(x) - phi(x')||)``."""

    @abc.abstractmethod
    def embed(
        self, X: torch.Tensor, active: torch.Tensor, params: Params, features: FeatureSpec
    ) -> torch.Tensor:
        """Embedding ``(n, d) -> (n, e)`` whose Euclidean distances define the kernel."""

    def correlation(
        self,
        X_a: torch.Tensor,
        active_a: torch.Tensor,
        X_b: torch.Tensor,
        active_b: torch.Tensor,
        params: Params,
        features: FeatureSpec,
    ) -> torch.Tensor:
        emb_a = self.embed(X_a, active_a, params, features)
        emb_b = emb_a if X_b is X_a else self.embed(X_b, active_b, params, features)
        return matern52(squared_distances(emb_a, emb_b))


def log_omega_prior(log_omega: torch.Tensor) -> torch.Tensor:
    """Log prior of per-column inverse length scales ``omega``, as a density of ``log omega``."""
    # Optuna's heuristic prior on inverse squared length scales, on omega^2 (optuna/_gp/prior.py),
    # as a density of log(omega^2) (Jacobian omega^2 included): mode at omega ~ 3.2.
    omega2 = torch.exp(2.0 * log_omega)
    return -(0.1 / omega2 + 0.1 * omega2).sum() + (2.0 * log_omega).sum()


class MaternKernel(EmbeddingKernel):
    """ARD Matern-5/2 on the encoding with inactive columns imputed by 0 (the arc paper's "GP").

    Numerical column ``i`` embeds as ``omega_i x_i``; a categorical column as
    ``omega_i / sqrt(2) * onehot(x_i)`` (distance ``omega_i`` between two different choices).
    The activity mask is ignored: an inactive column holds 0, the value the encoding stores.
    """

    name = "matern"

    def initial_params(self, features: FeatureSpec) -> Params:
        return {"log_omega": torch.zeros(features.n_features, dtype=torch.float64)}

    def embed(
        self, X: torch.Tensor, active: torch.Tensor, params: Params, features: FeatureSpec
    ) -> torch.Tensor:
        omega = torch.exp(params["log_omega"])
        parts = []
        numerical = torch.as_tensor(~features.is_categorical)
        if bool(numerical.any()):
            parts.append(X[:, numerical] * omega[numerical])
        columns, sizes, onehot = one_hot_block(X, features)
        if len(columns):
            scale = omega[torch.as_tensor(columns)] / math.sqrt(2.0)
            parts.append(onehot * torch.repeat_interleave(scale, torch.as_tensor(sizes)))
        return torch.cat(parts, dim=1)

    def log_prior(self, params: Params) -> torch.Tensor:
        return log_omega_prior(params["log_omega"])

    def length_scales(self, params: Params) -> np.ndarray:
        """``1 / omega_i``: the embedding ``omega_i x_i`` moves by 1 over that distance."""
        return np.exp(-params["log_omega"].detach().numpy())


@functools.lru_cache(maxsize=64)
def _interleaved(sizes: tuple[int, ...]) -> torch.Tensor:
    """The column order that takes ``[blocks of sizes..., one column per block]`` to each
    block followed by its own column (built once per layout: every embedding asks it)."""
    ends = np.cumsum(sizes)
    order: list[int] = []
    for b, size in enumerate(sizes):
        order += [*range(ends[b] - size, ends[b]), ends[-1] + b]
    return torch.as_tensor(order, dtype=torch.long)


class ArcKernel(EmbeddingKernel):
    """The arc kernel of Swersky et al. (2014), eq. 3-4, with Matern-5/2 on the embedding.

    Numerical column ``i`` (scaled to [0, 1]) embeds, eq. 3, as
    ``g_i(x) = omega_i [sin(pi rho_i x_i), cos(pi rho_i x_i)]`` when active and ``[0, 0]`` when
    inactive, so (eq. 4) two inactive points are at distance 0, an active and an inactive one at
    ``omega_i``, and two active ones at ``omega_i sqrt(2) sqrt(1 - cos(pi rho_i (x_i - x'_i)))``.

    Categorical columns (not treated in the paper; our choice): the ``K`` choices sit at the
    vertices of a regular simplex on the sphere of radius ``omega_i`` around the inactive point,
    ``g_i(x) = omega_i [rho_i onehot(x_i), sqrt(1 - rho_i^2)]``: two different active choices are
    at distance ``omega_i sqrt(2) rho_i``, an active and an inactive point at ``omega_i``, as for
    numerical columns.
    """

    name = "arc"

    def initial_params(self, features: FeatureSpec) -> Params:
        d = features.n_features
        return {
            "log_omega": torch.zeros(d, dtype=torch.float64),
            "logit_rho": torch.zeros(d, dtype=torch.float64),
        }

    def embed(
        self, X: torch.Tensor, active: torch.Tensor, params: Params, features: FeatureSpec
    ) -> torch.Tensor:
        omega = torch.exp(params["log_omega"])
        rho = torch.sigmoid(params["logit_rho"])
        on = active.to(X.dtype)
        parts = []
        numerical = torch.as_tensor(~features.is_categorical)
        if bool(numerical.any()):
            angle = math.pi * rho[numerical] * X[:, numerical]
            scale = omega[numerical] * on[:, numerical]
            parts += [scale * torch.sin(angle), scale * torch.cos(angle)]
        columns, sizes, block = one_hot_block(X, features)
        if len(columns):  # per column: [rho onehot, sqrt(1 - rho^2)] * omega * active
            index, widths = torch.as_tensor(columns), torch.as_tensor(sizes)
            onehot = block * torch.repeat_interleave(rho[index], widths)
            radial = torch.sqrt(1.0 - rho[index] ** 2).expand(X.shape[0], len(columns))
            scale = torch.repeat_interleave(omega[index] * on[:, index], widths + 1, dim=1)
            order = _interleaved(tuple(sizes.tolist()))
            parts.append(torch.cat([onehot, radial], dim=1)[:, order] * scale)
        return torch.cat(parts, dim=1)

    def log_prior(self, params: Params) -> torch.Tensor:
        # Beta(2, 2) on rho, as a density of logit(rho) (Jacobian included): rho^2 (1 - rho)^2.
        logit = params["logit_rho"]
        log_rho = torch.nn.functional.logsigmoid(logit)
        log_one_minus = torch.nn.functional.logsigmoid(-logit)
        return log_omega_prior(params["log_omega"]) + 2.0 * (log_rho + log_one_minus).sum()

    def length_scales(self, params: Params) -> np.ndarray:
        """``1 / (pi rho_i omega_i)``: eq. 3's embedding of an active column moves by 1 over
        that distance near any ``x_i`` (its arc length is ``omega_i pi rho_i |x_i - x'_i|``)."""
        rho = torch.sigmoid(params["logit_rho"])
        return (1.0 / (math.pi * rho * torch.exp(params["log_omega"]))).detach().numpy()


@dataclasses.dataclass(frozen=True)
class _BranchingLayout:
    """Roles of the columns in :class:`BranchingNestedKernel` (see its docstring).

    ``order``: branching columns, deepest first (the order in which ``gamma`` is built);
    ``children[z]``: for each branching column, ``(value, columns active under it)`` pairs;
    ``phi_slot[j]``: first entry of ``log_phi`` for nested column ``j`` (one per branch value).
    """

    parents: tuple[int, ...]
    branch_values: tuple[np.ndarray, ...]
    root_numerical: tuple[int, ...]
    indicator: tuple[int, ...]
    nested: tuple[int, ...]
    order: tuple[int, ...]
    children: dict[int, tuple[tuple[float, tuple[int, ...]], ...]]
    gamma_slot: dict[int, int]
    phi_slot: dict[int, int]
    n_phi: int
    #: for each nested column, per entry of ``children[parent]``: the index of that value in
    #: the column's ``branch_values`` (``-1``: the column is not active under it), then ``-1``
    #: once more for an inactive parent.
    position_under: dict[int, torch.Tensor]
    #: all columns, parents before children
    by_depth: tuple[int, ...]

    @classmethod
    def of(cls, features: FeatureSpec) -> _BranchingLayout:
        d = features.n_features
        parents = tuple(features.parents) if features.parents is not None else (-1,) * d
        values = features.branch_values if features.branch_values is not None else ((),) * d
        branching = sorted({p for p in parents if p >= 0})
        categorical = features.is_categorical
        roots = [j for j in range(d) if parents[j] < 0 and j not in branching]
        nested = [j for j in range(d) if parents[j] >= 0 and j not in branching]
        indicator = [*branching, *(j for j in roots if categorical[j])]
        children: dict[int, tuple[tuple[float, tuple[int, ...]], ...]] = {}
        for z in branching:
            by_value: dict[float, list[int]] = {}
            for j in range(d):
                if parents[j] == z:
                    for v in values[j]:
                        by_value.setdefault(float(v), []).append(j)
            children[z] = tuple((v, tuple(cols)) for v, cols in sorted(by_value.items()))
        phi_slot, n_phi = {}, 0
        for j in nested:
            phi_slot[j] = n_phi
            n_phi += max(1, len(values[j]))
        position_under = {
            j: torch.tensor(
                [_index_of(values[j], v) if j in cols else -1 for v, cols in children[parents[j]]]
                + [-1]
            )
            for j in range(d)
            if parents[j] >= 0
        }
        return cls(
            parents=parents,
            branch_values=tuple(np.asarray(v, dtype=float) for v in values),
            root_numerical=tuple(j for j in roots if not categorical[j]),
            indicator=tuple(indicator),
            nested=tuple(nested),
            order=tuple(sorted(branching, key=lambda z: -_depth(parents, z))),
            children=children,
            gamma_slot={j: k for k, j in enumerate(indicator)},
            phi_slot=phi_slot,
            n_phi=n_phi,
            position_under=position_under,
            by_depth=tuple(sorted(range(d), key=lambda j: _depth(parents, j))),
        )


def _index_of(values: tuple[float, ...], value: float) -> int:
    return int(np.argmin(np.abs(np.asarray(values, dtype=float) - value)))


def _depth(parents: tuple[int, ...], j: int) -> int:
    depth = 0
    while parents[j] >= 0:
        j, depth = parents[j], depth + 1
    return depth


class BranchingNestedKernel(Kernel):
    """The branching-and-nested kernel of Zhang, Hung, Lin and Liu, generalised to a tree.

    Eq. 4-5 and Definition 1: ``R(x, x') = R_theta(w, w') R_gamma(z, z') R_phi(v, v')`` with

    - ``w``: numerical columns without a parent, Matern-5/2 with inverse length scales
      ``omega`` (an inactive, unexplained column holds 0, as in the Matern kernel);
    - ``z``: branching columns (those with children in the inferred tree, categorical or
      integer) and categorical columns without a parent: ``exp(-gamma_k 1{z_k != z'_k})``
      (eq. 5), where "inactive" counts as one more level;
    - ``v``: nested columns, each with one ``phi^b_j`` per value ``b`` of its parent under which
      it is active: ``exp(-phi^b_j d(v_j, v'_j))`` when both points have the same parent value
      ``b`` (Definition 1), ``d = |v - v'|`` on the unit-scaled encoding for a quantitative
      column and ``1{v != v'}`` for a qualitative one; no term otherwise.

    A nested column may itself branch: then it is a ``z`` of its own subtree. Every term of a
    column applies only to pairs that agree on all of the column's ancestors, so each
    branching column splits its points into blocks exactly as in the paper's two-level case.

    Points that do not follow the tree (a running trial that has not suggested all of its
    parameters yet, a regressor's row with more ``NaN`` than its branch has): a nested column
    has a term only in pairs where the tree expects it active in both points (an active
    parent, itself expected, with a value that activates the column); there, a point in which
    it is inactive holds an unknown value, correlated ``c_j`` (below) with any value and 1 with
    another unknown one. For a qualitative column, ``c_j`` is the mean correlation over its
    ``g`` levels. Each factor stays ``c_j + (a positive semi-definite part)``, so the kernel is
    positive definite for any input, not only for points of the tree.

    **Positive definiteness by construction** (Theorem 1, generalised). Within the block of
    ``z_k = b``, each factor is ``c_j + (a positive semi-definite part)`` with the constant
    ``c_j = exp(-phi)`` for a quantitative nested column (``exp(-phi |t|) - exp(-phi)`` is a
    Polya-type function on ``|t| <= 1``), ``c_j = exp(-phi) + (1 - exp(-phi)) / g`` for a
    qualitative one with ``g`` levels (Theorem 1's left side), and ``c_j = exp(-gamma_j)`` for
    a nested branching column. The block's correlation minus ``exp(-gamma_k)`` is then
    positive semi-definite when ``exp(-gamma_k) <= prod_j c_j``, i.e.
    ``gamma_k >= sum_j -log c_j`` for every ``b``. With one nested column this is exactly
    Theorem 1 (and Remark 1 for a quantitative column); with several it is the product form
    (the per-column condition of Theorem 1 alone does not suffice then). The kernel is
    parametrised so that it holds: ``gamma_k = max_b sum_j -log c_j(phi^b_j) + exp(s_k)``
    with a free ``s_k`` (``s_k -> -inf`` is the boundary), built from the deepest branching
    column up. ``tests/test_branching_nested_kernel.py`` checks the eigenvalues on random
    designs at and near the boundary, with and without points off the tree.

    Raw parameters: ``log_omega`` (root numerical columns), ``log_gamma`` (``log gamma`` of a
    root categorical column, ``s_k`` of a branching one), ``log_phi``. Priors: the Matern
    length-scale prior on ``omega``, N(0, 1) on ``log_gamma`` and ``log_phi``.
    """

    name = "bn"
    #: Zhang et al. fit ``beta`` of ``mu(x) = m(x)^T beta`` by GLS (eq. 1); ``m(x) = 1`` here
    default_mean = "gls"

    def __init__(self) -> None:
        self._layout: tuple[FeatureSpec, _BranchingLayout] | None = None

    def layout(self, features: FeatureSpec) -> _BranchingLayout:
        """The roles of ``features``' columns (cached for the last ``features`` seen)."""
        if self._layout is None or self._layout[0] is not features:
            self._layout = (features, _BranchingLayout.of(features))
        return self._layout[1]

    def initial_params(self, features: FeatureSpec) -> Params:
        layout = self.layout(features)
        return {
            "log_omega": torch.zeros(len(layout.root_numerical), dtype=torch.float64),
            "log_gamma": torch.zeros(len(layout.indicator), dtype=torch.float64),
            "log_phi": torch.zeros(layout.n_phi, dtype=torch.float64),
        }

    def log_prior(self, params: Params) -> torch.Tensor:
        normal = -0.5 * ((params["log_gamma"] ** 2).sum() + (params["log_phi"] ** 2).sum())
        return log_omega_prior(params["log_omega"]) + normal

    def gammas(self, params: Params, features: FeatureSpec) -> dict[int, torch.Tensor]:
        """``gamma`` of every indicator column; branching ones satisfy the PD condition."""
        layout = self.layout(features)
        gamma = {
            j: torch.exp(params["log_gamma"][k])
            for j, k in layout.gamma_slot.items()
            if j not in layout.children
        }
        for z in layout.order:
            slack = torch.exp(params["log_gamma"][layout.gamma_slot[z]])
            bounds = [
                sum(
                    (self._minus_log_constant(j, k, params, features, gamma) for j in cols),
                    torch.zeros((), dtype=torch.float64),
                )
                for k, (_, cols) in enumerate(layout.children[z])
            ]
            gamma[z] = torch.stack(bounds).max() + slack if bounds else slack
        return gamma

    def _minus_log_constant(
        self,
        j: int,
        value_index: int,
        params: Params,
        features: FeatureSpec,
        gamma: dict[int, torch.Tensor],
    ) -> torch.Tensor:
        """``-log c_j`` of column ``j`` inside the block of its parent's ``value_index``-th
        activating value (see the class docstring)."""
        layout = self.layout(features)
        if j in layout.children:
            return gamma[j]
        position = int(layout.position_under[j][value_index])
        phi = torch.exp(params["log_phi"][layout.phi_slot[j] + position])
        return _minus_log_nested_constant(phi, int(features.n_categories[j]))

    def correlation(
        self,
        X_a: torch.Tensor,
        active_a: torch.Tensor,
        X_b: torch.Tensor,
        active_b: torch.Tensor,
        params: Params,
        features: FeatureSpec,
    ) -> torch.Tensor:
        layout = self.layout(features)
        on_a, on_b = active_a.to(X_a.dtype), active_b.to(X_b.dtype)
        log_r = torch.zeros((X_a.shape[0], X_b.shape[0]), dtype=X_a.dtype)
        same = {
            j: _same_level(X_a[:, j], on_a[:, j], X_b[:, j], on_b[:, j]) for j in layout.indicator
        }
        block = self._blocks(layout, same, log_r)
        position_a, position_b = _positions(layout, X_a, on_a), _positions(layout, X_b, on_b)
        term = {  # pairs in which column j has a term: same ancestors, both expect j active
            j: block[j] * _both(position_a[j] >= 0, position_b[j] >= 0)
            if j in position_a
            else block[j]
            for j in layout.indicator
        }
        gamma = self.gammas(params, features)
        for j in layout.indicator:
            log_r = log_r - gamma[j] * term[j] * (1.0 - same[j])
        nested = list(layout.nested)
        # Columns at a time, so that a (rows x rows x columns) tensor stays within the chunk.
        step = max(1, _NESTED_CHUNK // max(1, X_a.shape[0] * X_b.shape[0]))
        for start in range(0, len(nested), step):
            columns = nested[start : start + step]
            log_r = log_r - _nested_log_terms(
                layout,
                columns,
                X_a,
                on_a,
                X_b,
                on_b,
                position_a,
                position_b,
                block,
                params,
                features,
            )
        R = torch.exp(log_r)
        if layout.root_numerical:
            cols = list(layout.root_numerical)
            omega = torch.exp(params["log_omega"])
            emb_a = X_a[:, cols] * on_a[:, cols] * omega
            emb_b = X_b[:, cols] * on_b[:, cols] * omega
            R = R * matern52(squared_distances(emb_a, emb_b))
        return R

    @staticmethod
    def _blocks(
        layout: _BranchingLayout, same: dict[int, torch.Tensor], like: torch.Tensor
    ) -> dict[int, torch.Tensor]:
        """For each column, 1 where a pair agrees on all of the column's ancestors."""
        block: dict[int, torch.Tensor] = {}
        ones = torch.ones_like(like)
        for j in layout.by_depth:
            p = layout.parents[j]
            block[j] = ones if p < 0 else block[p] * same[p]
        return block


#: Elements (rows x rows x nested columns) of the nested terms computed at once.
_NESTED_CHUNK = 2_000_000


def _nested_log_terms(
    layout: _BranchingLayout,
    columns: list[int],
    X_a: torch.Tensor,
    on_a: torch.Tensor,
    X_b: torch.Tensor,
    on_b: torch.Tensor,
    position_a: dict[int, torch.Tensor],
    position_b: dict[int, torch.Tensor],
    block: dict[int, torch.Tensor],
    params: Params,
    features: FeatureSpec,
) -> torch.Tensor:
    """``sum_j (phi^b_j d(v_j, v'_j) + (-log c_j) [one of the two inactive]) * term_j`` over the
    nested ``columns`` (Definition 1 with the unknown-value constant of
    :class:`BranchingNestedKernel`), as one tensor operation over the columns; ``term_j``: 1
    for the pairs that agree on the column's ancestors (``block``) and both expect it active
    (``position_a``, ``position_b`` at least 0)."""
    expected_a = torch.stack([position_a[j] for j in columns], 1)
    expected_b = torch.stack([position_b[j] for j in columns], 1)
    slots = torch.as_tensor([layout.phi_slot[j] for j in columns]) + expected_a.clamp_min(0)
    phi = torch.exp(params["log_phi"])[slots][:, None, :]  # (n_a, 1, J)
    n_categories = torch.as_tensor(features.n_categories[columns], dtype=torch.long)
    qualitative = n_categories > 0
    constant = _minus_log_nested_constant(phi, n_categories)
    difference = X_a[:, None, columns] - X_b[None, :, columns]
    distance = torch.where(qualitative, (difference != 0).to(X_a.dtype), difference.abs())
    both = on_a[:, None, columns] * on_b[None, :, columns]
    one = on_a[:, None, columns] + on_b[None, :, columns] - 2.0 * both
    terms = torch.stack([block[j] for j in columns], dim=-1) * _both(
        expected_a >= 0, expected_b >= 0
    )
    return ((phi * distance * both + constant * one) * terms).sum(-1)


def _same_level(
    x_a: torch.Tensor, on_a: torch.Tensor, x_b: torch.Tensor, on_b: torch.Tensor
) -> torch.Tensor:
    """1 where two points have the same level of a column, "inactive" being a level."""
    # -inf (never an encoded value) stands for "inactive" as one more level.
    level_a = torch.where(on_a > 0, x_a, -math.inf)
    level_b = torch.where(on_b > 0, x_b, -math.inf)
    return (level_a[:, None] == level_b[None, :]).to(x_a.dtype)


def _both(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """1 where both points of a pair have the property (``a`` per row, ``b`` per column)."""
    return a.to(torch.float64)[:, None] * b.to(torch.float64)[None, :]


def _positions(
    layout: _BranchingLayout, X: torch.Tensor, on: torch.Tensor
) -> dict[int, torch.Tensor]:
    """For each nested column, per point: the index in its ``branch_values`` of its parent's
    value where the tree expects the column active (its parent active, itself expected, with
    an activating value), ``-1`` elsewhere. A parent's value counts as its nearest value with
    children (an unseen integer value takes its nearest seen one, as threshold conditions
    extrapolate)."""
    branch: dict[int, torch.Tensor] = {}
    for z, children in layout.children.items():
        values = torch.tensor([v for v, _ in children], dtype=X.dtype)
        nearest = (X[:, z].detach()[:, None] - values[None, :]).abs().argmin(dim=1)
        branch[z] = torch.where(on[:, z] > 0, nearest, -1)  # -1: the table's last entry
    positions: dict[int, torch.Tensor] = {}
    for j in layout.by_depth:
        p = layout.parents[j]
        if p < 0:
            continue
        index = branch[p] if p not in positions else torch.where(positions[p] >= 0, branch[p], -1)
        positions[j] = layout.position_under[j][index]
    return positions


def _minus_log_nested_constant(
    phi: torch.Tensor, n_categories: int | torch.Tensor
) -> torch.Tensor:
    """``-log c_j`` of a nested column (:class:`BranchingNestedKernel`): ``phi`` for a
    quantitative column, ``-log(exp(-phi) + (1 - exp(-phi)) / g)`` for a qualitative one with
    ``g`` levels (Zhang et al., Theorem 1); ``n_categories`` one count, or one per column of
    ``phi``'s last axis."""
    if isinstance(n_categories, int) and n_categories <= 1:
        return phi
    levels = torch.as_tensor(n_categories)
    qualitative = -torch.log(torch.exp(-phi) + (1.0 - torch.exp(-phi)) / levels.clamp_min(1))
    return torch.where(levels > 1, qualitative, phi)


KERNELS: dict[str, type[Kernel]] = {
    "arc": ArcKernel,
    "bn": BranchingNestedKernel,
    "matern": MaternKernel,
}


def make_kernel(name: str) -> Kernel:
    """The kernel registered under ``name`` (``"arc"``, ``"bn"`` or ``"matern"``)."""
    try:
        return KERNELS[name]()
    except KeyError:
        raise ValueError(f"kernel={name!r} is not known; use one of {sorted(KERNELS)}.") from None
