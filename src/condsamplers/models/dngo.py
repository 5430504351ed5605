"""DNGO: adaptive basis regression with a deep network (Snoek et al., ICML 2015, sec. 3).

Model, on standardised targets ``z = (y - mean(y)) / std(y)``::

    phi(x) = [h(x; theta), 1]                    D = h_L + 1 basis functions: the last hidden
                                                 layer of a tanh MLP (default 3 x 50) and a bias
    z_i = eta(x_i) + phi(x_i)^T w + eps_i,       w ~ N(0, I / alpha),  eps_i ~ N(0, 1 / beta)
    eta(x) = 0, or with quadratic_prior_mean (eq. 9, c = 1/2 the centre of the box):
    eta(x) = lambda + sum_j a_j Lambda_j (x_j - 1/2)^2   (active numerical columns j)

The network input is :class:`~condsamplers.models.nn_inputs.InputEncoder` (values, one-hot
choices, active flags). Fitting, in three stages:

1. (``quadratic_prior_mean`` only) ``lambda``, ``Lambda`` by MAP under ``z ~ N(eta(X), s^2)``.
2. ``theta``: MAP training of the network with a linear output layer on ``z - eta(x)`` (sec. 3:
   "a point estimate for the remaining parameters"): Adam, shuffled mini-batches, weight decay
   (a Gaussian prior on the weights), a cosine-decayed learning rate. A cold fit runs
   ``n_epochs`` epochs, a warm-started one (``warm_start``: the previous network)
   ``n_epochs_warm``; both are capped at ``max_updates`` Adam steps, so a fit costs ``O(n)``
   and at most a fixed number of steps.
3. The output layer is replaced by Bayesian linear regression on ``phi`` (eq. 4-7): with
   ``Phi`` the ``(n, D)`` basis of the data and ``r = z - eta(X)``::

       K = beta Phi^T Phi + alpha I,   m = beta K^-1 Phi^T r                     (eq. 6-7)
       mean(x) = eta(x) + phi(x)^T m,  var(x) = phi(x)^T K^-1 phi(x)             (eq. 4-5)

   ``var`` is the variance of the latent function (eq. 5 without its noise term ``1 / beta``).
   ``alpha``, ``beta`` (and ``lambda``, ``Lambda``) maximise the log marginal likelihood of
   eq. 8 plus log hyperpriors::

       log p(r | alpha, beta) = D/2 log alpha + n/2 log beta - n/2 log 2 pi
                                - beta/2 ||r - Phi m||^2 - alpha/2 m^T m - 1/2 log|K|

   with the *squared* residual norm and ``log|K| = 2 sum log diag chol(K)`` (never the
   determinant itself, which under/overflows for D = 51), by L-BFGS-B over ``log alpha`` and
   ``log(1 / beta)`` from the defaults and ``n_restarts`` random starts. It equals
   ``log N(r; 0, Phi Phi^T / alpha + I / beta)`` (``tests/test_dngo.py`` checks this), but costs
   ``O(n D^2 + D^3)``: no ``n x n`` matrix is ever formed. Hyperpriors, as the library's GPs:
   Gamma(2, 1) on the prior signal variance ``mean_i ||phi(x_i)||^2 / alpha`` (the analogue of
   the GP amplitude), Gamma(1.1, 30) on the noise variance ``1 / beta`` (floored at
   ``MIN_NOISE``); for eq. 9, N(0, 1) on ``lambda`` and the horseshoe on each ``Lambda_j``
   (Spearmint's closed-form approximation ``log log(1 + 3 (tau / Lambda)^2)``, ``tau = 0.1``)
   over ``log Lambda_j``.

``integrate_hyperparameters=True`` replaces the point estimate of ``(alpha, beta)`` by a
deterministic quadrature: a 7 x 7 grid over ``(log alpha, log 1/beta)`` spanning +-3 standard
deviations of the Laplace approximation at the MAP (along its principal axes), each node
weighted by its exact (unnormalised) posterior density; the predictive is the mixture of the
nodes' Gaussians (mean and variance by the law of total variance). The paper slice-samples
instead (sec. 3); a grid is deterministic, needs no burn-in, and for two parameters is cheap.

:meth:`DNGO.condition_on` adds observations exactly: the sufficient statistics
``Phi^T Phi`` and ``Phi^T r`` grow by the new rows' basis, ``K`` is refactorised (``O(D^3)``),
network, ``alpha``, ``beta`` and ``eta`` stay fixed.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import torch

from condsamplers.log import get_logger
from condsamplers.models.base import Surrogate
from condsamplers.models.fitting import (
    MIN_NOISE,
    RAW_BOUND,
    Params,
    gamma_log_prior,
    maximise_log_posterior,
    random_restarts,
    robust_cholesky,
    standardise,
)
from condsamplers.models.nn_inputs import (
    MLP,
    InputEncoder,
    check_hidden_sizes,
    resolve_device,
)
from condsamplers.space import FeatureSpec
from condsamplers.validation import check_int, check_positive

_logger = get_logger(__name__)

#: Centre ``c`` of the quadratic prior mean (eq. 9) in the unit box: the paper's prior mean.
QUADRATIC_CENTRE = 0.5
#: Scale ``tau`` of the horseshoe prior on the curvatures ``Lambda_j`` (Spearmint's default).
HORSESHOE_SCALE = 0.1
#: Nodes per axis of the ``(log alpha, log 1/beta)`` grid of ``integrate_hyperparameters``.
GRID_SIZE = 7
#: Half-width of that grid in Laplace standard deviations.
GRID_HALF_WIDTH = 3.0
#: The final learning rate of the cosine schedule, as a fraction of the initial one.
FINAL_LR_FRACTION = 0.05


def blr_log_evidence(
    Phi: torch.Tensor, r: torch.Tensor, alpha: torch.Tensor, beta: torch.Tensor
) -> torch.Tensor:
    """Eq. 8: ``log p(r | Phi, alpha, beta)`` of Bayesian linear regression, through a Cholesky
    factor of the ``D x D`` matrix ``K`` (``O(n D^2 + D^3)``; differentiable)."""
    n, D = Phi.shape
    L = _precision_factor(Phi.T @ Phi, alpha, beta, log=False)
    m = beta * torch.cholesky_solve((Phi.T @ r)[:, None], L)[:, 0]
    residual = r - Phi @ m
    return (
        0.5 * D * torch.log(alpha)
        + 0.5 * n * torch.log(beta)
        - 0.5 * n * math.log(2.0 * math.pi)
        - 0.5 * beta * (residual @ residual)
        - 0.5 * alpha * (m @ m)
        - torch.log(L.diagonal()).sum()
    )


def _precision_factor(
    gram: torch.Tensor, alpha: torch.Tensor, beta: torch.Tensor, log: bool
) -> torch.Tensor:
    """Cholesky factor of ``K = beta Phi^T Phi + alpha I`` (eq. 7); a batch for batched
    ``alpha``, ``beta`` of shape ``(G,)``."""
    eye = torch.eye(gram.shape[-1], dtype=gram.dtype, device=gram.device)
    K = beta[..., None, None] * gram + alpha[..., None, None] * eye
    return robust_cholesky(K, log=log)


def horseshoe_log_prior(value: torch.Tensor, scale: float) -> torch.Tensor:
    """Spearmint's approximation of the horseshoe log density, ``log log(1 + 3 (scale/v)^2)``
    (Carvalho et al. 2009 bound it between ``log(1 + 2/v^2)`` and ``log(1 + 4/v^2)`` / 2)."""
    return torch.log(torch.log1p(3.0 * (scale / value) ** 2))


@dataclasses.dataclass(frozen=True)
class _BLR:
    """The Bayesian linear regression layer: sufficient statistics and, per quadrature node
    ``k`` (one node for a point estimate), ``alpha_k``, ``beta_k``, weight ``w_k``, the Cholesky
    factor of ``K_k`` and the posterior mean ``m_k``."""

    gram: torch.Tensor  # (D, D) Phi^T Phi
    moment: torch.Tensor  # (D,) Phi^T r
    n: int
    alpha: torch.Tensor  # (G,)
    beta: torch.Tensor  # (G,)
    weights: torch.Tensor  # (G,), sums to 1
    factor: torch.Tensor  # (G, D, D)
    mean: torch.Tensor  # (G, D)

    @classmethod
    def solve(
        cls,
        gram: torch.Tensor,
        moment: torch.Tensor,
        n: int,
        alpha: torch.Tensor,
        beta: torch.Tensor,
        weights: torch.Tensor,
    ) -> _BLR:
        factor = _precision_factor(gram, alpha, beta, log=True)
        rhs = (beta[:, None] * moment[None, :])[..., None]
        mean = torch.cholesky_solve(rhs, factor)[..., 0]
        return cls(gram, moment, n, alpha, beta, weights, factor, mean)

    def add_rows(self, Phi: torch.Tensor, r: torch.Tensor) -> _BLR:
        """The same layer with extra rows (same ``alpha``, ``beta``, weights)."""
        return _BLR.solve(
            self.gram + Phi.T @ Phi,
            self.moment + Phi.T @ r,
            self.n + len(r),
            self.alpha,
            self.beta,
            self.weights,
        )

    def predict(self, Phi: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Mixture mean and variance of ``phi^T w`` over the nodes (total variance)."""
        means = self.mean @ Phi.T  # (G, m)
        v = torch.linalg.solve_triangular(
            self.factor, Phi.T.expand(len(self.weights), *Phi.T.shape), upper=False
        )
        variances = (v * v).sum(1)  # (G, m)
        mean = self.weights @ means
        spread = self.weights @ (means - mean) ** 2
        return mean, self.weights @ variances + spread


