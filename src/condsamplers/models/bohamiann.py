"""BOHAMIANN: a Bayesian neural network sampled by scale-adapted SGHMC (Springenberg, Klein,
Falkner & Hutter, NIPS 2016; defaults of the supplement, sec. D.1).

Model, on standardised targets ``z = (y - mean(y)) / std(y)`` and the network input of
:class:`~condsamplers.models.nn_inputs.InputEncoder`::

    z_i ~ N(f(x_i; theta), sigma^2)            f: tanh MLP, default 3 x 50 (D.1)
    theta ~ N(0, I / lambda)                   every weight and bias ("weight decay")
    lambda ~ Gamma(a, b),  a = b = 100         Gibbs-updated every ``gibbs_every`` steps (D.1)
    log sigma^2 ~ N(log noise_prior_median, noise_prior_log_var)   D.1: a log-normal prior on
                                               the noise variance, "with variance 0.01"

``sigma`` is one scalar parameter besides the network (D.1), sampled with it. The negative log
posterior ``U(q)``, ``q = (theta, log sigma^2)``, is estimated on mini-batches ``B``::

    U(q) = n/|B| sum_{i in B} [(z_i - f(x_i))^2 / (2 sigma^2) + log(sigma^2) / 2]
           + lambda/2 ||theta||^2 + (log sigma^2 - mu_0)^2 / (2 s_0^2)

**Scale-adapted SGHMC** (the paper's sec. 3; pybnn's ``AdaptiveSGHMC``), per coordinate, with
step size ``eps`` and friction ``mdecay`` (``eps V^-1/2 C = mdecay``)::

    during burn-in:  tau <- tau - tau g^2 / v_hat + 1;   g <- g + (grad U - g) / (tau + 1)
                     v_hat <- v_hat + (grad U^2 - v_hat) / (tau + 1)
    M^-1 = 1 / sqrt(v_hat)                     the preconditioner, frozen after burn-in
    v <- v - eps^2 M^-1 grad U - mdecay v + N(0, 2 eps^2 mdecay M^-1 - eps^4)
    q <- q + v

Defaults (D.1): ``eps = 1e-2``, ``mdecay = 0.05``, 2000 burn-in steps, then one sample every 50
steps until 50 samples are kept; mini-batches of 20. Departures from D.1: a cold chain
burns in for 5000 steps (at 2000 it still underfitted the supplement's sinc data), and the
noise prior is wider (``noise_prior_log_var`` 1 instead of 0.01, which pinned the noise).
**Persistent chain**: ``warm_start`` (the previous fit's chain state: parameters, momentum,
preconditioner statistics, ``lambda``) continues the chain on the new data with
``n_burn_in_warm`` (default 2000, D.1's burn-in) steps instead of ``n_burn_in``; the
preconditioner keeps adapting during that burn-in.

**Prediction.** With samples ``k = 1..K`` (weights ``w_k``, uniform after ``fit``), the latent
mean and variance by the law of total variance over the samples' means::

    mean(x) = sum_k w_k f_k(x),   var(x) = sum_k w_k (f_k(x) - mean(x))^2

and the noise ``sum_k w_k sigma_k^2`` separately (:meth:`BOHAMIANN.noise_variance`); the
predictive variance of an observation is their sum. The samples are fixed at fit time, so
predictions are deterministic, and all ``K`` networks run in one batched forward pass,
differentiable in ``X``.

**Conditioning** (:meth:`BOHAMIANN.condition_on`): importance reweighting of the stored samples
by the likelihood of the new observations, ``w_k ∝ w_k prod_j N(z_j; f_k(x_j), sigma_k^2)``.
When the weights would collapse (effective sample size ``1 / sum w_k^2`` below
``min_ess_fraction * K``), the likelihood is tempered, ``w_k ∝ w_k L_k^t`` with the largest
``t in (0, 1]`` that keeps that effective sample size (bisection), and this is logged. It costs
one batched forward pass at the new points; the chain is not rerun.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from condsamplers.log import get_logger
from condsamplers.models.base import Surrogate
from condsamplers.models.fitting import standardise
from condsamplers.models.nn_inputs import (
    MLP,
    InputEncoder,
    check_hidden_sizes,
    resolve_device,
)
from condsamplers.space import FeatureSpec
from condsamplers.validation import check_int, check_positive

_logger = get_logger(__name__)

#: Guards the preconditioner ``1 / (sqrt(v_hat) + EPSILON)`` (pybnn's value).
EPSILON = 1e-16
#: Bisection steps of the tempering exponent of :meth:`BOHAMIANN.condition_on`.
_TEMPERING_STEPS = 40
#: SGHMC steps whose mini-batches and noise are drawn in one call.
_DRAW_BLOCK = 100


class BOHAMIANN(Surrogate):
    """Springenberg et al.'s (2016) BOHAMIANN: a Bayesian tanh network sampled by
    scale-adapted SGHMC (module docstring: the model, the sampler and every choice).

    Args:
        hidden_sizes: widths of the hidden layers (D.1: 3 x 50).
        n_burn_in: burn-in steps of a cold chain (D.1: 2000; here 5000, see above).
        n_burn_in_warm: burn-in steps when ``warm_start`` continues a previous chain.
        n_samples: samples kept (D.1: 50).
        keep_every: steps between two kept samples (D.1: 50).
        step_size: ``eps`` (D.1: 1e-2).
        mdecay: friction ``eps V^-1/2 C`` (the paper: 0.05).
        batch_size: mini-batch size (the whole data when smaller).
        gibbs_every: steps between Gibbs updates of the weight precision (D.1: 100).
        weight_prior_shape, weight_prior_rate: the Gamma(a, b) hyperprior on the weight
            precision (D.1: a = b = 100).
        noise_prior_median: median of the log-normal prior on the noise variance, in units of
            the standardised ``y``.
        noise_prior_log_var: variance of ``log sigma^2`` under that prior (D.1: 0.01).
        min_ess_fraction: :meth:`condition_on` tempers the likelihood to keep at least this
            fraction of the samples as effective sample size.
        seed: seed of the initial network, the mini-batches and the sampler's noise.
        warm_start: what :meth:`warm_start_state` returned after a previous fit.
        device: ``"cpu"`` (default) or ``"cuda"``; the posterior returns CPU float64 tensors.

    Attributes (after ``fit``): ``samples_`` (``(K, P + 1)``: network parameters and
    ``log sigma^2``), ``weights_`` (``(K,)``), ``weight_precision_`` (the chain's last
    ``lambda``), ``n_steps_`` (SGHMC steps of this fit), ``warm_started_``.
    """

    def __init__(
        self,
        hidden_sizes: tuple[int, ...] = (50, 50, 50),
        n_burn_in: int = 5000,
        n_burn_in_warm: int = 2000,
        n_samples: int = 50,
        keep_every: int = 50,
        step_size: float = 1e-2,
        mdecay: float = 0.05,
        batch_size: int = 20,
        gibbs_every: int = 100,
        weight_prior_shape: float = 100.0,
        weight_prior_rate: float = 100.0,
        noise_prior_median: float = 1e-2,
        noise_prior_log_var: float = 1.0,
        min_ess_fraction: float = 0.2,
        seed: int | None = None,
        warm_start: dict[str, Any] | None = None,
        device: str = "cpu",
    ) -> None:
        name = "BOHAMIANN"
        self.hidden_sizes = check_hidden_sizes(hidden_sizes, name)
        self.n_burn_in = check_int("n_burn_in", n_burn_in, 0, owner=name)
        self.n_burn_in_warm = check_int("n_burn_in_warm", n_burn_in_warm, 0, owner=name)
        self.n_samples = check_int("n_samples", n_samples, 1, owner=name)
        self.keep_every = check_int("keep_every", keep_every, 1, owner=name)
        self.step_size = check_positive("step_size", step_size, owner=name)
        self.mdecay = check_positive("mdecay", mdecay, owner=name)
        if self.mdecay >= 1.0:
            raise ValueError(f"{name}: mdecay={mdecay!r} must be in (0, 1).")
        self.batch_size = check_int("batch_size", batch_size, 1, owner=name)
        self.gibbs_every = check_int("gibbs_every", gibbs_every, 1, owner=name)
        self.weight_prior_shape = check_positive(
            "weight_prior_shape", weight_prior_shape, owner=name
        )
        self.weight_prior_rate = check_positive("weight_prior_rate", weight_prior_rate, owner=name)
        self.noise_prior_median = check_positive(
            "noise_prior_median", noise_prior_median, owner=name
        )
        self.noise_prior_log_var = check_positive(
            "noise_prior_log_var", noise_prior_log_var, owner=name
        )
        self.min_ess_fraction = check_positive("min_ess_fraction", min_ess_fraction, owner=name)
        if self.min_ess_fraction > 1.0:
            raise ValueError(f"{name}: min_ess_fraction={min_ess_fraction!r} must be <= 1.")
        self.seed = seed
        self.warm_start = warm_start
        self.device = resolve_device(device, name)

    # -- fitting -------------------------------------------------------------------------
    def fit(
        self, X: np.ndarray, active: np.ndarray, y: np.ndarray, features: FeatureSpec
    ) -> BOHAMIANN:
        z, self.y_mean_, self.y_std_ = standardise(y, "BOHAMIANN")
        self.encoder_ = InputEncoder.from_categories(features.n_categories)
        self.mlp_ = MLP.build(self.encoder_.n_inputs, self.hidden_sizes)
        seed = 0 if self.seed is None else int(self.seed)
        generator = torch.Generator().manual_seed(seed)
        rng = np.random.default_rng(seed)
        inputs = self.encoder_(
            torch.as_tensor(X, dtype=torch.float64), torch.as_tensor(active, dtype=torch.bool)
        ).to(self.device)
        state = self._initial_state(generator)
        self.samples_ = self._run_chain(inputs, z.to(self.device), state, generator, rng)
        self.weights_ = torch.full(
            (self.n_samples,), 1.0 / self.n_samples, dtype=torch.float64, device=self.device
        )
        self.chain_state_ = state
        self.weight_precision_ = float(state["weight_precision"])
        return self

    def warm_start_state(self) -> dict[str, Any]:
        """The chain's state after this fit: where the next fit continues."""
        state = {k: v.detach().cpu().clone() for k, v in self.chain_state_.items()}
        return {**state, "sizes": self.mlp_.sizes}

    def _initial_state(self, generator: torch.Generator) -> dict[str, torch.Tensor]:
        """The previous chain's state if its layout matches, else a fresh chain."""
        warm = self.warm_start
        self.warm_started_ = bool(warm) and tuple(warm.get("sizes", ())) == self.mlp_.sizes
        if self.warm_started_:
            keys = ("q", "momentum", "v_hat", "g", "tau", "weight_precision")
            return {k: warm[k].to(torch.float64).clone().to(self.device) for k in keys}
        q = torch.cat(
            [
                self.mlp_.init(generator),
                torch.tensor([math.log(self.noise_prior_median)], dtype=torch.float64),
            ]
        ).to(self.device)
        ones = torch.ones_like(q)
        return {
            "q": q,
            "momentum": torch.zeros_like(q),
            "v_hat": ones.clone(),
            "g": ones.clone(),
            "tau": ones.clone(),
            "weight_precision": torch.tensor(
                self.weight_prior_shape / self.weight_prior_rate, dtype=torch.float64
            ).to(self.device),
        }

    def _potential_gradient(
        self,
        q: torch.Tensor,
        inputs: torch.Tensor,
        z: torch.Tensor,
        rows: torch.Tensor,
        weight_precision: torch.Tensor,
    ) -> torch.Tensor:
        """Mini-batch estimate of ``grad U(q)`` (module docstring), backpropagated by hand."""
        theta, log_noise = q[:-1], q[-1]
        layers = self.mlp_.forward_layers(theta, inputs[rows])
        scale = len(z) / len(rows)
        precision = torch.exp(-log_noise)
        residual = z[rows] - layers[-1]
        grad = torch.empty_like(q)
        grad[:-1] = self.mlp_.backward(theta, layers, -scale * precision * residual)
        grad[:-1] += weight_precision * theta
        grad[-1] = (
            scale * 0.5 * (len(rows) - precision * (residual @ residual))
            + (log_noise - math.log(self.noise_prior_median)) / self.noise_prior_log_var
        )
        return grad

    def _run_chain(
        self,
        inputs: torch.Tensor,
        z: torch.Tensor,
        state: dict[str, torch.Tensor],
        generator: torch.Generator,
        rng: np.random.Generator,
    ) -> torch.Tensor:
        """Scale-adapted SGHMC: burn-in (adapting the preconditioner), then ``n_samples``
        samples every ``keep_every`` steps. Updates ``state`` in place; returns ``(K, P+1)``."""
        n = len(z)
        batch = min(self.batch_size, n)
        burn_in = self.n_burn_in_warm if self.warm_started_ else self.n_burn_in
        n_steps = burn_in + self.n_samples * self.keep_every
        eps2 = self.step_size**2
        q, v = state["q"], state["momentum"]
        v_hat, g, tau = state["v_hat"], state["g"], state["tau"]
        precision = state["weight_precision"]
        samples = []
        block = _DRAW_BLOCK
        for step in range(n_steps):
            if step % self.gibbs_every == 0:
                precision = self._gibbs_weight_precision(q[:-1], rng)
            if step % block == 0:  # random numbers drawn in blocks: one call per block
                all_rows = torch.randint(n, (block, batch), generator=generator)
                # float32 normal draws (5x faster to generate), used in float64
                draws = torch.randn((block, len(q)), generator=generator).to(q.dtype)
                all_rows, draws = all_rows.to(self.device), draws.to(self.device)
            rows, draw = all_rows[step % block], draws[step % block]
            with torch.no_grad():
                grad = self._potential_gradient(q, inputs, z, rows, precision)
                if step < burn_in or step == 0:
                    if step < burn_in:
                        tau_inv = 1.0 / (tau + 1.0)
                        tau = tau - tau * (g * g / (v_hat + EPSILON)) + 1.0
                        g = g - g * tau_inv + tau_inv * grad
                        v_hat = v_hat - v_hat * tau_inv + tau_inv * grad * grad
                    minv = 1.0 / (torch.sqrt(v_hat) + EPSILON)
                    noise_var = 2.0 * eps2 * self.mdecay * minv - eps2 * eps2
                    noise_std = torch.sqrt(noise_var.clamp_min(1e-16))
                v = v - eps2 * minv * grad - self.mdecay * v + noise_std * draw
                q = q + v
            if step >= burn_in and (step - burn_in + 1) % self.keep_every == 0:
                samples.append(q.clone())
        finite = torch.isfinite(q).all() and torch.isfinite(v).all()
        if not finite:
            raise FloatingPointError(
                "BOHAMIANN: the SGHMC chain diverged (non-finite parameters); lower step_size."
            )
        state.update(q=q, momentum=v, v_hat=v_hat, g=g, tau=tau, weight_precision=precision)
        self.n_steps_ = n_steps
        return torch.stack(samples)

    def _gibbs_weight_precision(
        self, theta: torch.Tensor, rng: np.random.Generator
    ) -> torch.Tensor:
        """Draw ``lambda | theta ~ Gamma(a + P/2, b + ||theta||^2 / 2)`` (D.1)."""
        shape = self.weight_prior_shape + 0.5 * theta.numel()
        rate = self.weight_prior_rate + 0.5 * float(theta @ theta)
        value = rng.gamma(shape, 1.0 / rate)
        return torch.tensor(value, dtype=torch.float64, device=theta.device)

    # -- prediction ----------------------------------------------------------------------
    def _sample_outputs(self, X: torch.Tensor, active: torch.Tensor) -> torch.Tensor:
        """``(K, m)``: every sample's network at the rows (standardised units)."""
        inputs = self.encoder_(X.to(self.device), active.to(self.device))
        return self.mlp_(self.samples_[:, :-1], inputs)

    def posterior(
        self, X: torch.Tensor, active: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Latent mean and variance over the weighted samples (law of total variance)."""
        outputs = self._sample_outputs(X, active)
        mean = self.weights_ @ outputs
        var = (self.weights_ @ (outputs - mean) ** 2).clamp_min(1e-12)
        return (mean * self.y_std_ + self.y_mean_).cpu(), (var * self.y_std_**2).cpu()

    def noise_variance(self) -> float:
        """Posterior mean of the observation noise variance ``sigma^2``, in units of ``y^2``."""
        noise = torch.exp(self.samples_[:, -1])
        return float(self.weights_ @ noise) * self.y_std_**2

    @property
    def effective_sample_size(self) -> float:
        """``1 / sum_k w_k^2`` of the current weights."""
        return float(1.0 / (self.weights_ * self.weights_).sum())

    def condition_on(self, X: np.ndarray, active: np.ndarray, y: np.ndarray) -> BOHAMIANN:
        """Importance-reweighted samples (tempered against collapse; module docstring)."""
        with torch.no_grad():
            outputs = self._sample_outputs(
                torch.as_tensor(X, dtype=torch.float64), torch.as_tensor(active)
            )
            z = (torch.as_tensor(y, dtype=torch.float64).to(self.device) - self.y_mean_) / (
                self.y_std_
            )
            log_noise = self.samples_[:, -1]
            log_lik = -0.5 * (
                ((z[None, :] - outputs) ** 2).sum(1) * torch.exp(-log_noise) + len(z) * log_noise
            )
            weights, exponent = self._tempered_weights(log_lik)
        if exponent < 1.0:
            _logger.info(
                "BOHAMIANN.condition_on: importance weights of %d new observation(s) would "
                "collapse; likelihood tempered with exponent %.3g (effective sample size %.1f "
                "of %d).",
                len(z),
                exponent,
                float(1.0 / (weights * weights).sum()),
                len(weights),
            )
        other = BOHAMIANN.__new__(BOHAMIANN)
        other.__dict__.update(self.__dict__)
        other.weights_ = weights
        return other

    def _tempered_weights(self, log_lik: torch.Tensor) -> tuple[torch.Tensor, float]:
        """New weights ``∝ w_k exp(t log_lik_k)``, ``t = 1`` or the largest ``t`` whose
        effective sample size reaches ``min_ess_fraction * K``."""
        log_w = torch.log(self.weights_)
        target = min(self.min_ess_fraction * len(log_w), self.effective_sample_size)

        def weights_at(t: float) -> torch.Tensor:
            return torch.softmax(log_w + t * log_lik, dim=0)

        def ess(w: torch.Tensor) -> float:
            return float(1.0 / (w * w).sum())

        full = weights_at(1.0)
        if ess(full) >= target * (1.0 - 1e-9):
            return full, 1.0
        low, high = 0.0, 1.0
        for _ in range(_TEMPERING_STEPS):
            middle = 0.5 * (low + high)
            if ess(weights_at(middle)) >= target:
                low = middle
            else:
                high = middle
        return weights_at(low), low
