"""The tree-structured semi-parametric GP of Jenatton, Archambeau, Gonzalez & Seeger (ICML 2017).

Model (eq. 1, with the random *linear* inner-node functions of sec. 2.4)::

    c ~ N(0, Sigma_c)                      weights of the inner nodes, Sigma_c diagonal
    g_p ~ GP(b_p, K_p)                     one GP per leaf (path) p, Matern-5/2
    y_i = g_{p_i}(x_i) + z(x_i)^T c + eps_i,   eps_i ~ N(0, sigma^2)

``z(x)`` concatenates the feature vectors ``r_v(x)`` of the inner nodes ``v`` on the path of
``x`` (zeros for the other nodes): an intercept 1 (sec. 2.1), the one-hot of each categorical
*shared* parameter that lives at ``v`` (sec. 2.4), and for each numerical one either its
centred value ``x - 1/2`` (``inner_basis="linear"``, sec. 2.4) or, with ``inner_basis="fourier"``
(the default), ``N_FOURIER`` random Fourier features of that column alone (the basis expansion
of sec. 4.3, made additive: :class:`~condsamplers.models.tree_gp_structure.FourierBasis`), so
that shared parameters act non-linearly across leaves, each with a variance of its own.

**The tree from a conditional space** (leaves, inner nodes, and which points are on them):
:mod:`condsamplers.models.tree_gp_structure`.

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

**Prior scale of the inner nodes.** ``Sigma_c`` has one variance per group of features of an inner
node ``v`` (its intercept and each shared column: its one-hot, its linear term or its Fourier
features); below the root it is divided by ``g_v``, the number of groups of ``v``, so that a priori
each such node adds a variance of order 1 to ``z(x)^T c`` (``y`` is standardised), whatever the
number of parameters that live there. With one unit of variance per group (the paper fixes these
hyperparameters and is silent on this) a node holding ten parameters was a priori ten times as
variable as a node holding one: on the CASH space of ``benchmarks/hpo`` the model gave a
gradient-boosting configuration on a path it had not seen a prior standard deviation of 3.5 (the
data span about 1), and EI went to the estimator families with the most parameters rather than near
the best configurations. The root is left as it was: it is on every path and fitted from every
trial, and dividing its variances too cost the branching-and-nested benchmark (median final regret
0.4 against 0.1, 10 seeds) while the CASH tasks did not need it.

**Inference** (sec. 2.2-2.3), on standardised ``y``, with ``M_p = K_p + sigma^2 I``,
``r_p = y_p - b_p`` and ``Z_p`` the feature rows of leaf ``p``::

    Lambda_c = Sigma_c^-1 + sum_p Z_p^T M_p^-1 Z_p,      f_c = sum_p Z_p^T M_p^-1 r_p
    log P(y) = -1/2 sum_p r_p^T M_p^-1 r_p + 1/2 f_c^T Lambda_c^-1 f_c
               -1/2 sum_p log|M_p| - 1/2 log|Sigma_c| - 1/2 log|Lambda_c| - n/2 log 2 pi

(eq. 3, written with Woodbury's identity and the determinant lemma), all through Cholesky
factors: ``O(V^3 + sum_p n_p^3)``. It equals the log density of the joint GP of eq. 4,
``N(y; b, Z Sigma_c Z^T + K_block + sigma^2 I)``; ``tests/test_tree_gp.py`` checks this to 1e-8.
When there are many more inner features than observations (``V > n`` and ``V >= 256``, as on a
CASH space with hundreds of Fourier features and tens of trials) the fit evaluates that ``n x n``
form instead, ``O(n^2 V + n^3)``: the same density and gradient (to rounding), about ten times
cheaper there (:data:`~condsamplers.models.tree_gp_posterior.JOINT_FORM_MIN_FEATURES`).
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
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from condsamplers.kernels import MaternKernel, log_omega_prior
from condsamplers.log import get_logger
from condsamplers.models.base import Surrogate
from condsamplers.models.fitting import (
    MIN_NOISE,
    REFRESH_GROWTH,
    WARM_MAX_ITER,
    Params,
    evidence_of_values,
    gamma_log_prior,
    keeps_hyperparameters,
    maximise_log_posterior,
    noise_variance_of,
    random_restarts,
    refresh_due,
    slice_sample,
    standardise,
)
from condsamplers.models.tree_gp_posterior import TreeGPInference
from condsamplers.models.tree_gp_structure import (
    N_FOURIER,
    FourierBasis,
    InnerNode,
    TreeStructure,
    _feature_layout,
    inner_features,
)
from condsamplers.space import FeatureSpec
from condsamplers.validation import check_choice, check_int

__all__ = [
    "FOURIER_LOG_LENGTHSCALE",
    "INNER_BASES",
    "LEAF_INPUTS",
    "MIN_NOISE",
    "N_FOURIER",
    "OFFSETS",
    "REFRESH_GROWTH",
    "SIGNAL_VARIANCES",
    "SLICE_BURN_IN",
    "FourierBasis",
    "InnerNode",
    "TreeGP",
    "TreeStructure",
    "inner_features",
]

_logger = get_logger(__name__)

LEAF_INPUTS = ("path", "leaf")
SIGNAL_VARIANCES = ("leaf", "shared")
OFFSETS = ("leaf", "shared")
INNER_BASES = ("linear", "fourier")
#: Prior mean (and default) of the log length scale of the Fourier features, unit-cube units.
FOURIER_LOG_LENGTHSCALE = math.log(0.5)
#: A cold fit (no warm start) on more rows than this runs its starts on a random subsample of
#: this many rows first, then refines the best on all rows from that one start: the starts
#: cost ``(n / COLD_FIT_ROWS)^3`` times less, which matters when a study with thousands of
#: pruned trials is resumed in a fresh process.
COLD_FIT_ROWS = 1000
#: Slice-sampling sweeps from the MAP values before the first hyperparameter sample is kept.
SLICE_BURN_IN = 4


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


class TreeGP(TreeGPInference, Surrogate):
    """Jenatton et al. (2017) tree GP: leaf GPs plus random linear inner-node functions.

    See the module docstring for the model, eq. 1-4 of the paper and how the tree is built.

    Args:
        leaf_inputs: ``"path"`` (leaf GP over every column active on the path) or ``"leaf"``
            (only the columns of that leaf alone, the paper's setting).
        independent: ``c = 0``, independent GPs per leaf (the paper's baseline).
        signal_variance: ``"leaf"`` (a signal variance ``s_p`` per leaf GP, eq. 1's ``K_p``;
            a leaf without data keeps its prior's mode, 1) or ``"shared"`` (one for all).
        inner_basis: ``"linear"`` (sec. 2.4: intercept and shared values) or ``"fourier"``
            (``N_FOURIER`` random Fourier features of each numerical shared column instead of
            its value, one variance each, sec. 4.3: shared parameters then act non-linearly
            across leaves too).
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
        self.feature_cache_: dict[int, torch.Tensor] = {}
        self.joint_rows_: tuple[torch.Tensor, torch.Tensor] | None = None
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
        self,
        X: torch.Tensor,
        active: torch.Tensor,
        params: Params | None = None,
        cache: dict[int, torch.Tensor] | None = None,
        nodes: Sequence[int] | None = None,
    ) -> torch.Tensor:
        """``z(x)`` of each row; an empty ``(n, 0)`` matrix for the independent model.

        ``params`` (default: the fitted ones) matter only for the Fourier basis; ``cache`` and
        ``nodes``: as for :func:`~condsamplers.models.tree_gp_structure.inner_features`.
        """
        if self.independent:
            return torch.zeros((X.shape[0], 0), dtype=torch.float64)
        if self.fourier_ is None:
            return inner_features(
                self.structure_, self.features_, X, active, nodes=nodes, layout=self.layout_
            )
        params = self.params_ if params is None else params
        return inner_features(
            self.structure_,
            self.features_,
            X,
            active,
            self.fourier_,
            params["log_fourier_lengthscale"],
            cache,
            nodes,
            self.layout_,
        )

    def _training_features(self, params: Params) -> torch.Tensor:
        """``z(x_i)`` of the training rows (fixed, except the Fourier basis's length scales)."""
        if self.Z_ is not None:
            return self.Z_
        return self.inner_features(self.X_, self.active_, params, self.feature_cache_)

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
        if not refresh_due(n, last_full):
            self.full_fit_n_ = last_full
            return [warm]
        self.full_fit_n_ = n
        return [warm, default]

    def _is_refresh(self) -> bool:
        """Whether this fit starts from the defaults (cold, or a refresh): not the warm start
        alone, between two refreshes."""
        return self.full_fit_n_ == len(self.z_)

    def _kept_params(self) -> Params | None:
        """The previous fit's hyperparameters, kept without optimisation
        (:func:`~condsamplers.models.fitting.keeps_hyperparameters`) while the tree has kept
        its leaves and feature groups (setting the fit's evidence and log posterior at them);
        ``None``: optimise."""
        state = self.warm_start
        if not state or "optimised_per_observation" not in state:
            return None
        warm = self._warm_params(self._default_params())
        if warm is None or not self.warm_complete_:
            return None

        def log_posterior_at_warm() -> float:
            with torch.no_grad():
                log_prior = self._log_prior(warm)  # the order of _log_posterior: the same sum
                evidence = self._log_evidence(warm)
            self.log_marginal_likelihood_ = float(evidence)
            self.log_posterior_ = float(evidence + log_prior)
            return self.log_posterior_

        n, last_refresh = len(self.z_), int(state["full_fit_n"])
        per_observation = float(state["optimised_per_observation"])
        if not keeps_hyperparameters(n, last_refresh, per_observation, log_posterior_at_warm):
            return None
        self.full_fit_n_ = last_refresh
        self.optimised_per_observation_ = per_observation
        return warm

    def warm_start_state(self) -> dict[str, Any]:
        """What the next fit needs to start from this one (hyperparameters by meaning)."""
        return {
            "params": {k: v.detach().clone() for k, v in self.params_.items()},
            "leaves": self.structure_.leaves,
            "group_keys": self.layout_.group_keys,
            "full_fit_n": self.full_fit_n_,
            "optimised_per_observation": self.optimised_per_observation_,
        }

    def _warm_params(self, default: Params) -> Params | None:
        """The previous fit's values, matched by leaf / feature group; ``None`` if unusable."""
        state = self.warm_start
        if not state or state["params"]["log_omega"].shape != default["log_omega"].shape:
            return None
        old = state["params"]
        self.warm_complete_ = set(old) == set(default) and all(
            old[k].shape == v.shape for k, v in default.items()
        )
        self.warm_complete_ &= list(state["leaves"]) == list(self.structure_.leaves)
        self.warm_complete_ &= list(state["group_keys"]) == list(self.layout_.group_keys)
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
        kept = self._kept_params()
        if kept is not None:
            return kept
        starts = self._starts()
        if len(starts) > 1 and self.warm_start is None and len(self.z_) > COLD_FIT_ROWS:
            starts = self._subsample_optimum(starts) or starts
        max_iter = self.max_iter if self._is_refresh() else min(self.max_iter, WARM_MAX_ITER)
        params = maximise_log_posterior(self._log_posterior, starts, len(self.z_), max_iter)
        if params is None:
            _logger.warning("Tree GP hyperparameter fit failed from every start; using defaults.")
            params = self._default_params()
        with torch.no_grad():
            evidence = self._log_evidence(params)
            self.log_marginal_likelihood_ = float(evidence)
            self.log_posterior_ = float(evidence + self._log_prior(params))
        self.optimised_per_observation_ = self.log_posterior_ / len(self.z_)
        return params

    def _subsample_optimum(self, starts: list[Params]) -> list[Params] | None:
        """``[the MAP hyperparameters of a seeded random subsample of COLD_FIT_ROWS rows]``,
        from every start; ``None`` if that fit failed."""
        rows = np.random.default_rng(self.seed).choice(len(self.z_), COLD_FIT_ROWS, replace=False)
        rows = np.sort(rows)
        sub = copy.copy(self)
        sub._set_data(self.X_.numpy()[rows], self.active_.numpy()[rows], self.z_[rows])
        params = maximise_log_posterior(sub._log_posterior, starts, COLD_FIT_ROWS, self.max_iter)
        return None if params is None else [params]

    def _log_posterior(self, params: Params) -> torch.Tensor:
        """What the fit maximises: eq. 3's evidence plus the hyperparameters' log priors.

        The priors are built first: autograd sums the two terms' gradients in the reverse order
        of their creation, and this order keeps the sums (and so the fits) of the recorded
        figures bit for bit."""
        log_prior = self._log_prior(params)
        return self._log_evidence(params) + log_prior

    def _log_prior(self, params: Params) -> torch.Tensor:
        """Log priors of the hyperparameters (module docstring, "Hyperparameters")."""
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
        return log_prior

    # -- prediction (posterior and path_posterior: TreeGPInference) -----------------------
    def log_evidence(self) -> float:
        """The marginal likelihood at the fitted hyperparameters in the units of ``y``
        (:func:`~condsamplers.models.fitting.evidence_of_values`)."""
        return evidence_of_values(self.log_marginal_likelihood_, len(self.z_), self.y_std_)

    def noise_variance(self) -> float:
        """The fitted ``sigma^2`` of eq. 1 (module docstring), in the units of ``y``."""
        return noise_variance_of(self.params_, self.min_noise, self.y_std_)

    def length_scales(self) -> np.ndarray:
        """``1 / omega_i`` of the leaf GPs' Matern embedding
        (:meth:`condsamplers.kernels.MaternKernel.length_scales`)."""
        return MaternKernel().length_scales(self.params_)

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
