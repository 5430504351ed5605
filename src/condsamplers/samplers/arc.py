"""``ArcGPSampler``: an exact GP with the arc kernel of Swersky et al. (2014)."""

from __future__ import annotations

from typing import Any

from condsamplers.models.base import Surrogate
from condsamplers.models.gp import ExactGP
from condsamplers.samplers.base import ConditionalSampler


class ArcGPSampler(ConditionalSampler):
    """Bayesian optimisation with a GP whose arc kernel knows which parameters are active.

    The arc kernel (Swersky et al. 2014, eq. 3-4; :class:`condsamplers.kernels.ArcKernel`)
    embeds each parameter on an arc when it is active and at the arc's centre when it is not, so
    configurations of different structure (a 2-layer and a 3-layer net) share what their common
    parameters say. Hyperparameters are fitted by marginal likelihood with priors; proposals
    maximise log expected improvement over every path of the inferred tree. Usage::

        study = optuna.create_study(sampler=ArcGPSampler(seed=0))

    Args: see :class:`condsamplers.samplers.base.ConditionalSampler`.
    """

    def _make_model(self, seed: int, warm_start: Any) -> Surrogate:
        return ExactGP("arc", n_restarts=self._n_restarts, seed=seed, warm_start=warm_start)

    def _warm_start_of(self, model: Surrogate) -> Any:
        assert isinstance(model, ExactGP)
        return model.params_
