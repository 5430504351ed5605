"""``CondBayesSearchCV``: Bayesian optimisation of a scikit-learn estimator's hyperparameters
over a conditional search space, as a drop-in for ``RandomizedSearchCV``.

The search space is written as for ``RandomizedSearchCV``'s ``param_distributions`` (a dict, or
a list of dicts, one per *branch*). It is translated into an Optuna define-by-run function: the
branch is a categorical parameter ``__branch__`` (only when there are several), and each
branch's parameters are suggested under names prefixed by their branch (``"1:clf__C"``), so
that the sampler infers the tree (``__branch__`` -> that branch's parameters) and the ``C`` of
an SVC branch is never mixed with the ``C`` of a logistic-regression branch. Trials are asked
in batches of ``n_jobs`` (each suggests its whole configuration before the next is asked, so
the later ones see the earlier ones as pending), evaluated together by scikit-learn's own
``evaluate_candidates`` (cross-validation in parallel, exactly as ``RandomizedSearchCV``), then
told. Everything else (scoring, refit, ``cv_results_``, metadata routing) is scikit-learn's
``BaseSearchCV``. Design notes: docs/search_cv.md.

This module holds the estimator and its ask / evaluate / tell loop; the translation of the
search space is in :mod:`condsamplers.sklearn.search_space` (``BRANCH_PARAM``, ``PRIORS`` and
``translate_search_spaces`` are re-exported here), what batching changes (fit failures,
non-finite scores) in :mod:`condsamplers.sklearn.batches`.
"""

from __future__ import annotations

import copy
import math
import numbers
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import optuna
from joblib import effective_n_jobs
from optuna.samplers import BaseSampler
from optuna.storages import InMemoryStorage
from optuna.study import Study
from optuna.trial import FrozenTrial, Trial, TrialState
from sklearn.base import is_classifier
from sklearn.model_selection import check_cv
from sklearn.model_selection._search import BaseSearchCV
from sklearn.pipeline import Pipeline

from condsamplers.sklearn import batches as _batches
from condsamplers.sklearn import pareto as _pareto
from condsamplers.sklearn.batches import (
    _NON_FINITE,
    _deferred_fit_failures,
    _tell,
    _warn_if_splits_vary,
    _warn_non_finite,
)
from condsamplers.sklearn.default_sampler import (
    DEFAULT_SAMPLER_OPTIONS,
    MANY_DICTS,
    MANY_DICTS_LOCAL_SEARCH_RADIUS,
    MANY_DICTS_PATIENCE,
    default_sampler,
    default_sampler_options,
    sampler_seed,
)
from condsamplers.sklearn.resources import (
    N_SAMPLES,
    ResourceLadder,
    SubsampledSplits,
    bracket_sequence,
    check_ladder_options,
    check_resource,
    is_promoted,
    resource_ladder,
)
from condsamplers.sklearn.score_bounds import objective_score_bound
from condsamplers.sklearn.search_space import (
    BRANCH_PARAM,
    _is_estimator,
    _SearchSpace,
    ask_unseen,
    translate_search_spaces,
)
from condsamplers.sklearn.search_space import PRIORS as PRIORS  # re-exported
from condsamplers.sklearn.study_hooks import (
    CallbackStudy,
    call_callbacks,
    print_candidate,
    quiet_optuna,
)
from condsamplers.validation import check_int, is_integer

#: The default sampler's options are re-exported from :mod:`~.default_sampler`.
__all__ = [
    "BRANCH_PARAM",
    "DEFAULT_SAMPLER_OPTIONS",
    "MANY_DICTS",
    "MANY_DICTS_LOCAL_SEARCH_RADIUS",
    "MANY_DICTS_PATIENCE",
    "CondBayesSearchCV",
    "default_sampler_options",
]


