"""Exact inference of the tree GP: the Cholesky algebra of eq. 3 and the posteriors of sec. 3.2.

One concern: given the data, the tree and the hyperparameters of a
:class:`~condsamplers.models.tree_gp.TreeGP`, the leaf-by-leaf factorisation behind the log
marginal likelihood (eq. 3, ``O(V^3 + sum_p n_p^3)``), the factors cached for prediction, and
the posterior of ``g_p(x) + z(x)^T c`` and the path posterior of ``b_p + z(x)^T c``. The
formulas are in the docstring of :mod:`condsamplers.models.tree_gp` ("Inference",
"Prediction"); :class:`TreeGPInference` holds them as methods that ``TreeGP`` inherits.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import torch

from condsamplers.kernels import MaternKernel, matern52, squared_distances
from condsamplers.models.fitting import Params, robust_cholesky
from condsamplers.models.leaf_algebra import ANALYTIC_GRADIENT_ROWS, quadratic_forms
from condsamplers.models.tree_gp_structure import (
    TreeStructure,
    _distinct_rows,
    _Features,
    nodes_on_rows,
)
from condsamplers.space import FeatureSpec


@dataclasses.dataclass(frozen=True)
class _Bucket:
    """Leaves of similar size, padded to the largest: ``rows (B, m)`` indices into the data
    (padding 0), ``valid (B, m)`` 1 for real rows, ``masks (B, e)`` each leaf's embedding
    coordinates."""

    leaves: torch.Tensor
    rows: torch.Tensor
    valid: torch.Tensor
    masks: torch.Tensor


#: The fit evaluates the evidence in eq. 4's ``n x n`` form from this many inner features ``V``
#: (and ``V > n``). Its ``V x V`` factor makes eq. 3 cost ``O(V^3)``: with the additive Fourier
#: basis a CASH space has ``V`` = 550-700, where one evaluation with its gradient takes about
#: 0.11 s by eq. 3 and 0.01 s by eq. 4. Below a few hundred features both cost a few
#: milliseconds (V = 35-165 on the synthetic problems: 2.6-5.5 ms against 1.1-2.1 ms), a small
#: part of a suggestion, and the fit keeps eq. 3, the form those problems' benchmark figures
#: were measured with.
JOINT_FORM_MIN_FEATURES = 256
#: How many matrices of active patterns the tree GP keeps the grouping of (:meth:`_path_plan`).
PATH_PLANS = 8

# A leaf of ANALYTIC_GRADIENT_ROWS rows or more gets a batch of its own, and the analytic
# gradient of its terms. Batching saves the per-call overhead of small leaves; a large leaf's
# cubic cost dwarfs that overhead, and padding it to a neighbour up to 1.5 times its size would
# cost up to 1.5^3 = 3.4 times its own work. At 10,000 trials of jenatton_large (8 leaves of
# 293-703 rows) batches of one leaf took one evaluation of the log posterior with its gradient
# from 0.76 s to 0.38 s, the analytic gradient to about 0.25 s. Smaller leaves keep the batches
# they had (the same arithmetic, bit for bit, so that the recorded benchmark studies of a few
# hundred trials still reproduce).

#: One leaf's Cholesky factor ``L_p`` and ``L_p^-1 [r_p, Z_p]``.
_LeafFactor = tuple[int, torch.Tensor, torch.Tensor]


class TreeGPInference:
    """The exact-inference methods of :class:`~condsamplers.models.tree_gp.TreeGP` (a mixin).

    They read the fitted state that ``TreeGP`` sets (annotated below) and call its
    hyperparameter maps ``_amplitudes``, ``_leaf_offsets``, ``_training_features`` and
    ``inner_features``.
    """

    features_: FeatureSpec
    structure_: TreeStructure
    layout_: _Features
    params_: Params
    min_noise: float
    X_: torch.Tensor
    active_: torch.Tensor
    z_: torch.Tensor
    y_mean_: float
    y_std_: float
    rows_: dict[int, torch.Tensor]
    masks_: dict[int, torch.Tensor]
    buckets_: list[_Bucket]
    leaf_of_: np.ndarray
    joint_rows_: tuple[torch.Tensor, torch.Tensor] | None

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
        """Leaves with data, grouped by similar size and padded, for batched Cholesky; a leaf
        of ``ANALYTIC_GRADIENT_ROWS`` rows or more alone, unpadded."""
        sizes = sorted((len(rows), p) for p, rows in self.rows_.items())
        groups: list[list[tuple[int, int]]] = []
        for size, p in sizes:
            smallest = groups[-1][0][0] if groups else 0
            if (
                not groups
                or size > max(1.5 * smallest, smallest + 8)
                or size >= ANALYTIC_GRADIENT_ROWS
            ):
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
            if E.shape[1] >= ANALYTIC_GRADIENT_ROWS:  # one large leaf: the analytic gradient
                S, leaf_log_det, L, A = quadratic_forms(
                    K, self._leaf_rhs(params, bucket, Z), log=log
                )
                quad = quad + S[:, 0, 0].sum()
                log_det = log_det + leaf_log_det.sum()
                f_c = f_c + S[:, 1:, 0].sum(0)
                gram = gram + S[:, 1:, 1:].sum(0)
            else:
                L = robust_cholesky(K, log=log)
                rhs = self._leaf_rhs(params, bucket, Z)
                A = torch.linalg.solve_triangular(L, rhs, upper=False)
                quad = quad + (A[..., 0] ** 2).sum()
                log_det = log_det + 2.0 * torch.log(L.diagonal(dim1=-2, dim2=-1)).sum()
                f_c = f_c + torch.einsum("bmi,bm->i", A[..., 1:], A[..., 0])
                gram = gram + torch.einsum("bmi,bmj->ij", A[..., 1:], A[..., 1:])
            for b, p in enumerate(bucket.leaves.tolist()):
                size = len(self.rows_[p])
                factors.append((p, L[b, :size, :size], A[b, :size]))
        return quad, log_det, f_c, gram, factors

    def _leaf_rhs(self, params: Params, bucket: _Bucket, Z: torch.Tensor) -> torch.Tensor:
        """``[r_p, Z_p]`` of each leaf of ``bucket`` (``r_p = z_p - b_p``), padding rows 0."""
        offsets = self._leaf_offsets(params, bucket.leaves)
        r = (self.z_[bucket.rows] - offsets[:, None]) * bucket.valid
        return torch.cat([r[..., None], Z[bucket.rows] * bucket.valid[..., None]], dim=2)

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
        """``log P(y)`` for the standardised ``y``: eq. 3 (``O(V^3 + sum_p n_p^3)``), or the
        same density in the form of eq. 4 (``O(n^2 V + n^3)``) when there are more inner
        features than observations and at least :data:`JOINT_FORM_MIN_FEATURES` of them."""
        V = self.layout_.n_features
        if V >= JOINT_FORM_MIN_FEATURES and V > len(self.z_):
            return self._log_evidence_joint(params)
        return self._log_evidence_by_leaf(params)

    def _log_evidence_by_leaf(self, params: Params) -> torch.Tensor:
        """``log P(y)`` of eq. 3: per-leaf Cholesky factors and one of ``Lambda_c``."""
        quad, log_det, f_c, gram, _ = self._leaf_terms(params, log=False)
        if len(f_c):
            L_c = self._c_precision_factor(params, gram, log=False)
            u = torch.linalg.solve_triangular(L_c, f_c[:, None], upper=False)[:, 0]
            quad = quad - u @ u
            log_det = log_det + self._log_variance_c(params).sum()
            log_det = log_det + 2.0 * torch.log(L_c.diagonal()).sum()
        n = len(self.z_)
        return -0.5 * quad - 0.5 * log_det - 0.5 * n * math.log(2.0 * math.pi)

    def _log_evidence_joint(self, params: Params) -> torch.Tensor:
        """``log N(y; b, Z Sigma_c Z^T + K_block + sigma^2 I)`` (eq. 4), through one Cholesky
        factor of the ``n x n`` covariance: ``K_block`` holds ``K_p`` of each leaf's rows
        (the embedding of a row masked to its leaf's columns, so that two rows of one leaf
        are at their leaf's distance) and 0 between leaves."""
        noise = torch.exp(params["log_noise"])[0] + self.min_noise
        leaf = self.leaf_of_
        masks, same_leaf = self._joint_rows()
        E = self._embedding(self.X_, self.active_, params) * masks
        # Not kernels.squared_distances(E, E): one row-norm node keeps the gradient's
        # summation order of the recorded benchmark runs, so that they still reproduce.
        sq = (E * E).sum(-1)
        sq = (sq[:, None] + sq[None, :] - 2.0 * E @ E.T).clamp_min(0.0)
        covariance = self._amplitudes(params, leaf)[:, None] * matern52(sq) * same_leaf
        Z = self._training_features(params)
        covariance = covariance + (Z * torch.exp(self._log_variance_c(params))) @ Z.T
        n = len(self.z_)
        L = robust_cholesky(covariance + noise * torch.eye(n, dtype=torch.float64), log=False)
        r = self.z_ - self._leaf_offsets(params, leaf)
        u = torch.linalg.solve_triangular(L, r[:, None], upper=False)[:, 0]
        return -0.5 * u @ u - torch.log(L.diagonal()).sum() - 0.5 * n * math.log(2.0 * math.pi)

    def _joint_rows(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Per training row its leaf's embedding mask, and which pairs of rows share a leaf
        (fixed by the data: computed once per fit)."""
        if self.joint_rows_ is None:
            leaf = self.leaf_of_
            masks = torch.stack([self._leaf_embedding_mask(int(p)) for p in leaf])
            same_leaf = torch.as_tensor(leaf[:, None] == leaf[None, :], dtype=torch.float64)
            self.joint_rows_ = masks, same_leaf
        return self.joint_rows_

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
            self.c_blocks_: dict[tuple[int, ...], tuple[torch.Tensor, torch.Tensor]] = {}
            self.path_plans_: dict[tuple[tuple[int, ...], bytes], list[Any]] = {}
            self.c_covariance_: torch.Tensor | None = None
            if len(f_c):
                self.variance_c_ = torch.exp(self._log_variance_c(params))
                self.L_c_ = self._c_precision_factor(params, gram, log=True)
                self.mu_c_ = torch.cholesky_solve(f_c[:, None], self.L_c_)[:, 0]
            else:
                self.variance_c_ = torch.zeros(0, dtype=torch.float64)
                self.L_c_ = torch.zeros((0, 0), dtype=torch.float64)
                self.mu_c_ = torch.zeros(0, dtype=torch.float64)

    # -- prediction ----------------------------------------------------------------------
    def _c_covariance(self, nodes: tuple[int, ...]) -> tuple[torch.Tensor, torch.Tensor]:
        """The positions in ``z(x)`` of the features of ``nodes`` and the block of
        ``Lambda_c^-1`` they index (``Lambda_c^-1`` from its Cholesky factor once per
        factorisation, the blocks cached per set of nodes)."""
        if nodes not in self.c_blocks_:
            if self.c_covariance_ is None:
                self.c_covariance_ = torch.cholesky_inverse(self.L_c_)
            columns = torch.as_tensor(self.layout_.columns_of(nodes), dtype=torch.long)
            self.c_blocks_[nodes] = (columns, self.c_covariance_[columns][:, columns])
        return self.c_blocks_[nodes]

    def _by_path(
        self, X: torch.Tensor, active: torch.Tensor
    ) -> list[tuple[torch.Tensor, int, torch.Tensor, torch.Tensor, torch.Tensor]]:
        """The rows grouped by active pattern: per group its row indices, its leaf (``-1``:
        no known leaf), ``z(x)`` on the inner nodes of its path, the positions of those
        features in ``z(x)`` and their block of ``Lambda_c^-1`` (``z(x)`` is 0 elsewhere).

        The features of the inner nodes of any group's path are computed once for every row,
        and each group takes its rows and its path's features (the same values as per group:
        each feature is a function of its row alone)."""
        plan, nodes = self._path_plan(active.detach().numpy().astype(bool))
        with_c = self.mu_c_.numel() > 0
        every = self.inner_features(X, active, nodes=nodes) if with_c else None
        groups = []
        for rows, leaf, within, columns, block in plan:
            if every is None:
                Z = torch.zeros((len(rows), 0), dtype=torch.float64)
            elif len(plan) == 1:
                Z = every
            else:
                Z = every[rows][:, within]
            groups.append((rows, leaf, Z, columns, block))
        return groups

    def _path_plan(self, patterns: np.ndarray) -> tuple[list[Any], tuple[int, ...]]:
        """Per distinct row of ``patterns``: its rows, its leaf, the positions of its path's
        features among those of the inner nodes of every group's path (the second value),
        their positions in ``z(x)`` and their block of ``Lambda_c^-1``. Kept for the last
        :data:`PATH_PLANS` pattern matrices (a local search asks the same one at every step)."""
        key = (patterns.shape, np.packbits(patterns).tobytes())
        if key in self.path_plans_:
            return self.path_plans_[key]
        first, inverse = _distinct_rows(patterns)
        leaf = self.structure_.leaf_index(patterns[first])
        with_c = self.mu_c_.numel() > 0
        paths = nodes_on_rows(self.structure_, patterns[first]) if with_c else [()] * len(first)
        every = tuple(sorted(set().union(*paths)))
        position = np.zeros(self.layout_.n_features, dtype=np.int64)
        listed = self.layout_.columns_of(every)
        position[listed] = np.arange(len(listed))
        by_group = np.argsort(inverse, kind="stable")  # each group's rows in increasing order
        sizes = np.bincount(inverse, minlength=len(first))
        ends = np.cumsum(sizes)
        starts = ends - sizes
        plan = []
        for g, nodes in enumerate(paths):
            rows = torch.as_tensor(by_group[starts[g] : ends[g]])
            if with_c:
                columns, block = self._c_covariance(nodes)
            else:
                columns = torch.zeros(0, dtype=torch.long)
                block = torch.zeros((0, 0), dtype=torch.float64)
            within = torch.as_tensor(position[columns.numpy()])
            plan.append((rows, int(leaf[g]), within, columns, block))
        if len(self.path_plans_) >= PATH_PLANS:
            self.path_plans_.pop(next(iter(self.path_plans_)))
        self.path_plans_[key] = (plan, every)
        return plan, every

    def posterior(
        self, X: torch.Tensor, active: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean and variance of ``g_p(x) + z(x)^T c`` (sec. 3.2), in the units of ``y``.

        Per path of the rows, only the features of its inner nodes enter (the others are 0):
        ``t = z_S - K_xp W_S`` and ``t^T (Lambda_c^-1)_SS t``."""
        emb = self._embedding(X, active, self.params_)
        n = X.shape[0]
        mean = torch.zeros(n, dtype=torch.float64)
        var = torch.zeros(n, dtype=torch.float64)
        for rows, p, Z, columns, block in self._by_path(X, active):
            mean_g = self._leaf_offsets(self.params_, [p]).expand(len(rows))
            var_g = self._amplitudes(self.params_, [p]).expand(len(rows))
            T = Z
            if p in self.leaf_cache_:
                L, alpha, W = self.leaf_cache_[p]
                train = self.train_embedding_[self.rows_[p]]
                k = self._leaf_covariance(p, emb[rows], train, self.params_)
                v = torch.linalg.solve_triangular(L, k.T, upper=False)
                T = Z - k @ W[:, columns]
                mean_g = mean_g + k @ alpha
                var_g = var_g - (v * v).sum(0)
            mean_g = mean_g + T @ self.mu_c_[columns]
            var_g = var_g + ((T @ block) * T).sum(1)
            mean = mean.index_put((rows,), mean_g)
            var = var.index_put((rows,), var_g)
        var = var.clamp_min(1e-12)
        return mean * self.y_std_ + self.y_mean_, var * self.y_std_**2

    def mean_at_observations(self) -> np.ndarray:
        """The posterior mean at the training rows without a prediction: per leaf ``p``,
        ``z_p - sigma^2 M_p^-1 (r_p - Z_p mu_c)`` (``K_p M_p^-1 = I - sigma^2 M_p^-1`` in the
        prediction formulas of the module docstring of :mod:`condsamplers.models.tree_gp`)."""
        noise = torch.exp(self.params_["log_noise"])[0] + self.min_noise
        mean = self.z_.clone()
        for p, rows in self.rows_.items():
            _, alpha, W = self.leaf_cache_[p]
            residual = alpha - W @ self.mu_c_ if self.mu_c_.numel() else alpha
            mean[rows] = mean[rows] - noise * residual
        return (mean * self.y_std_ + self.y_mean_).numpy()

    def path_posterior(
        self, X: torch.Tensor, active: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean and variance of ``b_p + z(x)^T c`` (the quantity of the path EI, eq. 6).

        Depends on ``x`` only through the path and the shared parameters in ``z(x)``.
        """
        n = X.shape[0]
        mean = torch.zeros(n, dtype=torch.float64)
        var = torch.zeros(n, dtype=torch.float64)
        for rows, p, Z, columns, block in self._by_path(X, active):
            mean_g = self._leaf_offsets(self.params_, [p]) + Z @ self.mu_c_[columns]
            mean = mean.index_put((rows,), mean_g)
            var = var.index_put((rows,), ((Z @ block) * Z).sum(1))
        var = var.clamp_min(1e-12)
        return mean * self.y_std_ + self.y_mean_, var * self.y_std_**2
