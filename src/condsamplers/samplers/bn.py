"""``BNGPSampler``: an exact GP with the branching-and-nested kernel of Zhang et al."""

from __future__ import annotations

from condsamplers.samplers.exact_gp import ExactGPSampler


class BNGPSampler(ExactGPSampler):
    """Bayesian optimisation with Zhang, Hung, Lin and Liu's branching-and-nested GP.

    The kernel (eq. 4-5, Definition 1; :class:`condsamplers.kernels.BranchingNestedKernel`)
    multiplies a Matern kernel of the unconditional numerical parameters, an indicator kernel
    per branching parameter, and, for each nested parameter, a correlation whose parameter
    depends on the value of its branching parameter. The tree comes from the trials (a nested
    parameter may itself branch; several branching parameters are fine). The hyperparameters
    are fitted by marginal likelihood under a parametrisation that keeps the kernel positive
    definite (Theorem 1, generalised to several nested parameters), with the paper's constant
    mean estimated by generalised least squares (eq. 1-3, ordinary kriging). Proposals maximise
    log expected improvement over every path of the tree (the paper's EI criterion), with Huang
    et al.'s (2006) augmented-EI factor for the fitted noise, so that a point known to within
    the noise is not evaluated again. Usage::

        study = optuna.create_study(sampler=BNGPSampler(seed=0))

    Args: see :class:`condsamplers.samplers.base.ConditionalSampler`.
    """

    kernel_name = "bn"
    #: Its kernel costs more per pair than the arc kernel: 93 s per suggestion at 1000 trials
    #: (jenatton_large, ``benchmarks/scaling.py``), so the model sees at most 500.
    default_max_model_trials = 500
