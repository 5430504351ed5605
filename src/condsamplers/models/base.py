"""The one small interface every surrogate implements.

Notation: ``X`` is an ``(n, d)`` matrix of encoded configurations (unit interval for numerical
columns, choice index for categorical ones, see :mod:`condsamplers.space`), ``active`` the boolean
``(n, d)`` mask of active columns, ``y`` the ``(n,)`` objective values to be *minimised*.
Models know nothing of Optuna.
"""

from __future__ import annotations

import abc
from typing import TypeVar

import numpy as np
import torch

from condsamplers.space import FeatureSpec

SurrogateT = TypeVar("SurrogateT", bound="Surrogate")


class Surrogate(abc.ABC):
    """A probabilistic regression model of the objective over a conditional space.

    Subclasses implement :meth:`fit`, :meth:`posterior` (differentiable torch mean and variance
    of the latent function, in the units of ``y``) and :meth:`condition_on` (add observations
    while keeping the hyperparameters, used for fantasies of running trials).
    """

    @abc.abstractmethod
    def fit(
        self: SurrogateT, X: np.ndarray, active: np.ndarray, y: np.ndarray, features: FeatureSpec
    ) -> SurrogateT:
        """Fit the model (hyperparameters included) to the observations."""

    @abc.abstractmethod
    def posterior(
        self, X: torch.Tensor, active: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean and variance of the latent function at ``X`` (torch, differentiable in ``X``)."""

    @abc.abstractmethod
    def condition_on(
        self: SurrogateT, X: np.ndarray, active: np.ndarray, y: np.ndarray
    ) -> SurrogateT:
        """A copy of the model with extra observations and the same hyperparameters."""

    def noise_variance(self) -> float | None:
        """Variance of the observation noise in the units of ``y``, as fitted (``None``: the
        model does not estimate one; the acquisition is then plain EI)."""
        return None

    def log_evidence(self) -> float | None:
        """``log p(y)`` of the values given to :meth:`fit` at the fitted hyperparameters, in
        the units of ``y`` (the marginal likelihood of the standardised values minus
        ``n log std(y)``, :func:`condsamplers.models.fitting.evidence_of_values`); ``None``: the
        model has no evidence of its own (``output_warping="auto"`` then keeps the values as
        they are, :mod:`condsamplers.evidence_warping`)."""
        return None

    def length_scales(self) -> np.ndarray | None:
        """Per encoded column, the distance in the unit cube over which the fitted model's
        correlation falls appreciably; the acquisition's local search measures its steps in
        these units (:func:`condsamplers.optimize.local_search`). ``None``: the model has no
        such scale (the local search then works in the unit cube)."""
        return None

    def hyperparameter_models(self: SurrogateT) -> list[SurrogateT]:
        """The models the acquisition averages over: one per hyperparameter sample for a model
        that samples its hyperparameters' posterior (the integrated acquisition of DNGO, Snoek
        et al. 2015, eq. 11-12), else the model itself."""
        return [self]

    def mean_at_observations(self) -> np.ndarray | None:
        """The posterior mean of the latent function at the observations given to :meth:`fit`
        (in their order, in the units of ``y``), where the model has it in closed form without
        a prediction (``None``: predict at them instead). For a GP with noise variance
        ``sigma^2`` it is ``y - sigma^2 (K + sigma^2 I)^-1 (y - m)`` (Rasmussen & Williams
        2006, eq. 2.25 at the training inputs, ``K (K + sigma^2 I)^-1 = I - sigma^2 (K +
        sigma^2 I)^-1``): ``O(n)`` from the cached factorisation instead of a prediction."""
        return None

    def predict(self, X: np.ndarray, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mean and variance of the latent function at ``X`` as numpy arrays."""
        with torch.no_grad():
            mean, var = self.posterior(
                torch.as_tensor(X, dtype=torch.float64), torch.as_tensor(active)
            )
        return mean.numpy(), var.numpy()
