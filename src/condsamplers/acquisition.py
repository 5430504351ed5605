"""Acquisition functions on a surrogate's posterior (minimisation).

Notation: ``mu``, ``sigma^2`` the posterior mean and variance of the latent objective at a
point, ``f*`` the best observed value, ``z = (f* - mu) / sigma``. Expected improvement is
``EI = sigma h(z)`` with ``h(z) = phi(z) + z Phi(z)`` (Jones et al. 1998; DNGO eq. 10 in Snoek et
al. 2015). We maximise ``log EI = log sigma + log h(z)``, computed stably for very negative
``z`` as ``log phi(z) + log(1 - sqrt(pi/2) |z| erfcx(|z| / sqrt 2))`` (the formulation of
Ament et al. 2023, "Unexpected improvements to expected improvement").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Protocol, runtime_checkable

import numpy as np
import torch

from condsamplers.models.base import Surrogate

Acquisition = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_SQRT_HALF_PI = math.sqrt(math.pi / 2)


def _log1mexp(x: torch.Tensor) -> torch.Tensor:
    """``log(1 - exp(x))`` for ``x < 0``, accurate over the whole range."""
    return torch.where(x > -math.log(2.0), torch.log(-torch.expm1(x)), torch.log1p(-torch.exp(x)))


def log_h(z: torch.Tensor) -> torch.Tensor:
    """``log(phi(z) + z Phi(z))``, stable for all ``z``."""
    z_safe_direct = z.clamp_min(-1.0)
    direct = torch.log(
        torch.exp(-0.5 * z_safe_direct**2 - _LOG_SQRT_2PI)
        + z_safe_direct * torch.special.ndtr(z_safe_direct)
    )
    z_tail = z.clamp(max=-1.0, min=-1e6)
    log_phi = -0.5 * z_tail**2 - _LOG_SQRT_2PI
    t = torch.log(-z_tail) + torch.log(torch.special.erfcx(-z_tail / math.sqrt(2.0)))
    tail = log_phi + _log1mexp(t + math.log(_SQRT_HALF_PI))
    return torch.where(z > -1.0, direct, tail)


def log_expected_improvement(mean: torch.Tensor, var: torch.Tensor, best: float) -> torch.Tensor:
    """``log EI`` of a minimisation problem with incumbent ``best``."""
    sigma = torch.sqrt(var)
    return torch.log(sigma) + log_h((best - mean) / sigma)


def make_log_ei(model: Surrogate, best: float) -> Acquisition:
    """Log-EI acquisition on ``model``'s posterior, for points ``(X, active)``."""

    def acquisition(X: torch.Tensor, active: torch.Tensor) -> torch.Tensor:
        mean, var = model.posterior(X, active)
        return log_expected_improvement(mean, var, best)

    return acquisition


@runtime_checkable
class PathModel(Protocol):
    """A surrogate with a path posterior, the distribution of ``b_p + z_p^T c`` (Jenatton et al.
    2017, eq. 6): what a path promises before its leaf's own parameters are chosen."""

    @property
    def has_path_posterior(self) -> bool: ...

    def path_posterior(
        self, X: torch.Tensor, active: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]: ...


def make_log_path_ei(model: PathModel, best: float) -> Acquisition:
    """Log of the path EI, eq. 6 of Jenatton et al. (2017):
    ``E[(y_min - b_p - z_p^T c)_+]`` with ``b_p + z_p^T c`` from ``model.path_posterior``;
    it depends on a point only through its path and its shared parameters."""

    def acquisition(X: torch.Tensor, active: torch.Tensor) -> torch.Tensor:
        mean, var = model.path_posterior(X, active)
        return log_expected_improvement(mean, var, best)

    return acquisition


def with_believed_pending(
    model: Surrogate, X_pending: np.ndarray, active_pending: np.ndarray
) -> Surrogate:
    """Condition ``model`` on running trials, believing its own mean there ("kriging believer").

    The posterior variance at a running trial's point collapses, so its EI (and that of its
    neighbourhood) drops: parallel workers are not sent to the same place twice.
    """
    if len(X_pending) == 0:
        return model
    mean, _ = model.predict(X_pending, active_pending)
    return model.condition_on(X_pending, active_pending, mean)
