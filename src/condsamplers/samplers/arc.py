"""``ArcGPSampler``: an exact GP with the arc kernel of Swersky et al. (2014)."""

from __future__ import annotations

from condsamplers.samplers.exact_gp import ExactGPSampler


class ArcGPSampler(ExactGPSampler):
    """Bayesian optimisation with a GP whose arc kernel knows which parameters are active.

    The arc kernel (Swersky et al. 2014, eq. 3-4; :class:`condsamplers.kernels.ArcKernel`)
    embeds each parameter on an arc when it is active and at the arc's centre when it is not, so
    configurations of different structure (a 2-layer and a 3-layer net) share what their common
    parameters say. Hyperparameters are fitted by marginal likelihood with priors, with the
    constant mean estimated by generalised least squares (ordinary kriging, as in Zhang et al.'s
    branching-and-nested GP, eq. 1-3); proposals maximise log expected improvement over every
    path of the inferred tree, with Huang et al.'s (2006) augmented-EI factor for the fitted
    noise, so that a point known to within the noise is not evaluated again. Usage::

        study = optuna.create_study(sampler=ArcGPSampler(seed=0))

    Args: see :class:`condsamplers.samplers.base.ConditionalSampler`.
    """

    kernel_name = "arc"