# -- the estimator ---------------------------------------------------------------------------
class CondBayesSearchCV(BaseSearchCV):
    """Bayesian optimisation over a conditional hyperparameter space, with cross-validation.

    A drop-in for :class:`~sklearn.model_selection.RandomizedSearchCV`: the same search-space
    format, the same ``fit``, ``cv_results_``, ``best_*`` attributes, scoring, refit and
    ``error_score`` semantics (it is a :class:`~sklearn.model_selection._search.BaseSearchCV`
    that only schedules the candidates), but each candidate is proposed by an Optuna sampler
    (default :class:`~condsamplers.TreeGPSampler`) from the scores of the previous ones.

    Args:
        estimator: the estimator (or pipeline) whose parameters are searched.
        search_spaces: a dict, or a list of dicts where each dict is one *branch*, exactly as
            ``RandomizedSearchCV``'s ``param_distributions``. Values:

            - a list (or any non-string iterable): categorical choices, scikit-learn's meaning
              (``[1, 10]`` is the two values 1 and 10); estimator instances are pipeline-step
              choices (``"clf": [SVC(), LogisticRegression()]``, with ``"passthrough"`` or
              ``None`` allowed); a one-element list fixes the value;
            - a bounded ``scipy.stats`` distribution: a range over its support (its density
              is not a prior): ``loguniform(a, b)`` on a log scale, ``uniform(loc, scale)``,
              ``randint(a, b)`` the integers ``a .. b - 1``; unbounded ones are refused;
            - an Optuna distribution (``FloatDistribution``, ``IntDistribution``,
              ``CategoricalDistribution``);
            - ``(low, high, "uniform" | "log-uniform")``: a range, of integers if both bounds
              are ints, else of floats. A 2-tuple of numbers is refused as ambiguous.

            Each branch's parameters are nested under the branch choice: the same name in
            two branches (``clf__C`` of an SVC branch and of a LogisticRegression branch) is
            a parameter of each, not one shared dimension. Bad spaces (an empty branch, a
            name that is not in ``estimator.get_params()``, low > high, mixed types) raise a
            ``ValueError`` naming the parameter when ``fit`` starts, before any fitting.
        n_iter: number of configurations evaluated (each with ``cv``); capped, with a warning,
            at the size of a finite space.
        sampler: an Optuna sampler (a condsamplers sampler or Optuna's own); it is deep-copied
            at each ``fit``, so fits are repeatable. ``None``:
            ``TreeGPSampler(seed=..., acquisition="joint", signal_variance="leaf",
            independent=True, offsets="shared", output_warping="none", objective_bound=b)``
            seeded from ``random_state`` (joint EI: each branch is valued by what its best
            configuration may reach, not by its mean level as the two-step EI does; a GP and a
            signal variance per branch, all around one constant mean, so that a branch whose first
            random trials were poor is not written off; ``b`` the best value of the maximised score
            when it is known, 1 for accuracy or R^2, 0 for a ``neg_*`` loss, so that the model fits
            the log error). With more than ``MANY_DICTS`` (10) dicts, ``independent=False``: each
            dict also gets a level of its own, learnt from its trials and shrunk towards the
            others' (most dicts then hold none or one trial after the random first candidates), and
            ``path_patience=5``: a dict that has had 5 candidates since the best score last
            improved sits out until the best score improves again, so that a search does not spend
            its candidates on one dict's plateau, and ``local_search_radius=0.1``: the
            acquisition's local search refines its quasi-random starts instead of running to the
            edges of the space.
        scoring: as for ``RandomizedSearchCV``. The score maximised is the ``refit`` metric
            for multi-metric scoring with ``refit="name"``, the single score otherwise, and the
            first metric of ``scoring`` when several are scored and ``refit`` is ``False`` or
            a callable.
        cv: as for ``RandomizedSearchCV``.
        refit: as for ``RandomizedSearchCV``.
        n_jobs: as for ``RandomizedSearchCV``; it is also the batch size: that many
            configurations are proposed (the later ones seeing the earlier ones as pending,
            never duplicates) and cross-validated together.
        verbose: see "Verbose" below.
        pre_dispatch: as for ``RandomizedSearchCV``.
        error_score: as for ``RandomizedSearchCV``.
        return_train_score: as for ``RandomizedSearchCV``.
        random_state: seed (int, ``RandomState`` or ``None``) of the default sampler and of
            the choice among unused configurations of an exhausted finite space; a given
            ``sampler`` keeps its own seed.
        callbacks: callables ``callback(study, trial)`` with the signature of Optuna's
            ``study.optimize(callbacks=...)``, called after each trial is told (``trial`` is
            its ``FrozenTrial``); ``study.stop()`` inside a callback ends the search after the
            current batch (``optuna.study.MaxTrialsCallback`` works). scikit-learn's own
            callbacks (``set_callbacks``) are supported as for every ``BaseSearchCV``.
        resource: ``None`` (default): every candidate is cross-validated once, in full.
            ``"n_samples"`` or the name of an estimator parameter (``"max_iter"``,
            ``"clf__n_estimators"``), as ``HalvingRandomSearchCV``'s ``resource``: each
            candidate is cross-validated on a ladder of growing amounts of the resource (the
            training part of each split subsampled, stratified for a classifier, the test part
            whole; or the parameter set to the amount), in Hyperband's brackets (a candidate's
            bracket sets its first rung) with asynchronous successive halving in each (it goes
            on to the next rung while its score is in the best ``1 / factor`` of its bracket's
            scores on that rung so far; Li et al. 2018 and 2020).
            The sampler learns from the stopped candidates too, the amount as a fidelity
            input (docs/pruning.md). ``n_iter`` counts candidates, stopped ones included.
        min_resources: the smallest amount of the resource (``"smallest"``: ``2 * n_splits``
            samples, times the number of classes for a classifier, or 1 of a parameter). The
            first rung is the smallest ``max_resources // factor**k`` at or above it.
        max_resources: the full amount, where a candidate's score is its final one and where
            ``best_*`` is chosen (``"auto"``: every sample; required as an int for a
            parameter).
        factor: the ratio between two rungs, and the share ``1 / factor`` of candidates that
            goes on to the next rung (an int >= 2).
        pareto_objectives: ``None`` (default): the search maximises one score (``refit``'s).
            A list of two or more names: search the Pareto front of these columns of
            ``cv_results_`` instead, each scorer of ``scoring`` maximised (``"score"`` with
            one scorer) and ``"fit_time"`` / ``"score_time"`` (mean seconds) minimised; the
            study is multi-objective and the default sampler proposes by expected hypervolume
            improvement (docs/multi_objective.md). ``pareto_front_`` lists the rows on the
            front; ``best_*`` and the refit stay ``refit``'s, as in scikit-learn. It does
            not combine with ``resource``.

    After ``fit``, ``cv_results_``, ``best_estimator_``, ``best_score_``, ``best_params_``,
    ``best_index_``, ``scorer_``, ``n_splits_``, ``refit_time_``, ``multimetric_``,
    ``classes_``, ``n_features_in_`` and ``feature_names_in_`` are as for
    ``RandomizedSearchCV``; ``cv_results_`` lists the candidates in the order they were
    evaluated, parameters inactive in a candidate's branch masked. With a ``resource`` it has
    a row per candidate and rung, with ``HalvingRandomSearchCV``'s columns ``iter`` (the rung)
    and ``n_resources`` (the amount), and ``best_*`` is the best row at ``max_resources``.

    Attributes:
        study_: the Optuna study of the search (``direction="maximize"``). Each trial that
            was evaluated has the user attribute ``cv_results_index``; a score that is
            ``NaN`` (a failed fit with ``error_score=np.nan``) is told as the worst finite
            score so far (user attribute ``cv_failed``), or as a FAIL while there is none; a
            trial that repeated an evaluated configuration is a FAIL with the user attribute
            ``duplicate_of`` and was not evaluated. With a ``resource``, each rung's score is
            reported at the step ``n_resources``, a candidate stopped early is PRUNED, and
            ``cv_results_index`` is the row of its last rung. With ``pareto_objectives``
            the study has one direction per objective.
        pareto_front_: with ``pareto_objectives``, the indices of the rows of
            ``cv_results_`` on the Pareto front of the objectives (rows with a ``NaN``
            value left out), in row order.

    Verbose: ``verbose >= 1`` prints one line per evaluated candidate (its score, the best so
    far, its parameters) besides scikit-learn's own messages; Optuna's INFO messages are
    muted during ``fit`` unless ``verbose >= 2``.
    """

    def __init__(
        self,
        estimator: Any,
        search_spaces: dict[str, Any] | list[dict[str, Any]],
        *,
        n_iter: int = 50,
        sampler: BaseSampler | None = None,
        scoring: Any = None,
        cv: Any = None,
        refit: bool | str | Callable = True,
        n_jobs: int | None = None,
        random_state: int | np.random.RandomState | None = None,
        verbose: int = 0,
        pre_dispatch: int | str = "2*n_jobs",
        error_score: float | str = np.nan,
        return_train_score: bool = False,
        callbacks: list[Callable[[Study, FrozenTrial], None]] | None = None,
        resource: str | None = None,
        min_resources: int | str = "smallest",
        max_resources: int | str = "auto",
        factor: int = 3,
        pareto_objectives: list[str] | None = None,
    ) -> None:
        self.search_spaces = search_spaces
        self.n_iter = n_iter
        self.sampler = sampler
        self.random_state = random_state
        self.callbacks = callbacks
        self.resource = resource
        self.min_resources = min_resources
        self.max_resources = max_resources
        self.factor = factor
        self.pareto_objectives = pareto_objectives
        super().__init__(
            estimator=estimator,
            scoring=scoring,
            n_jobs=n_jobs,
            refit=refit,
            cv=cv,
            verbose=verbose,
            pre_dispatch=pre_dispatch,
            error_score=error_score,
            return_train_score=return_train_score,
        )

    def fit(self, X: Any, y: Any = None, **params: Any) -> CondBayesSearchCV:
        """Run the search: propose, cross-validate and learn from ``n_iter`` configurations,
        then refit the best one (``refit``).

        Args:
            X: training data, ``(n_samples, n_features)``.
            y: targets, or ``None`` for unsupervised estimators.
            **params: metadata for the estimator's ``fit``, the scorer and the CV splitter
                (``groups``, ``sample_weight``), routed as in ``RandomizedSearchCV``.

        Returns:
            self
        """
        self._check_own_params()
        self._search_space = translate_search_spaces(self.search_spaces, self.estimator)
        # The splitter as BaseSearchCV.fit will build it (public check_cv, so that no private
        # attribute of the base class is read): whether its splits vary between calls.
        self._splitter = check_cv(self.cv, y, classifier=is_classifier(self.estimator))
        self._ladder = self._resource_ladder(X, y)
        self._objectives = _pareto.check_pareto_objectives(self.pareto_objectives, self.resource)
        with quiet_optuna(self.verbose < 2):
            return super().fit(X, y, **params)

    def _check_own_params(self) -> None:
        """A ``ValueError`` naming the parameter for a bad value of one of the parameters
        ``RandomizedSearchCV`` does not have (``BaseSearchCV.fit`` checks its own: scoring,
        cv, refit, ...); ``search_spaces``, ``pareto_objectives`` and the ladder of a
        ``resource`` (against the data) are checked where they are read."""
        check_int("n_iter", self.n_iter, minimum=1, owner="CondBayesSearchCV")
        if self.sampler is not None and not isinstance(self.sampler, BaseSampler):
            raise ValueError(
                "CondBayesSearchCV: sampler must be an Optuna sampler (optuna.samplers."
                f"BaseSampler) or None for the default; got {self.sampler!r}."
            )
        random_state = self.random_state
        if not (
            random_state is None
            or isinstance(random_state, np.random.RandomState)
            or is_integer(random_state)
        ):
            raise ValueError(
                "CondBayesSearchCV: random_state must be None, an int or a "
                f"numpy.random.RandomState; got {random_state!r}."
            )
        callbacks = self.callbacks
        if callbacks is not None and not isinstance(callbacks, (list, tuple)):
            raise ValueError(
                "CondBayesSearchCV: callbacks must be a list of callables callback(study, "
                f"trial) or None; got {callbacks!r}."
            )
        for callback in callbacks or ():
            if not callable(callback):
                raise ValueError(
                    "CondBayesSearchCV: callbacks must be callables callback(study, trial); "
                    f"got {callback!r}."
                )
        if self.resource is not None and not isinstance(self.resource, str):
            raise ValueError(
                "CondBayesSearchCV: resource must be the name of an estimator parameter "
                f"('n_samples' or e.g. 'clf__max_iter') or None; got {self.resource!r}."
            )
        check_ladder_options(self.min_resources, self.max_resources, self.factor)

    def _resource_ladder(self, X: Any, y: Any) -> ResourceLadder | None:
        """The checked ladder of the ``resource`` options (``None`` without a resource)."""
        if self.resource is None:
            return None
        check_resource(self.resource, self.estimator.get_params(), self._search_space.names())
        self._n_samples = int(X.shape[0]) if hasattr(X, "shape") else len(X)
        classes = np.unique(np.asarray(y)).size if is_classifier(self.estimator) else None
        return resource_ladder(
            self.resource,
            self.min_resources,
            self.max_resources,
            self.factor,
            n_samples=self._n_samples,
            n_splits=int(self._splitter.get_n_splits(X, y)),
            n_classes=classes,
        )

    @staticmethod
    def _select_best_index(refit: Any, refit_metric: str, results: Mapping[str, Any]) -> int:
        """The best row of ``cv_results_``, among the rows at the full resource when the
        search had a ``resource`` (a score on a small subsample is not comparable), as
        ``HalvingRandomSearchCV`` chooses among its last iteration."""
        if callable(refit):
            return _refit_index(refit, results)
        if "n_resources" not in results:
            return int(np.asarray(results[f"rank_test_{refit_metric}"]).argmin())
        amounts = np.asarray(results["n_resources"])
        full = np.flatnonzero(amounts == amounts.max())
        scores = np.asarray(results[f"mean_test_{refit_metric}"], dtype=float)[full]
        return int(full[0] if np.isnan(scores).all() else full[np.nanargmax(scores)])

    # -- the search ----------------------------------------------------------------------
    def _make_sampler(self) -> tuple[BaseSampler, int | None]:
        seed = sampler_seed(self.random_state)
        if self.sampler is None:
            bound = None if self._objectives else self._score_bound()
            return default_sampler(seed, len(self._search_space.branches), bound), seed
        return copy.deepcopy(self.sampler), seed

    def _score_bound(self) -> float | None:
        """The best value the maximised score can reach, if known (and not beaten by a
        numerical ``error_score``): the default sampler models the log of the gap to it."""
        bound = objective_score_bound(self.scoring, self.refit, self._final_estimators())
        error_score = self.error_score
        if bound is not None and isinstance(error_score, numbers.Real) and error_score > bound:
            return None
        return bound

    def _final_estimators(self) -> list[Any]:
        """The estimator, or for a pipeline every estimator its last step may be: the
        pipeline's own and each one the search space chooses for that step."""
        estimator = self.estimator
        if not isinstance(estimator, Pipeline) or not estimator.steps:
            return [estimator]
        name, last = estimator.steps[-1]
        chosen = self._search_space.values_of(name)
        return [last, *(value for value in chosen if _is_estimator(value))]

    def _run_search(self, evaluate_candidates: Callable, *, callback_ctx: Any = None) -> None:
        space: _SearchSpace = self._search_space
        n_iter = int(self.n_iter)
        size = space.size()
        if size < n_iter:
            warnings.warn(
                f"The total space of parameters {int(size)} is smaller than n_iter={n_iter}. "
                f"Running {int(size)} iterations. For exhaustive searches, use GridSearchCV.",
                UserWarning,
                stacklevel=2,
            )
            n_iter = int(size)
        _warn_if_splits_vary(self._splitter)
        sampler, seed = self._make_sampler()
        rng = np.random.default_rng(seed)
        self._rung_scores: dict[tuple[int, int], list[float]] = {}
        if self._ladder is not None:
            self._subsample_seed = int(rng.integers(2**31 - 1))
        storage = InMemoryStorage()
        if self._objectives:
            directions = _pareto.directions(self._objectives)
            study = optuna.create_study(storage=storage, directions=directions, sampler=sampler)
        else:
            study = optuna.create_study(storage=storage, direction="maximize", sampler=sampler)
        self.study_ = study
        callback_study = CallbackStudy(study, storage) if self.callbacks else None
        batch_size = max(1, min(int(effective_n_jobs(self.n_jobs)), n_iter))
        if self.verbose > 0:
            print(
                f"[CondBayesSearchCV] {n_iter} candidates in batches of {batch_size}, "
                f"proposed by {type(sampler).__name__}"
            )
        search_ctx = None
        if callback_ctx is not None:
            calls = None if self._ladder is not None else math.ceil(n_iter / batch_size)
            search_ctx = callback_ctx.subcontext(
                task_name="search", max_subtasks=calls
            ).call_on_fit_task_begin(estimator=self)
        with _deferred_fit_failures(self) as fit_results:
            results = self._search(
                evaluate_candidates, study, callback_study, space, n_iter, batch_size, rng,
                search_ctx,
            )  # fmt: skip
        if fit_results is not None:
            assert _batches._check_fit_failures is not None
            _batches._check_fit_failures(fit_results, self.error_score)
        _warn_non_finite(results)
        if self._objectives:
            self.pareto_front_ = _pareto.front_indices(self._objectives, results)
        if search_ctx is not None:
            search_ctx.call_on_fit_task_end(estimator=self)

    def _search(
        self,
        evaluate_candidates: Callable,
        study: Study,
        callback_study: CallbackStudy | None,
        space: _SearchSpace,
        n_iter: int,
        batch_size: int,
        rng: np.random.Generator,
        search_ctx: Any,
    ) -> Mapping[str, Any]:
        """Ask, evaluate and tell batches until ``n_iter`` candidates (or a stop); the callbacks
        see ``callback_study`` (``None`` without callbacks)."""
        seen: dict[tuple, int] = {}
        self._results: Mapping[str, Any] = {}
        self._metric: str | None = None
        n_done, stop = 0, False
        while n_done < n_iter and not stop:
            size_now = min(batch_size, n_iter - n_done)
            trials, candidates = [], []
            for _ in range(size_now):
                trial, params = ask_unseen(study, space, seen, rng)
                trials.append(trial)
                candidates.append(params)
            if self._ladder is None:
                stop = self._evaluate(evaluate_candidates, trials, candidates, search_ctx, {})
                scores = self._last_values(len(trials))
                told = [(trial, score) for trial, score in zip(trials, scores, strict=True)]
            else:
                told, stop = self._climb(
                    evaluate_candidates, trials, candidates, search_ctx, n_done
                )
            for trial, score in told:
                frozen = _tell(study, trial, score)
                if self.verbose > 0:
                    position = trials.index(trial)
                    assert self._metric is not None
                    print_candidate(
                        self._results, self._metric, trial, n_done + position + 1, n_iter,
                        candidates[position],
                    )  # fmt: skip
                stop = call_callbacks(self.callbacks, callback_study, frozen) or stop
            n_done += size_now
        return self._results

    def _evaluate(
        self,
        evaluate_candidates: Callable,
        trials: list[Trial],
        candidates: list[dict[str, Any]],
        search_ctx: Any,
        extra: dict[str, Any],
    ) -> bool:
        """Cross-validate ``candidates`` (one ``evaluate_candidates`` call, with ``extra``
        arguments); each trial's user attribute ``cv_results_index`` is its row. ``True`` if a
        scikit-learn callback asked to stop."""
        batch_ctx = None
        if search_ctx is not None:
            batch_ctx = search_ctx.subcontext(
                task_name="batch",
                max_subtasks=len(candidates) * self.n_splits_,
                sequential_subtasks=False,
            ).call_on_fit_task_begin(estimator=self)
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", _NON_FINITE, UserWarning)
                # scikit-learn < 1.9 has no callbacks: no callback_ctx to pass on.
                context = {} if batch_ctx is None else {"callback_ctx": batch_ctx}
                self._results = evaluate_candidates(candidates, **extra, **context)
        except BaseException:
            for trial in trials:
                trial.study.tell(trial, state=TrialState.FAIL)
            raise
        self._metric = self._metric or self._objective_metric(self._results)
        n_rows = len(self._results[f"mean_test_{self._metric}"])
        for offset, trial in enumerate(trials):
            trial.set_user_attr("cv_results_index", n_rows - len(trials) + offset)
        return batch_ctx is not None and bool(batch_ctx.call_on_fit_task_end(estimator=self))

    def _last_values(self, count: int) -> np.ndarray:
        """The values told for the last ``count`` rows: the objective metric's mean test
        scores, or each ``pareto_objectives`` value (``(count, k)``)."""
        if self._objectives:
            return _pareto.last_rows(self._objectives, self._results, count)
        return self._last_scores(count)

    def _last_scores(self, count: int) -> np.ndarray:
        """The mean test scores of the last ``count`` rows of ``cv_results_``."""
        assert self._metric is not None
        return np.asarray(self._results[f"mean_test_{self._metric}"][-count:], dtype=float)

    def _climb(
        self,
        evaluate_candidates: Callable,
        trials: list[Trial],
        candidates: list[dict[str, Any]],
        search_ctx: Any,
        first: int,
    ) -> tuple[list[tuple[Trial, float]], bool]:
        """Run a batch up the resource ladder. Candidate ``first + i`` of the search starts on
        the rung of its bracket (:func:`bracket_sequence`); on each rung the candidates still
        running are cross-validated together, their scores reported at the rung's resource
        (the step), and those not promoted among their bracket's scores on that rung
        (:func:`is_promoted`) are told PRUNED, as is a ``NaN`` score's candidate (told as the
        worst score); those left finish on the last rung. Returns the trials to tell with
        their scores."""
        ladder = self._ladder
        assert ladder is not None
        brackets = bracket_sequence(len(ladder.rungs), ladder.factor)
        start = [brackets[(first + i) % len(brackets)] for i in range(len(trials))]
        running = set(range(len(trials)))
        told: list[tuple[Trial, float]] = []
        stop = False
        for rung, amount in enumerate(ladder.rungs):
            now = [i for i in range(len(trials)) if i in running and start[i] <= rung]
            if not now:
                continue
            alive = [trials[i] for i in now]
            params, cv = self._at_resource([candidates[i] for i in now], amount)
            more = {"iter": [rung] * len(alive), "n_resources": [amount] * len(alive)}
            extra = {"cv": cv, "more_results": more}
            stop = self._evaluate(evaluate_candidates, alive, params, search_ctx, extra) or stop
            for i, score in zip(now, self._last_scores(len(alive)), strict=True):
                trial = trials[i]
                if rung == len(ladder.rungs) - 1 or math.isnan(score):
                    told.append((trial, float(score)))
                    running.discard(i)
                    continue
                trial.report(float(score), amount)
                competing = self._rung_scores.setdefault((start[i], rung), [])
                competing.append(float(score))
                if not is_promoted(float(score), competing, ladder.factor):
                    trial.study.tell(trial, state=TrialState.PRUNED)
                    running.discard(i)
        return told, stop

    def _at_resource(
        self, candidates: list[dict[str, Any]], amount: int
    ) -> tuple[list[dict[str, Any]], Any]:
        """The candidates and the splitter for a cross-validation at ``amount`` of the
        resource."""
        ladder = self._ladder
        assert ladder is not None
        if ladder.resource != N_SAMPLES:
            return [{**c, ladder.resource: amount} for c in candidates], None
        fraction = amount / self._n_samples
        stratify = is_classifier(self.estimator)
        return candidates, SubsampledSplits(
            self._splitter, fraction, self._subsample_seed, stratify
        )

    def _objective_metric(self, results: Mapping[str, Any]) -> str:
        """The metric whose mean test score the sampler maximises."""
        if isinstance(self.refit, str) and f"mean_test_{self.refit}" in results:
            return self.refit
        if "mean_test_score" in results:
            return "score"
        return next(k[len("mean_test_") :] for k in results if k.startswith("mean_test_"))


def _refit_index(refit: Callable[[Mapping[str, Any]], Any], results: Mapping[str, Any]) -> int:
    """The row of ``cv_results_`` a callable ``refit`` chooses, checked as scikit-learn's
    searches check it (an int within the rows)."""
    index = refit(results)
    if not is_integer(index):
        raise TypeError(f"best_index_ returned is not an integer: {index!r}")
    if not 0 <= index < len(results["params"]):
        raise IndexError(f"best_index_ index out of range: {index}")
    return int(index)
