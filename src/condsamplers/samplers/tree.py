"""``TreeGPSampler``: the tree-structured GP and two-step EI of Jenatton et al. (2017)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np

from condsamplers.acquisition import DEFAULT_N_FANTASIES  # noqa: F401 (importable from here)
from condsamplers.evidence_warping import AUTO_WARPING
from condsamplers.models.base import Surrogate
from condsamplers.models.tree_gp import (
    INNER_BASES,
    LEAF_INPUTS,
    OFFSETS,
    SIGNAL_VARIANCES,
    TreeGP,
)
from condsamplers.samplers.base import ConditionalSampler
from condsamplers.validation import check_choice, check_int

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from condsamplers.samplers.options import SamplerOptions


ACQUISITIONS = ("auto", "two_step", "joint")


class TreeGPSampler(ConditionalSampler):
    """Bayesian optimisation with Jenatton et al.'s tree GP, on the tree inferred from trials.

    Each path of the inferred conditional tree is a leaf with its own GP; parameters shared by
    several paths live at inner nodes as random linear functions of random Fourier features of
    each of them (sec. 2.4 and 4.3), which carry what one path teaches the others
    (:class:`condsamplers.models.tree_gp.TreeGP`). Fitting costs
    ``O(V^3 + sum_p n_p^3)`` instead of the ``O(n^3)`` of a joint kernel. Usage::

        study = optuna.create_study(sampler=TreeGPSampler(seed=0))

    Args:
        acquisition: ``"two_step"`` (sec. 3.2): pick the path with the best path EI (eq. 6,
            maximised jointly over its shared parameters), then maximise EI (eq. 5) on that
            path only; ``"joint"``: maximise EI over every path at once; ``"auto"``
            (default): two-step while every observation is a complete training of one
            objective, joint once the study has pruned trials (observations at several
            fidelities), where the two-step search was measured to stay on the paths that look
            good early, and in multi-objective studies, where the path EHVI chose a decoy
            branch whose corners sit on the front by a hair.
        independent: ``c = 0``, one independent GP per path (the paper's baseline); it has no
            path EI, so it searches every path at once (``"auto"`` or ``"joint"``).
        leaf_inputs: ``"path"`` (a leaf GP sees every parameter active on its path) or
            ``"leaf"`` (only the parameters of that path alone, as in the paper's experiments).
        inner_basis: ``"linear"`` (sec. 2.4) or ``"fourier"`` (default; sec. 4.3: random
            Fourier features of each shared numerical parameter, with a variance of its own,
            so what one path teaches the others about it is non-linear, and a parameter whose
            effect differs from path to path is left to each path's GP; linear terms drew
            proposals to the bounds).
        signal_variance: ``"shared"`` (default: one signal variance for all paths) or
            ``"leaf"`` (each path's GP has its own, the ``K_p`` of eq. 1; the default of
            ``CondBayesSearchCV``, whose classifiers differ in how much their scores vary).
        offsets: ``"leaf"`` (default: each path's GP has its own constant mean ``b_p``, eq. 1)
            or ``"shared"`` (one constant for every path, the generalised-least-squares
            constant of ordinary kriging: a path reverts to the common level away from its
            own observations; with ``independent=True`` the default of ``CondBayesSearchCV``).
        branch_draw: ``True`` (default): in the two-step search, each parameter with three or
            more branches (an estimator family, a preprocessing) first takes a branch by a
            Thompson draw on how often each branch holds the best 10% of the trials
            (:mod:`condsamplers.branch_draw`), and the path EI chooses among that branch's
            paths. ``"tpe"``: the root parameters with three or more branches take their
            branches together, and those below them one by one, by TPE's rule
            (:mod:`condsamplers.branch_tpe`): on CASH iris (seeds 0-19) 19 runs of 20 reach two
            errors in 150 (the default 11, TPE 9), but on breast cancer and diabetes it ends
            behind the default (``benchmarks/hpo``). ``False``: the path EI chooses among all
            paths (the paper's first step). Spaces whose branching parameters all have two
            branches are searched the same way with each.
        hyperparameter_samples: ``0`` (default): EI of the MAP hyperparameters. ``S > 0``: EI
            averaged over ``S`` slice samples of the hyperparameter posterior, the integrated
            acquisition of DNGO (Snoek et al. 2015, eq. 11-12; ``TreeGP``'s argument of the
            same name). Each step then costs roughly ``S`` times more.
        **options: the arguments every sampler shares (``seed``, ``n_startup_trials``,
            ``independent_sampler``, ``n_candidates``, ``n_local_search``, ``n_restarts``,
            ``n_fantasies``, ``constraints_func``, ``objective_bound``, ``output_warping``;
            :class:`~condsamplers.samplers.options.SamplerOptions`), documented in
            :class:`condsamplers.samplers.base.ConditionalSampler`. Here ``output_warping``
            defaults to ``"auto"``: while the values have a natural bound (0 for an error, a
            loss or an RMSE; 1 for an accuracy maximised), the model is fitted to the values
            and to their log gap to it, and the fit with the larger evidence is kept
            (:mod:`condsamplers.evidence_warping`; on a CV score, the log error: the best
            mean rank of seven samplers on the real-HPO suite, docs/choosing_a_sampler.md).
            ``objective_bound=0.0`` (an error) or ``1.0`` (an accuracy) fits the log error
            at every step with one fit.
    """

    #: Augmented EI (Huang et al. 2006): EI times ``1 - tau / sqrt(s^2 + tau^2)``, so that a noisy
    #: objective is not sampled again where only its noise is left; plain EI once the study has
    #: pruned trials (``noise_penalty_with_fidelity``).
    noise_penalty = True

    def __init__(
        self,
        *,
        acquisition: str = "auto",
        independent: bool = False,
        leaf_inputs: str = "path",
        inner_basis: str = "fourier",
        signal_variance: str = "shared",
        hyperparameter_samples: int = 0,
        offsets: str = "leaf",
        branch_draw: bool | str = True,
        **options: Unpack[SamplerOptions],
    ) -> None:
        check_choice("acquisition", acquisition, ACQUISITIONS)
        check_choice("leaf_inputs", leaf_inputs, LEAF_INPUTS)
        check_choice("inner_basis", inner_basis, INNER_BASES)
        check_choice("signal_variance", signal_variance, SIGNAL_VARIANCES)
        check_choice("offsets", offsets, OFFSETS)
        if independent and acquisition == "two_step":
            raise ValueError(
                "independent=True has no path EI (the inner-node weights c are 0); "
                "pass acquisition='joint'."
            )
        options.setdefault("output_warping", AUTO_WARPING)
        super().__init__(**options)
        self._independent = bool(independent)
        self._leaf_inputs = leaf_inputs
        self._inner_basis = inner_basis
        self._signal_variance = signal_variance
        self._offsets = offsets
        self._hyperparameter_samples = check_int(
            "hyperparameter_samples", hyperparameter_samples, minimum=0
        )
        self._settings = dataclasses.replace(
            self._settings,
            two_step=acquisition == "two_step" or (acquisition == "auto" and not independent),
            branch_draw=_branch_draw_on(branch_draw),
            branch_rule=BRANCH_TPE if branch_draw == BRANCH_TPE else "thompson",
            joint_with_fidelity=acquisition == "auto",
            noise_penalty_with_fidelity=False,
            joint_with_objectives=acquisition == "auto",
        )

    def _make_model(self, seed: int, warm_start: Any) -> Surrogate:
        return TreeGP(
            leaf_inputs=self._leaf_inputs,
            inner_basis=self._inner_basis,
            signal_variance=self._signal_variance,
            hyperparameter_samples=self._hyperparameter_samples,
            independent=self._independent,
            offsets=self._offsets,
            n_restarts=self._n_restarts,
            seed=seed,
            warm_start=warm_start,
        )

    def _warm_start_of(self, model: Surrogate) -> Any:
        assert isinstance(model, TreeGP)
        return model.warm_start_state()


#: ``TreeGPSampler(branch_draw=...)``'s value for the branches chosen by TPE's rule.
BRANCH_TPE = "tpe"


def _branch_draw_on(branch_draw: object) -> bool:
    """Whether ``branch_draw`` (``True``, ``False`` or ``"tpe"``) chooses branches before the
    path EI; a ValueError naming the parameter for any other value."""
    if branch_draw == BRANCH_TPE:
        return True
    if not isinstance(branch_draw, (bool, np.bool_)):
        raise ValueError(
            f"branch_draw={branch_draw!r} must be True (the Thompson draw), {BRANCH_TPE!r} "
            "(TPE's rule) or False (the path EI alone)."
        )
    return bool(branch_draw)