class DNGO(Surrogate):
    """Snoek et al.'s (2015) DNGO: a tanh network's last hidden layer as the basis of a
    Bayesian linear regression (module docstring: eq. 4-9 and every choice).

    Args:
        hidden_sizes: widths of the hidden layers (the paper's 3 x 50).
        n_epochs: epochs of a cold network fit.
        n_epochs_warm: epochs of a fit warm-started from ``warm_start``.
        max_updates: cap on the Adam steps of one fit (bounds the cost for large ``n``).
        batch_size: mini-batch size (the whole data when smaller).
        learning_rate: initial Adam step size (cosine-decayed to ``FINAL_LR_FRACTION`` of it).
        weight_decay: coefficient of ``||W||^2`` (weights, not biases) in the per-point loss,
            i.e. a Gaussian prior on the weights.
        n_restarts: random restarts of the ``alpha``, ``beta`` (and ``eta``) fit.
        integrate_hyperparameters: average over a grid of ``(alpha, beta)`` weighted by their
            posterior instead of the MAP point.
        quadratic_prior_mean: the quadratic prior mean of eq. 9 (a bowl centred in the box).
        seed: seed of the initial network, the mini-batches and the restarts.
        warm_start: what :meth:`warm_start_state` returned after a previous fit.
        device: ``"cpu"`` (default) or ``"cuda"``; the posterior returns CPU float64 tensors.

    Attributes (after ``fit``): ``alpha_``, ``beta_`` (MAP), ``log_marginal_likelihood_``
    (eq. 8 at the MAP, standardised ``y``), ``log_posterior_`` (plus the log hyperpriors),
    ``n_updates_`` (Adam steps of the network fit), ``training_loss_`` (the trained network's
    mean squared error on ``z - eta``).
    """

    def __init__(
        self,
        hidden_sizes: tuple[int, ...] = (50, 50, 50),
        n_epochs: int = 500,
        n_epochs_warm: int = 100,
        max_updates: int = 3000,
        batch_size: int = 16,
        learning_rate: float = 1e-2,
        weight_decay: float = 1e-5,
        n_restarts: int = 2,
        integrate_hyperparameters: bool = False,
        quadratic_prior_mean: bool = False,
        seed: int | None = None,
        warm_start: dict[str, Any] | None = None,
        device: str = "cpu",
    ) -> None:
        self.hidden_sizes = check_hidden_sizes(hidden_sizes, "DNGO")
        self.n_epochs = check_int("n_epochs", n_epochs, 1, owner="DNGO")
        self.n_epochs_warm = check_int("n_epochs_warm", n_epochs_warm, 1, owner="DNGO")
        self.max_updates = check_int("max_updates", max_updates, 1, owner="DNGO")
        self.batch_size = check_int("batch_size", batch_size, 1, owner="DNGO")
        self.n_restarts = check_int("n_restarts", n_restarts, 0, owner="DNGO")
        self.learning_rate = check_positive("learning_rate", learning_rate, owner="DNGO")
        self.weight_decay = check_positive(
            "weight_decay", weight_decay, owner="DNGO", allow_zero=True
        )
        self.integrate_hyperparameters = bool(integrate_hyperparameters)
        self.quadratic_prior_mean = bool(quadratic_prior_mean)
        self.seed = seed
        self.warm_start = warm_start
        self.device = resolve_device(device, "DNGO")

    # -- fitting -------------------------------------------------------------------------
    def fit(self, X: np.ndarray, active: np.ndarray, y: np.ndarray, features: FeatureSpec) -> DNGO:
        z, self.y_mean_, self.y_std_ = standardise(y, "DNGO")
        self.encoder_ = InputEncoder.from_categories(features.n_categories)
        self.numerical_ = torch.as_tensor(np.flatnonzero(np.asarray(features.n_categories) == 0))
        self.mlp_ = MLP.build(self.encoder_.n_inputs, self.hidden_sizes)
        X_t = torch.as_tensor(X, dtype=torch.float64)
        active_t = torch.as_tensor(active, dtype=torch.bool)
        generator = torch.Generator().manual_seed(0 if self.seed is None else int(self.seed))
        z = z.to(self.device)
        self.eta_params_ = self._fit_prior_mean(X_t, active_t, z, generator)
        inputs = self.encoder_(X_t.to(self.device), active_t.to(self.device))
        eta = self._eta(X_t, active_t, self.eta_params_).to(self.device)
        self.theta_ = self._train_network(inputs, z - eta, generator)
        with torch.no_grad():
            Phi = self._basis_of_inputs(inputs)
        self._fit_blr(Phi, X_t, active_t, z, generator)
        return self

    def warm_start_state(self) -> dict[str, Any]:
        """What the next fit needs to start from this one: the network parameters."""
        return {"theta": self.theta_.detach().cpu().clone(), "sizes": self.mlp_.sizes}

    def _initial_theta(self, generator: torch.Generator) -> tuple[torch.Tensor, bool]:
        """The warm-start network if its layout matches, else a fresh one; and whether warm."""
        state = self.warm_start
        if state and tuple(state.get("sizes", ())) == self.mlp_.sizes:
            return state["theta"].to(torch.float64).clone(), True
        return self.mlp_.init(generator), False

    def _train_network(
        self, inputs: torch.Tensor, targets: torch.Tensor, generator: torch.Generator
    ) -> torch.Tensor:
        """MAP network parameters: Adam on mean squared error + weight decay (stage 2)."""
        theta0, warm = self._initial_theta(generator)
        n = len(targets)
        batch = min(self.batch_size, n)
        per_epoch = math.ceil(n / batch)
        epochs = self.n_epochs_warm if warm else self.n_epochs
        n_updates = min(self.max_updates, epochs * per_epoch)
        theta = theta0.to(self.device).clone()
        decay = self.weight_decay * self.mlp_.weight_mask().to(self.device)
        optimiser = torch.optim.Adam([theta], lr=self.learning_rate)
        schedule = torch.optim.lr_scheduler.CosineAnnealingLR(
            optimiser, T_max=n_updates, eta_min=FINAL_LR_FRACTION * self.learning_rate
        )
        for step in range(n_updates):
            position = step % per_epoch
            if position == 0:
                order = torch.randperm(n, generator=generator).to(self.device)
            rows = order[position * batch : (position + 1) * batch]
            with torch.no_grad():  # gradient of the loss by the MLP's own backprop
                layers = self.mlp_.forward_layers(theta, inputs[rows])
                residual = layers[-1] - targets[rows]
                grad = self.mlp_.backward(theta, layers, (2.0 / len(rows)) * residual)
                theta.grad = grad + 2.0 * decay * theta
            optimiser.step()
            schedule.step()
        with torch.no_grad():
            self.training_loss_ = float(((self.mlp_(theta, inputs) - targets) ** 2).mean())
        self.n_updates_ = n_updates
        self.warm_started_ = warm
        if not torch.isfinite(theta).all():
            _logger.warning("DNGO: network training diverged; using the initial network.")
            return theta0.to(self.device)
        return theta.detach()

    # -- the prior mean of eq. 9 ----------------------------------------------------------
    def _eta(self, X: torch.Tensor, active: torch.Tensor, params: Params | None) -> torch.Tensor:
        """``eta(x)`` of eq. 9 (zero without ``quadratic_prior_mean``), standardised units."""
        if params is None:
            return torch.zeros(X.shape[0], dtype=torch.float64, device=X.device)
        cols = self.numerical_
        shift = (X[:, cols] - QUADRATIC_CENTRE) * active[:, cols].to(X.dtype)
        curvature = torch.exp(params["log_curvature"]).to(X.device)
        return params["offset"][0].to(X.device) + (shift * shift) @ curvature

    def _eta_log_prior(self, params: Params) -> torch.Tensor:
        curvature = torch.exp(params["log_curvature"])
        return (
            -0.5 * params["offset"][0] ** 2
            + (horseshoe_log_prior(curvature, HORSESHOE_SCALE) + params["log_curvature"]).sum()
        )

    def _fit_prior_mean(
        self, X: torch.Tensor, active: torch.Tensor, z: torch.Tensor, generator: torch.Generator
    ) -> Params | None:
        """Stage 1: MAP ``lambda``, ``Lambda`` under ``z ~ N(eta(X), s^2)`` (or ``None``)."""
        if not self.quadratic_prior_mean:
            return None
        z_cpu = z.cpu()
        default = {
            "offset": torch.zeros(1, dtype=torch.float64),
            "log_curvature": torch.full(
                (len(self.numerical_),), math.log(HORSESHOE_SCALE), dtype=torch.float64
            ),
            "log_noise": torch.zeros(1, dtype=torch.float64),
        }

        def log_posterior(params: Params) -> torch.Tensor:
            noise = torch.exp(params["log_noise"])[0] + MIN_NOISE
            residual = z_cpu - self._eta(X, active, params)
            log_lik = -0.5 * (residual @ residual) / noise - 0.5 * len(z_cpu) * torch.log(noise)
            return log_lik + self._eta_log_prior(params)

        seed = int(torch.randint(2**31 - 1, (1,), generator=generator))
        # The likelihood is flat in log Lambda until the bowl reaches the data's scale, so a
        # start at the prior's mode alone stays there: also start from steep bowls.
        steep = [
            {**default, "log_curvature": torch.full_like(default["log_curvature"], value)}
            for value in (math.log(10.0), math.log(100.0))
        ]
        starts = [default, *steep, *random_restarts(default, self.n_restarts, seed)]
        params = maximise_log_posterior(log_posterior, starts, len(z_cpu), max_iter=200)
        if params is None:
            params = default
        return {k: v for k, v in params.items() if k != "log_noise"}

    # -- the Bayesian linear regression layer (stage 3) ------------------------------------
    def _basis_of_inputs(self, inputs: torch.Tensor) -> torch.Tensor:
        h = self.mlp_.hidden(self.theta_, inputs)
        return torch.cat([h, torch.ones(h.shape[0], 1, dtype=h.dtype, device=h.device)], dim=1)

    def basis(self, X: torch.Tensor, active: torch.Tensor) -> torch.Tensor:
        """``Phi``: the ``(n, D)`` basis ``[h_L(x), 1]`` of the fitted network (CPU)."""
        inputs = self.encoder_(X.to(self.device), active.to(self.device))
        return self._basis_of_inputs(inputs).cpu()

    def prior_mean(self, X: torch.Tensor, active: torch.Tensor) -> torch.Tensor:
        """``eta(x)`` of eq. 9 in standardised units (zeros without the quadratic prior)."""
        return self._eta(X, active, self.eta_params_)

    def _log_posterior(
        self, params: Params, Phi: torch.Tensor, r: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(eq. 8 + log hyperpriors, eq. 8) at raw ``params`` for the residuals ``r``."""
        alpha = torch.exp(params["log_alpha"])[0]
        noise = torch.exp(params["log_noise"])[0] + MIN_NOISE
        log_ml = blr_log_evidence(Phi, r, alpha, 1.0 / noise)
        log_prior = gamma_log_prior(self.signal_scale_ / alpha, 2.0, 1.0) + gamma_log_prior(
            noise, 1.1, 30.0
        )
        return log_ml + log_prior, log_ml

    def _fit_blr(
        self,
        Phi: torch.Tensor,
        X: torch.Tensor,
        active: torch.Tensor,
        z: torch.Tensor,
        generator: torch.Generator,
    ) -> None:
        """MAP of ``alpha``, ``beta`` on eq. 8 (``eta`` fixed by stage 1), then the layer (or
        the grid)."""
        Phi = Phi.cpu()
        r = z.cpu() - self.prior_mean(X, active)
        #: mean squared norm of the basis: prior variance of phi^T w is this / alpha.
        self.signal_scale_ = float((Phi * Phi).sum(1).mean())
        default = {
            "log_alpha": torch.tensor([math.log(self.signal_scale_)], dtype=torch.float64),
            "log_noise": torch.tensor([math.log(1e-2)], dtype=torch.float64),
        }
        seed = int(torch.randint(2**31 - 1, (1,), generator=generator))
        starts = [default, *random_restarts(default, self.n_restarts, seed)]

        def objective(p: Params) -> torch.Tensor:
            return self._log_posterior(p, Phi, r)[0]

        params = maximise_log_posterior(objective, starts, len(r), max_iter=200)
        if params is None:
            _logger.warning("DNGO: alpha/beta fit failed from every start; using the defaults.")
            params = default
        with torch.no_grad():
            log_posterior, log_ml = self._log_posterior(params, Phi, r)
        self.log_posterior_, self.log_marginal_likelihood_ = float(log_posterior), float(log_ml)
        self.alpha_ = float(torch.exp(params["log_alpha"])[0])
        self.beta_ = 1.0 / (float(torch.exp(params["log_noise"])[0]) + MIN_NOISE)
        raw = torch.cat([params["log_alpha"], params["log_noise"]])
        if self.integrate_hyperparameters:
            nodes, weights = self._quadrature(raw, objective)
        else:
            nodes, weights = raw[None, :], torch.ones(1, dtype=torch.float64)
        with torch.no_grad():
            dev = self.device
            self.blr_ = _BLR.solve(
                (Phi.T @ Phi).to(dev),
                (Phi.T @ r).to(dev),
                len(r),
                torch.exp(nodes[:, 0]).to(dev),
                (1.0 / (torch.exp(nodes[:, 1]) + MIN_NOISE)).to(dev),
                weights.to(dev),
            )

    def _quadrature(self, raw: torch.Tensor, objective: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """Grid nodes ``(G, 2)`` over ``(log alpha, log 1/beta)`` and their posterior weights.

        The grid spans +-``GRID_HALF_WIDTH`` Laplace standard deviations along the principal
        axes of the Hessian at the MAP (unit axes where it is not negative definite).
        """

        def log_post(v: torch.Tensor) -> torch.Tensor:
            return objective({"log_alpha": v[:1], "log_noise": v[1:]})

        hessian = torch.autograd.functional.hessian(log_post, raw)
        eigenvalues, eigenvectors = torch.linalg.eigh(-hessian)
        if not bool(torch.isfinite(eigenvalues).all()) or float(eigenvalues.min()) <= 1e-8:
            eigenvalues, eigenvectors = torch.ones(2, dtype=torch.float64), torch.eye(2)
        scales = eigenvectors.to(torch.float64) / torch.sqrt(eigenvalues)[None, :]
        ticks = torch.linspace(-GRID_HALF_WIDTH, GRID_HALF_WIDTH, GRID_SIZE, dtype=torch.float64)
        offsets = torch.cartesian_prod(ticks, ticks)
        nodes = (raw[None, :] + offsets @ scales.T).clamp(-RAW_BOUND, RAW_BOUND)
        with torch.no_grad():
            log_density = torch.stack([log_post(node) for node in nodes])
        log_density = torch.nan_to_num(log_density, nan=-math.inf)
        weights = torch.softmax(log_density, dim=0)
        keep = weights > 1e-4 * weights.max()
        return nodes[keep], weights[keep] / weights[keep].sum()

    # -- prediction ----------------------------------------------------------------------
    def posterior(
        self, X: torch.Tensor, active: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Eq. 4-5 (latent variance, no ``1 / beta``), mixed over the quadrature nodes."""
        X = X.to(self.device)
        active = active.to(self.device)
        Phi = self._basis_of_inputs(self.encoder_(X, active))
        mean, var = self.blr_.predict(Phi)
        mean = mean + self._eta(X, active, self.eta_params_)
        var = var.clamp_min(1e-12)
        return (mean * self.y_std_ + self.y_mean_).cpu(), (var * self.y_std_**2).cpu()

    def condition_on(self, X: np.ndarray, active: np.ndarray, y: np.ndarray) -> DNGO:
        """Exact Bayesian linear regression update with the extra rows (same network, same
        ``alpha``, ``beta``, ``eta``): ``O(m D^2 + D^3)`` for ``m`` new rows."""
        other = _copy_fitted(self)
        X_t = torch.as_tensor(X, dtype=torch.float64, device=self.device)
        active_t = torch.as_tensor(active, dtype=torch.bool, device=self.device)
        y_t = torch.as_tensor(y, dtype=torch.float64, device=self.device)
        with torch.no_grad():
            Phi = self._basis_of_inputs(self.encoder_(X_t, active_t))
            r = (y_t - self.y_mean_) / self.y_std_ - self._eta(X_t, active_t, self.eta_params_)
            other.blr_ = self.blr_.add_rows(Phi, r)
        return other


def _copy_fitted(model: DNGO) -> DNGO:
    """A shallow copy sharing the fitted network (never modified after fit)."""
    other = DNGO.__new__(DNGO)
    other.__dict__.update(model.__dict__)
    return other
