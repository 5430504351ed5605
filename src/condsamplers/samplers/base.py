"""The shared Optuna adapter: trials in, one proposed configuration out.

A concrete sampler only says which surrogate it fits (:meth:`ConditionalSampler._make_model`);
structure inference, encoding, pending trials (recorded proposals, fantasies), acquisition
optimisation, startup trials, seeding, thread safety and logging live here.

Batch and parallel proposals (docs/batch.md): every model-based proposal is recorded whole on
its trial (:mod:`condsamplers.samplers.proposals`), because a RUNNING trial only carries the
parameters suggested so far. Other workers (threads of ``study.optimize(n_jobs=...)``, processes
on one storage, or ask-and-tell with several open trials) read it back as a pending point of the
acquisition (kriging believer or Monte-Carlo EI over fantasies, Snoek et al. 2012 sec. 3.3 and
DNGO sec. 3.3), never propose it again, and redo a proposal that a concurrent worker recorded
at the same time.
"""

from __future__ import annotations

import abc
import dataclasses
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np
from optuna.distributions import BaseDistribution
from optuna.samplers import BaseSampler, RandomSampler
from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

from condsamplers.acquisition import DEFAULT_N_FANTASIES
from condsamplers.evidence_warping import AUTO_WARPING, WarpingChoice
from condsamplers.log import get_logger
from condsamplers.models.base import Surrogate
from condsamplers.models.gp import NumericalError
from condsamplers.models.threads import single_threaded
from condsamplers.optimize import OptimizerSettings
from condsamplers.pipeline import Observations, propose
from condsamplers.samplers.observations import (
    evaluated_trials,
    study_observations,
    subsample_observations,
)
from condsamplers.samplers.optuna_storage import (
    fail_stale_trials,
    retrying_storage_errors,
    store_constraints,
    study_key,
    whole_study,
)
from condsamplers.samplers.proposals import (
    MAX_DUPLICATE_SKIPS,
    Configuration,
    first_new_configuration,
    fits,
    read_proposal,
    record_proposal,
    rival_trial,
    same_value,
    withdraw_proposal,
)
from condsamplers.space import ConditionalSpace, infer_space
from condsamplers.validation import (
    check_bool,
    check_choice,
    check_finite,
    check_fraction,
    check_int,
)
from condsamplers.warping import OUTPUT_WARPINGS

_logger = get_logger(__name__)

#: How often a proposal that a concurrent worker's recorded proposal duplicates is redone
#: before the trial goes to the independent sampler.
MAX_RACE_RETRIES = 3


