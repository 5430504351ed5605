"""Kernels over conditional spaces, written as explicit Euclidean embeddings (torch).

Every kernel here is ``k(x, x') = s * matern52(||phi(x) - phi(x')||)`` where ``phi`` embeds an
encoded configuration ``(x, active)`` into a Euclidean space. Because ``phi`` is an explicit
embedding, the kernel is positive definite for any hyperparameters (Swersky et al. 2014, sec. 2.2:
"embed each dimension ... then use the embedded input space within any kernel that is defined in
terms of Euclidean distance").

Notation: ``n`` rows, ``d`` columns (one per parameter), ``omega[i] > 0`` a per-column scale
(an inverse length scale), ``rho[i] in (0, 1)`` the per-column arc angle.
"""

from __future__ import annotations

import abc
import math

import torch

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


def one_hot(column: torch.Tensor, n_categories: int) -> torch.Tensor:
    """One-hot rows ``(n, n_categories)`` of a column of choice indices (no gradient)."""
    index = column.detach().round().long().clamp(0, n_categories - 1)
    return torch.nn.functional.one_hot(index, n_categories).to(column.dtype)


class EmbeddingKernel(abc.ABC):
    """A kernel defined by an embedding ``phi(x, active)``; hyperparameters live in ``Params``.

    Raw (unconstrained) hyperparameters are optimised; :meth:`embed` maps them to their
    constrained values. :meth:`log_prior` is the log density of the priors on the raw values,
    up to a constant.
    """

    name: str

    @abc.abstractmethod
    def initial_params(self, features: FeatureSpec) -> Params:
        """Default raw hyperparameters for columns ``features``."""

    @abc.abstractmethod
    def embed(
        self, X: torch.Tensor, active: torch.Tensor, params: Params, features: FeatureSpec
    ) -> torch.Tensor:
        """Embedding ``(n, d) -> (n, e)`` whose Euclidean distances define the kernel."""

    @abc.abstractmethod
    def log_prior(self, params: Params) -> torch.Tensor:
        """Log prior density of the hyperparameters (up to a constant).

        The priors on ``omega`` and ``rho`` are densities of the raw (log / logit) parameters
        that are optimised, change of variables included; ``docs/design.md`` says why and what
        the alternative measured.
        """

    def random_params(self, features: FeatureSpec, generator: torch.Generator) -> Params:
        """A random restart point near the defaults."""
        init = self.initial_params(features)
        return {
            k: v + torch.randn(v.shape, generator=generator, dtype=v.dtype)
            for k, v in init.items()
        }


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
        for i, k in enumerate(features.n_categories.tolist()):
            if k > 0:
                parts.append(one_hot(X[:, i], k) * (omega[i] / math.sqrt(2.0)))
        return torch.cat(parts, dim=1)

    def log_prior(self, params: Params) -> torch.Tensor:
        return log_omega_prior(params["log_omega"])


class ArcKernel(EmbeddingKernel):
    """The arc kernel of Swersky et al. (2014), eq. 3-4, with Matern-5/2 on the embedding.

    Numerical column ``i`` (scaled to [0, 1]) embeds, eq. 3, as
    ``g_i(x) = omega_i [sin(pi rho_i x_i), cos(pi rho_i x_i)]`` when active and ``[0, 0]`` when
    inactive, so (eq. 4) two inactive points are at distance 0, an active and an inactive one at
    ``omega_i``, and two active ones at ``omega_i sqrt(2) sqrt(1 - cos(pi rho_i (x_i - x'_i)))``.

    Categorical columns (not treated in the paper; our choice, see ``docs/design.md``): the
    ``K`` choices sit at the vertices of a regular simplex on the sphere of radius ``omega_i``
    around the inactive point, ``g_i(x) = omega_i [rho_i onehot(x_i), sqrt(1 - rho_i^2)]``:
    two different active choices are at distance ``omega_i sqrt(2) rho_i``, an active and an
    inactive point at ``omega_i``, as for numerical columns.
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
        for i, k in enumerate(features.n_categories.tolist()):
            if k > 0:
                onehot = one_hot(X[:, i], k) * rho[i]
                radial = torch.sqrt(1.0 - rho[i] ** 2).expand(X.shape[0], 1)
                parts.append(torch.cat([onehot, radial], dim=1) * (omega[i] * on[:, i : i + 1]))
        return torch.cat(parts, dim=1)

    def log_prior(self, params: Params) -> torch.Tensor:
        # Beta(2, 2) on rho, as a density of logit(rho) (Jacobian included): rho^2 (1 - rho)^2.
        logit = params["logit_rho"]
        log_rho = torch.nn.functional.logsigmoid(logit)
        log_one_minus = torch.nn.functional.logsigmoid(-logit)
        return log_omega_prior(params["log_omega"]) + 2.0 * (log_rho + log_one_minus).sum()


KERNELS: dict[str, type[EmbeddingKernel]] = {"arc": ArcKernel, "matern": MaternKernel}


def make_kernel(name: str) -> EmbeddingKernel:
    """The kernel registered under ``name`` (``"arc"`` or ``"matern"``)."""
    try:
        return KERNELS[name]()
    except KeyError:
        raise ValueError(f"kernel={name!r} is not known; use one of {sorted(KERNELS)}.") from None
