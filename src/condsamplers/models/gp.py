"""Exact Gaussian-process regression with an embedding kernel (torch, float64).

Model: ``y_i = f(x_i) + eps_i``, ``f ~ GP(beta, s * R(x, x'))`` with a kernel's correlation
``R``, ``eps_i ~ N(0, noise)``, on standardised ``y``. The constant mean ``beta`` is either the
sample mean of ``y`` (``mean="sample"``: ``beta = 0`` after standardisation) or, as in the
ordinary kriging of Zhang, Hung, Lin & Liu (``mean="gls"``, their eq. 1 with ``m(x) = 1``),
its generalised-least-squares estimate ``beta = 1^T K^-1 y / 1^T K^-1 1`` (``K = s R + noise
I``), profiled out of the likelihood (their eq. 3), with its uncertainty added to the
predictive variance: ``k(x, x) - k_x^T K^-1 k_x + (1 - 1^T K^-1 k_x)^2 / 1^T K^-1 1`` (the
``s_0^2`` after their eq. 3). The GLS estimate weighs a cluster of correlated observations
(a sampler's exploitation near its incumbent) as little more than one, so the prior level far
from the data is not pulled up towards the incumbent. Hyperparameters (kernel ``phi`` parameters,
``s``, ``noise``) maximise the log marginal likelihood plus log priors (Rasmussen & Williams
2006, eq. 2.30) by L-BFGS-B from several starts: the previous fit (warm start), the defaults,
and random perturbations. Priors: Gamma(2, 1) on ``s``, Gamma(1.1, 30) on ``noise`` (as in
Optuna's GPSampler), the kernel's own priors on its parameters.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from condsamplers.kernels import Kernel, Params, make_kernel
from condsamplers.log import get_logger
from condsamplers.models.base import Surrogate
from condsamplers.models.fitting import (
    MIN_NOISE,
    WARM_MAX_ITER,
    NumericalError,
    evidence_of_values,
    gamma_log_prior,
    keeps_hyperparameters,
    maximise_log_posterior,
    noise_variance_of,
    refresh_due,
    robust_cholesky,
    standardise,
)
from condsamplers.models.leaf_algebra import ANALYTIC_GRADIENT_ROWS, quadratic_forms
from condsamplers.space import FeatureSpec

__all__ = ["MEANS", "MIN_NOISE", "ExactGP", "NumericalError", "robust_cholesky"]

MEANS = ("sample", "gls")

_logger = get_logger(__name__)


class ExactGP(Surrogate):
    """Exact GP surrogate with a named kernel (``"arc"``, ``"bn"`` or ``"matern"``).

    Args:
        kernel: kernel name or a :class:`~condsamplers.kernels.Kernel` instance.
        n_restarts: random restarts of a cold hyperparameter fit (no usable ``warm_start``).
        seed: seed of the random restarts.
        warm_start: what :meth:`warm_start_state` returned after a previous fit. Between
            refreshes its hyperparameters are kept or refined by a few iterations
            (:func:`~condsamplers.models.fitting.keeps_hyperparameters`); at a refresh they are
            a start beside the defaults.
        max_iter: L-BFGS-B iterations per start.
        min_noise: floor of the noise variance, in units of the standardised ``y``. The default
            suits noise-free objectives; a larger floor (say 0.03) regularises regression on
            noisy data whose fit would otherwise interpolate.
        mean: the constant prior mean, ``"sample"`` or ``"gls"`` (module docstring); ``None``:
            the kernel's ``default_mean`` (``"gls"`` for the branching-and-nested kernel, whose
            paper fits it so, ``"sample"`` otherwise).

    Attributes (after ``fit``): ``params_`` (raw hyperparameters), ``log_marginal_likelihood_``
    (of the standardised ``y`` at ``params_``), ``log_posterior_`` (that plus the log priors,
    up to a constant: what the fit maximises). :meth:`prior_mean` is the fitted constant.
    :meth:`condition_on` keeps it, as it keeps the other hyperparameters.
    """

    def __init__(
        self,
        kernel: str | Kernel = "arc",
        n_restarts: int = 2,
        seed: int | None = None,
        warm_start: dict[str, Any] | None = None,
        max_iter: int = 200,
        min_noise: float = MIN_NOISE,
        mean: str | None = None,
    ) -> None:
        if not min_noise > 0:
            raise ValueError(f"min_noise must be positive; got {min_noise!r}.")
        if mean not in (None, *MEANS):
            raise ValueError(f"mean must be one of {MEANS} or None; got {mean!r}.")
        self.kernel = make_kernel(kernel) if isinstance(kernel, str) else kernel
        self.mean = self.kernel.default_mean if mean is None else mean
        self.n_restarts = n_restarts
        self.seed = seed
        self.warm_start = warm_start
        self.max_iter = max_iter
        self.min_noise = min_noise

    # -- fitting -------------------------------------------------------------------------
    def fit(
        self, X: np.ndarray, active: np.ndarray, y: np.ndarray, features: FeatureSpec
    ) -> ExactGP:
        self.z_, self.y_mean_, self.y_std_ = standardise(y, "ExactGP")
        self.features_ = features
        self.X_ = torch.as_tensor(X, dtype=torch.float64)
        self.active_ = torch.as_tensor(active, dtype=torch.bool)
        self.params_ = self._optimise_hyperparameters()
        self._factorise()
        return self

    def _default_params(self) -> Params:
        params = self.kernel.initial_params(self.features_)
        params["log_amplitude"] = torch.zeros(1, dtype=torch.float64)
        params["log_noise"] = torch.tensor([math.log(1e-2)], dtype=torch.float64)
        return params

    def _warm_params(self, default: Params) -> Params | None:
        """The previous fit's hyperparameters, if they fit this space's; else ``None``."""
        old = (self.warm_start or {}).get("params")
        if old is None or not all(
            k in old and old[k].shape == v.shape for k, v in default.items()
        ):
            return None
        return {k: old[k].clone() for k in default}

    def _starts(self, warm: Params | None) -> list[Params]:
        """The warm start alone between refreshes; the warm start and the defaults at a
        refresh; the defaults and random restarts for a cold fit.

        Between two BO steps the posterior over hyperparameters moves little, so the previous
        optimum (plus the defaults now and then, as in Optuna's GPSampler) suffices; random
        restarts guard the first fit against a poor local optimum.
        """
        default = self._default_params()
        n = len(self.z_)
        if warm is not None:
            last_refresh = int(self.warm_start["full_fit_n"])  # type: ignore[index]
            if not refresh_due(n, last_refresh):
                self.full_fit_n_ = last_refresh
                return [warm]
            self.full_fit_n_ = n
            return [warm, default]
        self.full_fit_n_ = n
        starts = [default]
        generator = torch.Generator().manual_seed(0 if self.seed is None else int(self.seed))
        for _ in range(self.n_restarts):
            rand = self.kernel.random_params(self.features_, generator)
            rand["log_amplitude"] = 0.5 * torch.randn(1, generator=generator, dtype=torch.float64)
            rand["log_noise"] = default["log_noise"] + torch.randn(
                1, generator=generator, dtype=torch.float64
            )
            starts.append(rand)
        return starts

    def _optimise_hyperparameters(self) -> Params:
        warm = self._warm_params(self._default_params())
        if warm is not None:
            state = self.warm_start
            assert state is not None

            def log_posterior_at_warm() -> float:
                self._set_fit_summary(warm)
                return self.log_posterior_

            if keeps_hyperparameters(
                len(self.z_),
                state["full_fit_n"],
                state["optimised_per_observation"],
                log_posterior_at_warm,
            ):
                self.full_fit_n_ = int(state["full_fit_n"])
                self.optimised_per_observation_ = float(state["optimised_per_observation"])
                return warm
        starts = self._starts(warm)
        refresh = self.full_fit_n_ == len(self.z_)
        max_iter = self.max_iter if refresh else min(self.max_iter, WARM_MAX_ITER)
        params = maximise_log_posterior(
            lambda p: self._log_posterior(p)[0], starts, len(self.z_), max_iter
        )
        if params is None:
            _logger.warning("GP hyperparameter fit failed from every start; using the defaults.")
            params = self._default_params()
        self._set_fit_summary(params)
        self.optimised_per_observation_ = self.log_posterior_ / len(self.z_)
        return params

    def _set_fit_summary(self, params: Params) -> None:
        with torch.no_grad():
            log_posterior, log_ml = self._log_posterior(params)
        self.log_posterior_, self.log_marginal_likelihood_ = float(log_posterior), float(log_ml)

    def warm_start_state(self) -> dict[str, Any]:
        """What the next fit needs to start from this one."""
        return {
            "params": {k: v.detach().clone() for k, v in self.params_.items()},
            "full_fit_n": self.full_fit_n_,
            "optimised_per_observation": self.optimised_per_observation_,
        }

    def _log_posterior(self, params: Params) -> tuple[torch.Tensor, torch.Tensor]:
        """(log marginal likelihood + log priors, log marginal likelihood) of ``z_``."""
        K = self._train_covariance(params)
        n = len(self.z_)
        if n >= ANALYTIC_GRADIENT_ROWS:
            quad, log_det = self._quadratic_form(K)
            log_ml = -0.5 * quad - 0.5 * log_det - 0.5 * n * math.log(2 * math.pi)
        else:
            L = robust_cholesky(K, log=False)
            residual = self.z_ - self._constant_mean(L)[0]
            alpha = torch.cholesky_solve(residual[:, None], L)[:, 0]
            log_ml = (
                -0.5 * (residual @ alpha)
                - torch.log(L.diagonal()).sum()
                - 0.5 * n * math.log(2 * math.pi)
            )
        amplitude = torch.exp(params["log_amplitude"])[0]
        noise = torch.exp(params["log_noise"])[0] + self.min_noise
        log_prior = (
            self.kernel.log_prior(params)
            + gamma_log_prior(amplitude, 2.0, 1.0)
            + gamma_log_prior(noise, 1.1, 30.0)
        )
        return log_ml + log_prior, log_ml

    def _quadratic_form(self, K: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``((z - beta)^T K^-1 (z - beta), log|K|)`` with the analytic gradient of
        :func:`~condsamplers.models.leaf_algebra.quadratic_forms`. With ``mean="gls"``,
        ``beta = 1^T K^-1 z / 1^T K^-1 1`` and the form is ``z^T K^-1 z - (1^T K^-1 z)^2 /
        1^T K^-1 1``; else ``beta = 0``."""
        W = self.z_[:, None]
        if self.mean == "gls":
            W = torch.cat([W, torch.ones_like(W)], dim=1)
        S, log_det, _, _ = quadratic_forms(K[None], W[None], log=False)
        quad = S[0, 0, 0]
        if self.mean == "gls":
            quad = quad - S[0, 0, 1] ** 2 / S[0, 1, 1]
        return quad, log_det[0]

    def _covariance(self, X: torch.Tensor, active: torch.Tensor, params: Params) -> torch.Tensor:
        """``s * R(x, x_i)`` against the training rows."""
        amplitude = torch.exp(params["log_amplitude"])[0]
        R = self.kernel.correlation(X, active, self.X_, self.active_, params, self.features_)
        return amplitude * R

    def _train_covariance(self, params: Params) -> torch.Tensor:
        noise = torch.exp(params["log_noise"])[0] + self.min_noise
        K = self._covariance(self.X_, self.active_, params)
        return K + noise * torch.eye(len(self.z_), dtype=torch.float64)

    def _constant_mean(self, L: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``(beta, K^-1 1)`` for the Cholesky factor ``L`` of ``K``: the GLS estimate with
        ``mean="gls"``, else ``(0, None)`` (the sample mean, already subtracted)."""
        if self.mean != "gls":
            return torch.zeros((), dtype=torch.float64), None
        k_inv_one = torch.cholesky_solve(torch.ones_like(self.z_)[:, None], L)[:, 0]
        return (k_inv_one @ self.z_) / k_inv_one.sum(), k_inv_one

    def _factorise(self, beta: torch.Tensor | None = None) -> None:
        with torch.no_grad():
            self.L_ = robust_cholesky(self._train_covariance(self.params_))
            self.beta_, self.k_inv_one_ = self._constant_mean(self.L_)
            if beta is not None:
                self.beta_ = beta
            residual = self.z_ - self.beta_
            self.alpha_ = torch.cholesky_solve(residual[:, None], self.L_)[:, 0]

    # -- prediction ----------------------------------------------------------------------
    def prior_mean(self) -> float:
        """The constant prior mean ``beta`` in the units of ``y`` (module docstring)."""
        return float(self.beta_) * self.y_std_ + self.y_mean_

    def log_evidence(self) -> float:
        """The marginal likelihood at the fitted hyperparameters in the units of ``y``
        (:func:`~condsamplers.models.fitting.evidence_of_values`)."""
        return evidence_of_values(self.log_marginal_likelihood_, len(self.z_), self.y_std_)

    def noise_variance(self) -> float:
        """The fitted variance of ``eps_i`` (module docstring), in the units of ``y``."""
        return noise_variance_of(self.params_, self.min_noise, self.y_std_)

    def length_scales(self) -> np.ndarray | None:
        """The kernel's (:meth:`condsamplers.kernels.Kernel.length_scales`)."""
        return self.kernel.length_scales(self.params_)

    def mean_at_observations(self) -> np.ndarray:
        """``y - sigma^2 alpha`` (:meth:`Surrogate.mean_at_observations`; ``alpha = (K +
        sigma^2 I)^-1 (z - beta)`` as cached)."""
        noise = torch.exp(self.params_["log_noise"])[0] + self.min_noise
        mean = self.z_ - noise * self.alpha_
        return (mean * self.y_std_ + self.y_mean_).numpy()

    def posterior(
        self, X: torch.Tensor, active: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        amplitude = torch.exp(self.params_["log_amplitude"])[0]
        k_star = self._covariance(X, active, self.params_)
        mean = self.beta_ + k_star @ self.alpha_
        v = torch.linalg.solve_triangular(self.L_, k_star.T, upper=False)
        var = amplitude - (v * v).sum(0)
        if self.k_inv_one_ is not None:  # the uncertainty of the GLS constant
            gap = 1.0 - k_star @ self.k_inv_one_
            var = var + gap * gap / self.k_inv_one_.sum()
        var = var.clamp_min(1e-12)
        return mean * self.y_std_ + self.y_mean_, var * self.y_std_**2

    def condition_on(self, X: np.ndarray, active: np.ndarray, y: np.ndarray) -> ExactGP:
        other = ExactGP(
            self.kernel,
            self.n_restarts,
            self.seed,
            warm_start=self.warm_start,
            max_iter=self.max_iter,
            min_noise=self.min_noise,
            mean=self.mean,
        )
        other.features_ = self.features_
        other.y_mean_, other.y_std_ = self.y_mean_, self.y_std_
        other.params_ = self.params_
        other.X_ = torch.cat([self.X_, torch.as_tensor(X, dtype=torch.float64)])
        other.active_ = torch.cat([self.active_, torch.as_tensor(active, dtype=torch.bool)])
        z_new = (torch.as_tensor(y, dtype=torch.float64) - self.y_mean_) / self.y_std_
        other.z_ = torch.cat([self.z_, z_new])
        other._factorise(self.beta_)
        return other