class ConditionalSampler(BaseSampler, abc.ABC):
    """Base class of condsamplers' Optuna samplers (single-objective).

    The conditional structure is inferred from the study's COMPLETE trials (and PRUNED ones
    that reported values, ``intermediate_values``) at each step
    (:func:`condsamplers.space.infer_space`). The first ``n_startup_trials`` trials, and any
    parameter the tree does not know yet (a new branch), are sampled by ``independent_sampler``.
    Each model-based proposal is recorded whole on its trial (a system attribute, see
    :mod:`condsamplers.samplers.proposals`); RUNNING trials of other workers (threads,
    processes on one storage, open ask-and-tell trials) enter the acquisition as pending
    points through their recorded proposals (``n_fantasies``), and a proposal identical to an
    existing trial or to another RUNNING trial's proposal is never returned (docs/batch.md).

    Args:
        seed: seed of every random choice; the same seed gives the same suggestions.
        n_startup_trials: trials sampled independently before the model is used (COMPLETE
            ones, and PRUNED ones that reported values when ``intermediate_values``).
        independent_sampler: sampler for startup trials and unknown parameters
            (default: :class:`optuna.samplers.RandomSampler` with ``seed``).
        n_candidates: quasi-random candidates per step, spread over the paths of the tree.
        n_local_search: starts of the gradient-based local search of the acquisition.
        n_restarts: random restarts of the hyperparameter fit (besides default and warm starts).
        n_fantasies: how RUNNING trials (their recorded proposals) enter the acquisition.
            ``0``: kriging believer, the model is conditioned on its own mean there. ``S >= 1``:
            Monte-Carlo EI (Snoek et al. 2012 sec. 3.3, DNGO sec. 3.3): EI averaged over ``S``
            models conditioned on joint samples of the pending outcomes. Default 8: at batch
            size 5 it halved the believer's median regret on branching_nested.
        constraints_func: Optuna's (older) way to give constraints: called on each finished
            trial, it returns values ``c_k`` with ``c_k <= 0`` meaning feasible (as for
            Optuna's own samplers). Constraints set inside the objective with
            ``trial.set_constraint(name, value)`` need no argument. Either way, each constraint
            gets a surrogate of the sampler's own kind and EI is weighted by the probability
            of feasibility (DNGO sec. 3.2; docs/constraints.md).
        objective_bound: a value of the objective that no trial can beat, when one is known:
            ``1.0`` for an accuracy (or AUC, F1, R^2) maximised, ``0.0`` for a loss or an error
            minimised. The model then fits the log of each value's gap to it (the log error,
            :func:`condsamplers.warping.log_regret`), on which the good configurations are
            told apart as clearly as the bad ones. ``None`` (default): the values as they are.
            A trial whose value beats the bound is an error.
        output_warping: a monotone warp of the objective values (after ``objective_bound``'s
            log), refitted at each step, so that a few catastrophic trials do not flatten the
            good region (:func:`condsamplers.warping.warp_outputs`): ``"none"``, ``"tail"``
            (the worse half of the values log-compressed, the better half kept as it is),
            ``"tail-rank"`` (the worse half by its rank alone), ``"rank"`` (the Gaussian
            copula of the ranks), ``"yeo-johnson"`` (a power transform fitted by maximum
            likelihood) or ``"auto"`` (the default of
            :class:`~condsamplers.samplers.tree.TreeGPSampler`): while the values have a
            natural bound (none below ``0`` for a minimised error, loss or RMSE; all in
            ``[0, 1]`` for a maximised accuracy, bound ``1``), the model is fitted both to the
            values and to the log of their gap to it, and the fit with the larger evidence is
            kept (:mod:`condsamplers.evidence_warping`: the two are compared at the first
            step, after a new best whose gap to the bound is at most the last comparison's / 1.1,
            each time the observations have grown by a tenth, and in between only the
            preferred one is fitted, until the preference
            first changes; from then on at every step); with
            ``objective_bound`` given, a model without an evidence, or more than 1000
            observations (``EVIDENCE_MAX_ROWS``), the same as ``"none"``.
        max_model_trials: the most observations the model is fitted to (COMPLETE trials, and
            the reported values of PRUNED ones, ``intermediate_values``); beyond it, the
            best half of that number and a random sample of the others (logged once per
            study), so that a long study keeps its cost per suggestion. ``None`` (default): the
            sampler's ``default_max_model_trials`` (4000 for the tree GP, 1000 for
            ArcGPSampler, 500 for BNGPSampler, all trials for the neural samplers).
        intermediate_values: learn from the values trials report with ``trial.report`` when
            the study has PRUNED trials (a pruner such as Optuna's ``HyperbandPruner``): each
            PRUNED trial enters the model with its last reported values at their steps, each
            COMPLETE trial with its final value and a few of its reported ones, the step as a
            fidelity input of the model, and EI is maximised at the highest step seen
            (docs/pruning.md). The reported values must be the objective's own (the value
            ``trial.report`` gets is what the objective would return at that step).
            ``False``: COMPLETE trials only, as Optuna's GPSampler. A study without PRUNED
            trials is modelled the same either way.
        cost_aware: model each trial's duration too (the log of its seconds, with a surrogate
            of the sampler's own kind) and maximise expected improvement per second (Snoek et
            al. 2012, sec. 3.2), the path choice included: a cheap branch is tried where its
            improvement per second is the better one (docs/pruning.md). ``False`` (default):
            expected improvement alone.
        path_patience: ``None`` (default) or ``k``: a path (a set of active parameters and
            the branch values leading to it) that has had ``k`` trials since the study's best value
            last improved sits out the model's proposals until the best value improves again, so
            that a quantised or noisy objective (a CV score) does not take every trial to one
            branch that has stopped paying (:mod:`condsamplers.path_patience`, eq. 1; the default
            of ``CondBayesSearchCV`` on more than 10 dicts). Single-objective studies only; with
            several objectives it has no effect.
        local_search_radius: in ``(0, 1]``: how far (in the unit cube, per parameter) the
            gradient-based local search may move each of its starts. ``1.0`` (default): the
            whole cube; ``CondBayesSearchCV`` uses 0.1 on more than 10 dicts, where a small
            radius keeps the local search a refinement of its quasi-random start.
    """

    #: Augmented EI (Huang et al. 2006) when the surrogate fits a noise variance, so that a point
    #: known to within the noise is not evaluated again: on for the GP samplers (BNGPSampler,
    #: ArcGPSampler, TreeGPSampler), plain EI for the neural ones (DNGO, BOHAMIANN).
    noise_penalty: ClassVar[bool] = False
    #: The most COMPLETE trials the model is fitted to (``None``: all); the default of
    #: ``max_model_trials``. Tree GP: its cost grows with its largest leaf (``O(n_p^3)``):
    #: 1.2 s at 4000 trials on jenatton_large, 2.5 s at 5000 (``benchmarks/scaling.py``).
    default_max_model_trials: ClassVar[int | None] = 4000

    def __init__(
        self,
        *,
        seed: int | None = None,
        n_startup_trials: int = 10,
        independent_sampler: BaseSampler | None = None,
        n_candidates: int = 1024,
        n_local_search: int = 5,
        n_restarts: int = 2,
        n_fantasies: int = DEFAULT_N_FANTASIES,
        constraints_func: Callable[[FrozenTrial], Sequence[float]] | None = None,
        objective_bound: float | None = None,
        output_warping: str = "none",
        max_model_trials: int | None = None,
        intermediate_values: bool = True,
        cost_aware: bool = False,
        path_patience: int | None = None,
        local_search_radius: float = 1.0,
    ) -> None:
        check_int("n_startup_trials", n_startup_trials, minimum=0)
        if path_patience is not None:
            path_patience = check_int("path_patience", path_patience, minimum=1)
        if max_model_trials is not None:
            check_int("max_model_trials", max_model_trials, minimum=2)
        check_choice("output_warping", output_warping, (*OUTPUT_WARPINGS, AUTO_WARPING))
        if objective_bound is not None and output_warping == AUTO_WARPING:
            output_warping = "none"  # the values are already the log of their gap to the bound
        check_int("n_candidates", n_candidates, minimum=1)
        check_int("n_local_search", n_local_search, minimum=1)
        local_search_radius = check_fraction("local_search_radius", local_search_radius)
        check_int("n_restarts", n_restarts, minimum=0)
        check_int("n_fantasies", n_fantasies, minimum=0)
        if seed is not None:
            check_int("seed", seed, minimum=0)
        if independent_sampler is not None and not isinstance(independent_sampler, BaseSampler):
            raise ValueError(
                "independent_sampler must be an Optuna sampler (an optuna.samplers.BaseSampler, "
                "e.g. optuna.samplers.RandomSampler(seed=0)) or None; "
                f"got {independent_sampler!r}."
            )
        if constraints_func is not None and not callable(constraints_func):
            raise ValueError(
                f"constraints_func must be a callable FrozenTrial -> sequence of floats; "
                f"got {constraints_func!r}."
            )
        self._constraints_func = constraints_func
        self._objective_bound = (
            None if objective_bound is None else check_finite("objective_bound", objective_bound)
        )
        self._seed = seed
        self._rng = np.random.default_rng(seed)
        self._n_startup_trials = n_startup_trials
        self._independent_sampler = independent_sampler or RandomSampler(seed=seed)
        self._settings = OptimizerSettings(
            n_candidates=n_candidates,
            n_local_search=n_local_search,
            n_fantasies=int(n_fantasies),
            noise_penalty=self.noise_penalty,
            output_warping=output_warping,
            path_patience=path_patience,
            local_search_radius=local_search_radius,
        )
        self._n_restarts = n_restarts
        self._intermediate_values = check_bool("intermediate_values", intermediate_values)
        self._cost_aware = check_bool("cost_aware", cost_aware)
        self._max_model_trials = (
            self.default_max_model_trials if max_model_trials is None else max_model_trials
        )
        self._lock = threading.RLock()
        #: the tree of the last study seen, by :func:`study_key` and COMPLETE trial numbers.
        self._space_cache: tuple[tuple[Any, ...], ConditionalSpace] | None = None
        #: what the last step left to the next, by :func:`study_key`: the fit's warm start and
        #: what ``output_warping="auto"`` chose.
        self._warm_start: tuple[tuple[int, int], Any, WarpingChoice | None] | None = None
        #: studies whose model is fitted to a subsample (logged once each).
        self._capped_studies: set[tuple[int, int]] = set()

    @property
    def objective_bound(self) -> float | None:
        """The bound of the objective given at construction (``None``: none)."""
        return self._objective_bound

    # -- copies and pickles ---------------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        """Everything but the lock, so a sampler can be deep-copied (``sklearn.clone`` of an
        estimator holding it, ``CondBayesSearchCV``'s per-fit copy) and pickled (a study, a
        fitted search); the copy gets a lock of its own."""
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()

    # -- what subclasses provide -----------------------------------------------------------
    @abc.abstractmethod
    def _make_model(self, seed: int, warm_start: Any) -> Surrogate:
        """A fresh surrogate; ``warm_start`` is what :meth:`_warm_start_of` kept last time."""

    def _warm_start_of(self, model: Surrogate) -> Any:
        """What to keep from a fitted model to warm-start the next fit (default: nothing)."""
        return None

    # -- Optuna's BaseSampler ------------------------------------------------------------
    def reseed_rng(self) -> None:
        with self._lock:
            self._rng = np.random.default_rng()
            self._independent_sampler.reseed_rng()

    def infer_relative_search_space(
        self, study: Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        return self.conditional_space(whole_study(study)).search_space()

    def sample_relative(
        self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        if not search_space:
            return {}
        study = whole_study(study)
        with self._lock, single_threaded():
            complete = self._evaluated(study)  # read under the lock: see sample_independent
            if len(complete) < max(self._n_startup_trials, 1):
                return {}
            proposal = retrying_storage_errors(
                lambda: self._propose_and_record(
                    study, trial, complete, search_space, _given(trial)
                ),
                f"{type(self).__name__}'s step for trial {trial.number}",
                _logger,
            )
            return {} if proposal is None else proposal.params

    def sample_independent(
        self,
        study: Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        """A parameter the trial's proposal does not give. If the tree knows it and the trial
        has values the proposal did not expect (a parameter fixed by ``enqueue_trial`` or
        ``PartialFixedSampler``, another branch than proposed), or the proposal lacks this
        parameter although the tree now makes it active there, the model proposes again given
        every value the trial holds (EI conditioned on them); otherwise (a startup trial, a
        parameter new to the tree) ``independent_sampler`` samples it.

        In threads the model learns from the trials as they are once this thread holds the
        sampler's lock, so trials completed while it waited count (in ``sample_relative``
        too)."""
        study = whole_study(study)
        with self._lock:
            complete = self._evaluated(study)
            if len(complete) >= max(self._n_startup_trials, 1):
                with single_threaded():
                    value = self._conditioned_value(study, trial, complete, param_name)
                if value is not _NO_VALUE and fits(param_distribution, value):
                    return value
                _logger.debug(
                    "%s: parameter %r of trial %d is outside the inferred tree (a new branch, "
                    "or a path the model did not predict); it is sampled by %s.",
                    type(self).__name__,
                    param_name,
                    trial.number,
                    type(self._independent_sampler).__name__,
                )
            return self._independent_sampler.sample_independent(
                study, trial, param_name, param_distribution
            )

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        fail_stale_trials(study)  # a killed worker's trial is no pending point forever
        self._independent_sampler.before_trial(study, trial)

    def after_trial(
        self,
        study: Study,
        trial: FrozenTrial,
        state: TrialState,
        values: Sequence[float] | None,
    ) -> None:
        if self._constraints_func is not None:
            store_constraints(self._constraints_func, study, trial, state)
        self._independent_sampler.after_trial(study, trial, state, values)

    # -- the step ------------------------------------------------------------------------
    def conditional_space(self, study: Study) -> ConditionalSpace:
        """The tree this sampler currently infers from ``study`` (print ``.describe()``)."""
        complete = self._evaluated(study)
        key = (study_key(study), *(t.number for t in complete))
        with self._lock:
            if self._space_cache is None or self._space_cache[0] != key:
                self._space_cache = (key, infer_space(complete))
            return self._space_cache[1]

    def _evaluated(self, study: Study) -> list[FrozenTrial]:
        """The trials the model learns from (:func:`~condsamplers.samplers.observations.
        evaluated_trials`): COMPLETE ones, and PRUNED ones that reported values."""
        return evaluated_trials(study, self._intermediate_values)

    def _conditioned_value(
        self, study: Study, trial: FrozenTrial, complete: list[FrozenTrial], name: str
    ) -> Any:
        """The value of ``name`` in the trial's proposal, proposed again given the trial's
        values when some of them are news to it (a value that differs from the proposal's, or
        one of a parameter the proposal neither set nor was given), or given the trial's values
        and the rest of its proposal when the proposal lacks ``name`` although the tree now
        makes it active there (:meth:`~condsamplers.space.ConditionalSpace.implies_active`);
        :data:`_NO_VALUE` if there is none. A trial without a proposal (the model's step fell
        back to the independent sampler) stays with the independent sampler.

        A proposal lacks such a parameter when the tree grew after it (in threads, a trial
        completed in between) or when the trial's relative search space did not hold it: the
        model then chooses the value, and the pending trials' claims keep it from duplicating
        one of them, where a random draw of an integer or of a bound value could (two workers
        on ``{kind: b, x: 1.0, n: 4}``). A parameter that the tree does not make active there
        (the objective asks it outside the paths the tree knows) is the independent sampler's,
        as before: the model would not propose it either."""
        recorded = read_proposal(trial)
        space = self.conditional_space(study)
        if recorded is None or all(node.name != name for node in space.nodes):
            return _NO_VALUE  # no model step for this trial, or a parameter new to the tree
        given = _given(trial)
        fixed = space.fixed_values(given)
        known = {space.nodes[j].name for j in ([] if fixed is None else fixed.columns)}
        news = [
            n
            for n in known
            if (n not in recorded.given and n not in recorded.params)
            or (n in recorded.params and not same_value(recorded.params[n], given[n]))
        ]
        if news:
            recorded = self._propose_and_record(
                study, trial, complete, space.search_space(), given
            )
        elif name not in recorded.params:
            # Optuna still takes the proposal's other values from the trial's relative
            # parameters, so they are given too: the new record is what the trial evaluates.
            held = {**recorded.params, **given}
            if space.implies_active(held, name):
                recorded = self._propose_and_record(
                    study, trial, complete, space.search_space(), held
                )
        if recorded is None or name not in recorded.params:
            return _NO_VALUE
        return recorded.params[name]

    def _propose_and_record(
        self,
        study: Study,
        trial: FrozenTrial,
        complete: list[FrozenTrial],
        search_space: dict[str, BaseDistribution],
        given: dict[str, Any],
    ) -> Configuration | None:
        """Propose given the values in ``given``, record the proposal on ``trial``, and redo it
        if a concurrent worker holds the same configuration.

        The proposal is first restricted to the trial's relative ``search_space``: in threads
        another trial may complete between Optuna's inference of that space and this step, so
        the proposal's tree may hold parameters that the trial will sample independently; the
        record then says exactly what the trial evaluates.

        Two workers that propose at the same time do not see each other's proposal. Each
        records its own, then re-reads the others: at least the later of the two to record sees
        the other's, and any worker that sees its configuration claimed by another trial
        proposes again with that trial as a pending point. (Yielding only to smaller trial
        numbers would not be race-free: the larger one may have re-read before the smaller one
        recorded.) Retries draw from a stream mixed with the trial number, so two identically
        seeded workers do not collide again.
        """
        rival = None
        for attempt in range(MAX_RACE_RETRIES + 1):
            proposal = self._propose(study, trial, complete, given, attempt)
            if proposal is not None:
                proposal = proposal.restricted_to(search_space)
            if proposal is None:
                if attempt > 0 or read_proposal(trial) is not None:  # no longer this record
                    withdraw_proposal(study, trial)
                return None
            proposal = dataclasses.replace(proposal, given=frozenset(given))
            record_proposal(study, trial, proposal)
            rival = None if proposal.repeats_pending else rival_trial(study, trial, proposal)
            if rival is None:
                return proposal
            _logger.debug(
                "%s: trial %d's proposal duplicates that of trial %d (concurrent workers); "
                "proposing again (attempt %d).",
                type(self).__name__,
                trial.number,
                rival,
                attempt + 1,
            )
        withdraw_proposal(study, trial)
        self._log_fallback(
            logging.INFO,
            trial,
            f"{MAX_RACE_RETRIES + 1} proposals in a row duplicated those of concurrent workers "
            f"(last: trial {rival})",
        )
        return None

    def _propose(
        self,
        study: Study,
        trial: FrozenTrial,
        complete: list[FrozenTrial],
        given: dict[str, Any],
        attempt: int = 0,
    ) -> Configuration | None:
        space = self.conditional_space(study)
        data = self._observations(study, space, complete, trial)
        if data is None:
            return None
        seed = int(self._rng.integers(2**31))
        warm = self._warm_start
        if warm is None or warm[0] != study_key(study):
            warm = (study_key(study), None, None)
        model = self._make_model(seed, warm[1])
        rng = np.random.default_rng([seed, trial.number, attempt] if attempt else seed)
        try:
            proposal = propose(
                space,
                data,
                model,
                rng,
                self._settings,
                make_constraint_model=lambda k: self._make_model(seed + 1 + k, None),
                fixed=space.fixed_values(given),
                warping=warm[2],
            )
        except NumericalError as error:
            self._log_fallback(
                logging.WARNING, trial, f"the surrogate could not be fitted ({error})"
            )
            return None
        self._warm_start = (
            study_key(study),
            self._warm_start_of(proposal.model),
            proposal.warping,
        )
        configuration = first_new_configuration(space, proposal.X, proposal.active, study, trial)
        self._log_duplicates(trial, configuration)
        return configuration

    def _observations(
        self,
        study: Study,
        space: ConditionalSpace,
        complete: list[FrozenTrial],
        trial: FrozenTrial,
    ) -> Observations | None:
        data = study_observations(
            study,
            space,
            complete,
            trial,
            self._objective_bound,
            type(self).__name__,
            self._cost_aware,
        )
        if data is None:
            self._log_fallback(
                logging.WARNING, trial, "no COMPLETE trial has a finite objective value"
            )
            return None
        cap = self._max_model_trials
        if cap is None or len(data.y) <= cap:
            return data
        if study_key(study) not in self._capped_studies:
            self._capped_studies.add(study_key(study))
            _logger.info(
                "%s: the study has %d usable COMPLETE trials; the model is fitted to %d of "
                "them (the best %d and a random sample of the others; max_model_trials).",
                type(self).__name__,
                len(data.y),
                cap,
                cap // 2,
            )
        rng = np.random.default_rng([len(data.y), 0 if self._seed is None else self._seed])
        return subsample_observations(data, cap, rng)

    def _log_duplicates(self, trial: FrozenTrial, configuration: Configuration | None) -> None:
        """Say when the step's best candidates all repeat trials
        (:func:`~condsamplers.samplers.proposals.first_new_configuration`): ``None`` sends
        the trial to the independent sampler; a repeat of a RUNNING trial is proposed."""
        if configuration is None:
            self._log_fallback(
                logging.INFO, trial, f"the best {MAX_DUPLICATE_SKIPS} candidates repeat trials"
            )
        elif configuration.repeats_pending:
            _logger.info(
                "%s: the best %d candidates for trial %d repeat existing or pending trials; "
                "it repeats a RUNNING trial's configuration.",
                type(self).__name__,
                MAX_DUPLICATE_SKIPS,
                trial.number,
            )

    def _log_fallback(self, level: int, trial: FrozenTrial, reason: str) -> None:
        """Say why a trial's parameters go to the independent sampler."""
        _logger.log(
            level,
            "%s: %s; trial %d is sampled by %s.",
            type(self).__name__,
            reason,
            trial.number,
            type(self._independent_sampler).__name__,
        )


#: No value for a parameter (``None`` is a valid categorical choice).
_NO_VALUE = object()


def _given(trial: FrozenTrial) -> dict[str, Any]:
    """The values a trial holds before the model proposes: those ``enqueue_trial`` fixed
    (``fixed_params``) and those it has already suggested (which win)."""
    fixed = trial.system_attrs.get("fixed_params")
    return {**(fixed if isinstance(fixed, dict) else {}), **trial.params}
