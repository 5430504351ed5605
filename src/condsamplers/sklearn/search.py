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
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import difflib
import itertools
import math
import numbers
import sys
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np
import optuna
import scipy.stats
from joblib import effective_n_jobs
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.samplers import BaseSampler
from optuna.study import Study
from optuna.trial import FrozenTrial, Trial, TrialState
from sklearn.base import clone
from sklearn.model_selection import _search as _sklearn_search
from sklearn.model_selection._search import BaseSearchCV
from sklearn.pipeline import Pipeline
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval

from condsamplers.samplers.proposals import params_key
from condsamplers.samplers.tree import TreeGPSampler
from condsamplers.sklearn.score_bounds import objective_score_bound

__all__ = ["BRANCH_PARAM", "CondBayesSearchCV"]

#: Optuna name of the branch choice (an index into the list of dicts), present only when the
#: search space has several branches. scikit-learn parameter names never start with ``__``.
BRANCH_PARAM = "__branch__"
#: Settings of the default ``TreeGPSampler`` (docs/search_cv.md sec. 8). ``acquisition``:
#: model selection needs branches valued by their best configuration, not their mean level.
#: ``signal_variance``: one per branch, since the classifiers of a model selection differ in
#: how much their scores vary. ``independent`` and ``offsets``: a search space's tree has one
#: level (the branch choice, then each branch's own parameters), so the inner-node weights
#: would only give each branch a level of its own, which a branch's few poor random trials
#: then fix for the whole branch; instead the branches' GPs revert to one common constant.
#: ``output_warping``: the scores are already fitted as the log of their gap to the best score
#: possible (``objective_bound``), which is what this default was measured with.
DEFAULT_SAMPLER_OPTIONS: dict[str, Any] = {
    "acquisition": "joint",
    "signal_variance": "leaf",
    "independent": True,
    "offsets": "shared",
    "output_warping": "none",
}
#: The priors of a ``(low, high, prior)`` range tuple.
PRIORS = ("uniform", "log-uniform")
#: How often a trial that repeats an evaluated configuration is asked again before the search
#: falls back to an unused configuration of a finite space.
_MAX_DUPLICATE_ASKS = 16
#: At most this many combinations of estimator choices are checked for parameter names.
_MAX_NAME_CHECKS = 256
#: At most this many configurations of a finite space are enumerated to find an unused one.
_MAX_ENUMERATION = 100_000


# -- the search space ------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class _Dimension:
    """One searched parameter of one branch."""

    name: str  # the scikit-learn parameter name, e.g. "clf__C"
    key: str  # the Optuna parameter name, e.g. "1:clf__C"
    distribution: BaseDistribution
    choices: tuple[Any, ...] = ()  # categorical: the user's objects, aligned with the choices

    def suggest(self, trial: Trial) -> Any:
        d = self.distribution
        if isinstance(d, CategoricalDistribution):
            key = trial.suggest_categorical(self.key, d.choices)
            return self.choices[d.choices.index(key)]
        if isinstance(d, FloatDistribution):
            return trial.suggest_float(self.key, d.low, d.high, log=d.log, step=d.step)
        assert isinstance(d, IntDistribution)
        return trial.suggest_int(self.key, d.low, d.high, log=d.log, step=d.step)

    def values(self) -> list[Any] | None:
        """The Optuna values of a finite dimension; ``None`` for a continuous one."""
        d = self.distribution
        if isinstance(d, CategoricalDistribution):
            return list(d.choices)
        if isinstance(d, IntDistribution):
            return list(range(d.low, d.high + 1, d.step))
        if d.step is None:
            return None
        n = int(round((d.high - d.low) / d.step)) + 1
        return [d.low + k * d.step for k in range(n)]


@dataclasses.dataclass(frozen=True)
class _Branch:
    """One dict of the search space: fixed values (single-value lists) and searched ones."""

    fixed: dict[str, Any]
    dimensions: tuple[_Dimension, ...]

    def size(self) -> float:
        return math.prod(
            len(v) if (v := d.values()) is not None else math.inf for d in self.dimensions
        )


@dataclasses.dataclass(frozen=True)
class _SearchSpace:
    """The translated search space: a define-by-run function and what the search needs."""

    branches: tuple[_Branch, ...]

    def values_of(self, name: str) -> list[Any]:
        """Every value (the user's objects) the scikit-learn parameter ``name`` may take."""
        values = []
        for branch in self.branches:
            if name in branch.fixed:
                values.append(branch.fixed[name])
            values += [v for d in branch.dimensions if d.name == name for v in d.choices]
        return values

    def suggest(self, trial: Trial) -> dict[str, Any]:
        """Suggest a whole configuration on ``trial``; returns the scikit-learn parameters."""
        index = 0
        if len(self.branches) > 1:
            index = trial.suggest_categorical(BRANCH_PARAM, list(range(len(self.branches))))
        branch = self.branches[index]
        params = dict(branch.fixed)
        for dimension in branch.dimensions:
            params[dimension.name] = dimension.suggest(trial)
        return dict(sorted(params.items()))

    def size(self) -> float:
        """Number of distinct configurations (``inf`` with a continuous parameter)."""
        return sum(branch.size() for branch in self.branches)

    def configurations(self) -> Iterator[dict[str, Any]]:
        """Every configuration of a finite space, as Optuna parameters."""
        for index, branch in enumerate(self.branches):
            head = {BRANCH_PARAM: index} if len(self.branches) > 1 else {}
            keys = [d.key for d in branch.dimensions]
            grids = [d.values() for d in branch.dimensions]
            if any(grid is None for grid in grids):
                continue
            for combination in itertools.product(*grids):
                yield {**head, **dict(zip(keys, combination, strict=True))}


def _is_estimator(value: Any) -> bool:
    return hasattr(value, "get_params") and not isinstance(value, type)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _primitive(value: Any) -> Any:
    """A numpy scalar as the Python value Optuna stores (other values unchanged)."""
    return value.item() if isinstance(value, np.generic) else value


def _label(value: Any) -> str:
    if _is_estimator(value):
        return type(value).__name__
    return value if isinstance(value, str) else repr(value)


class _SpaceError(ValueError):
    """A bad search space; the message names the parameter."""


def translate_search_spaces(search_spaces: Any, estimator: Any) -> _SearchSpace:
    """Validate ``search_spaces`` (``RandomizedSearchCV``'s ``param_distributions`` format)
    against ``estimator`` and translate it into Optuna distributions; a ``ValueError`` names
    the offending parameter."""
    if isinstance(search_spaces, Mapping):
        dicts, where = [search_spaces], (lambda b: "")
    elif isinstance(search_spaces, (list, tuple)):
        dicts, where = list(search_spaces), (lambda b: f"[{b}]")
        if not dicts:
            raise _SpaceError(
                "CondBayesSearchCV: search_spaces is an empty list; give a dict of parameters "
                "or a list of such dicts (one per branch)."
            )
    else:
        raise _SpaceError(
            "CondBayesSearchCV: search_spaces must be a dict or a list of dicts (one per "
            f"branch); got {type(search_spaces).__name__}."
        )
    if not hasattr(estimator, "get_params"):
        raise _SpaceError(
            "CondBayesSearchCV: the estimator has no get_params(); the searched parameters are "
            "checked against it (a scikit-learn estimator)."
        )
    branches = []
    for b, space in enumerate(dicts):
        if not isinstance(space, Mapping):
            raise _SpaceError(
                f"CondBayesSearchCV: search_spaces{where(b)} must be a dict of parameters; "
                f"got {type(space).__name__}."
            )
        if not space:
            raise _SpaceError(
                f"CondBayesSearchCV: search_spaces{where(b)} is an empty branch; give it at "
                "least one parameter (a single-value list such as {'clf': [SVC()]} evaluates "
                "the estimator with that value)."
            )
        prefix = f"{b}:" if len(dicts) > 1 else ""
        fixed, dimensions = {}, []
        for name, value in space.items():
            if not isinstance(name, str):
                raise _SpaceError(
                    f"CondBayesSearchCV: search_spaces{where(b)} has the key {name!r}; "
                    "parameter names are strings such as 'clf__C'."
                )
            context = f"search_spaces{where(b)} parameter {name!r}"
            parsed = _parse_value(value, context)
            if isinstance(parsed, BaseDistribution):
                dimensions.append(_Dimension(name, prefix + name, parsed))
            elif len(parsed) == 1:
                fixed[name] = parsed[0]
            else:
                keys = _categorical_keys(parsed, context)
                dimensions.append(
                    _Dimension(name, prefix + name, CategoricalDistribution(keys), tuple(parsed))
                )
        branch = _Branch(fixed, tuple(dimensions))
        _check_names(estimator, branch, where(b))
        branches.append(branch)
    return _SearchSpace(tuple(branches))


def _parse_value(value: Any, context: str) -> BaseDistribution | list[Any]:
    """A range as an Optuna distribution, or the list of choices of a categorical."""
    if isinstance(value, (FloatDistribution, IntDistribution)):
        if value.low == value.high:
            return [value.low]
        return value
    if isinstance(value, CategoricalDistribution):
        return list(value.choices)
    if isinstance(value, tuple) and len(value) == 3 and value[2] in PRIORS:
        low, high = value[:2]
        if _is_number(low) and _is_number(high):
            return _range(low, high, value[2] == "log-uniform", context, value)
        if _is_number(low) or _is_number(high):
            raise _SpaceError(
                f"CondBayesSearchCV: {context} = {value!r} mixes types: a range is "
                "(low, high, 'uniform' | 'log-uniform') with numbers for low and high; a list "
                "of choices is written as a list."
            )
    if (
        isinstance(value, tuple)
        and len(value) == 3
        and all(_is_number(v) for v in value[:2])
        and isinstance(value[2], str)
    ):
        raise _SpaceError(
            f"CondBayesSearchCV: {context} = {value!r} has the unknown prior {value[2]!r}: a "
            "range is (low, high, 'uniform' | 'log-uniform'); write a list for three choices."
        )
    if isinstance(value, tuple) and len(value) == 2 and all(_is_number(v) for v in value):
        low, high = value
        raise _SpaceError(
            f"CondBayesSearchCV: {context} = {value!r} is ambiguous: write [{low!r}, {high!r}] "
            f"for these two values (scikit-learn's meaning), or ({low!r}, {high!r}, 'uniform') "
            f"/ ({low!r}, {high!r}, 'log-uniform') for the range between them."
        )
    if hasattr(value, "rvs"):
        return _scipy_range(value, context)
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise _SpaceError(
            f"CondBayesSearchCV: {context} = {value!r} is neither a list of values, a bounded "
            "scipy.stats distribution, an Optuna distribution nor a (low, high, 'uniform' | "
            "'log-uniform') range; a single value is written as a one-element list."
        )
    choices = list(value)
    if not choices:
        raise _SpaceError(f"CondBayesSearchCV: {context} is an empty list of values.")
    return choices


def _range(low: Any, high: Any, log: bool, context: str, spec: Any) -> BaseDistribution | list:
    integral = [isinstance(v, numbers.Integral) for v in (low, high)]
    if integral[0] != integral[1]:
        raise _SpaceError(
            f"CondBayesSearchCV: {context} = {spec!r} mixes an integer and a float bound: "
            f"write ({float(low)!r}, {float(high)!r}, ...) for a float range or integers on "
            "both sides for an integer range."
        )
    if not (np.isfinite(low) and np.isfinite(high)):
        raise _SpaceError(f"CondBayesSearchCV: {context} = {spec!r} needs finite bounds.")
    if low > high:
        raise _SpaceError(
            f"CondBayesSearchCV: {context} = {spec!r} has low > high ({low!r} > {high!r})."
        )
    if log and low <= 0:
        raise _SpaceError(
            f"CondBayesSearchCV: {context} = {spec!r} is log-uniform, so low must be > 0 "
            f"(got {low!r})."
        )
    if low == high:
        return [_primitive(low)]
    if integral[0]:
        return IntDistribution(int(low), int(high), log=log)
    return FloatDistribution(float(low), float(high), log=log)


def _scipy_range(value: Any, context: str) -> BaseDistribution | list:
    """A bounded scipy.stats distribution as a range over its support (its density is not
    used): discrete -> integers, ``loguniform`` / ``reciprocal`` -> log scale."""
    try:
        low, high = (float(v) for v in value.support())
    except Exception:
        low, high = -math.inf, math.inf
    if not (np.isfinite(low) and np.isfinite(high)):
        raise _SpaceError(
            f"CondBayesSearchCV: {context} is a distribution without finite bounds "
            f"({value!r}); Bayesian optimisation needs a bounded range: use "
            "scipy.stats.uniform, loguniform or randint, or (low, high, 'uniform' | "
            "'log-uniform')."
        )
    dist = getattr(value, "dist", value)
    if low > high:
        raise _SpaceError(f"CondBayesSearchCV: {context} has low > high ({low} > {high}).")
    if isinstance(dist, scipy.stats.rv_discrete):
        return _range(int(low), int(high), False, context, value)
    log = getattr(dist, "name", "") in ("loguniform", "reciprocal")
    return _range(low, high, log, context, value)


def _categorical_keys(choices: list[Any], context: str) -> list[Any]:
    """The Optuna choices standing for ``choices``: the values themselves when they are plain
    (None, bool, int, float, str) and distinct, else readable distinct labels."""
    if any(_is_estimator(c) for c in choices):
        odd = [c for c in choices if not (_is_estimator(c) or c is None or c == "passthrough")]
        if odd:
            raise _SpaceError(
                f"CondBayesSearchCV: {context} mixes types: estimators and {odd[0]!r}; the "
                "choices of an estimator (pipeline step) are estimators, 'passthrough' or None."
            )
    plain = [_primitive(c) for c in choices]
    for i, j in itertools.combinations(range(len(plain)), 2):
        if type(plain[i]) is type(plain[j]) and _equal(plain[i], plain[j]):
            raise _SpaceError(
                f"CondBayesSearchCV: {context} lists the value {choices[i]!r} twice."
            )
    if all(c is None or isinstance(c, (bool, int, float, str)) for c in plain):
        distinct = all(not (a == b) for a, b in itertools.combinations(plain, 2)) and not any(
            isinstance(c, float) and math.isnan(c) for c in plain
        )
        if distinct:
            return plain
    labels = [_label(c) for c in choices]
    if len(set(labels)) < len(labels):
        labels = [c if isinstance(c, str) else repr(c) for c in choices]
    if len(set(labels)) < len(labels):
        labels = [f"{i}: {label}" for i, label in enumerate(labels)]
    return labels


def _equal(a: Any, b: Any) -> bool:
    """``a == b`` for plain values; estimators and objects without a truth value of ``==``
    (arrays) are never equal."""
    if _is_estimator(a):
        return a is b
    try:
        return bool(a == b)
    except Exception:
        return False


def _check_names(estimator: Any, branch: _Branch, where: str) -> None:
    """Every name must be a parameter of ``estimator`` for every combination of the branch's
    estimator choices (``"clf": [SVC(), LogisticRegression()]`` with ``"clf__gamma"`` is an
    error: LogisticRegression has no gamma)."""
    options = {name: [value] for name, value in branch.fixed.items()}
    options.update({d.name: list(d.choices) for d in branch.dimensions if d.choices})
    steps = {
        name: values for name, values in options.items() if any(_is_estimator(v) for v in values)
    }
    names = list(branch.fixed) + [d.name for d in branch.dimensions]
    valid_top = estimator.get_params(deep=True)
    for name in names:
        if name.split("__")[0] not in valid_top:
            _unknown(name, valid_top, where, {})
    combinations = itertools.islice(itertools.product(*steps.values()), _MAX_NAME_CHECKS)
    for combination in combinations:
        setting = dict(zip(steps, combination, strict=True))
        candidate = clone(estimator)
        try:
            candidate.set_params(**{k: clone(v, safe=False) for k, v in setting.items()})
        except ValueError:
            for name in steps:
                if name not in candidate.get_params(deep=True):
                    _unknown(name, candidate.get_params(deep=True), where, {})
            raise
        valid = candidate.get_params(deep=True)
        for name in names:
            if name not in valid:
                _unknown(name, valid, where, setting)


def _unknown(name: str, valid: Mapping[str, Any], where: str, setting: dict[str, Any]) -> None:
    close = difflib.get_close_matches(name, list(valid), n=3)
    hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
    when = (
        " when " + ", ".join(f"{k}={_label(v)}" for k, v in setting.items() if k != name)
        if any(k != name for k in setting)
        else ""
    )
    raise _SpaceError(
        f"CondBayesSearchCV: search_spaces{where} parameter {name!r} is not a parameter of "
        f"the estimator{when} (see estimator.get_params().keys()).{hint}"
    )


# -- Optuna's logging ------------------------------------------------------------------------
_quiet_lock = threading.Lock()
_quiet_depth = 0
_quiet_saved = optuna.logging.WARNING


@contextlib.contextmanager
def _quiet_optuna(active: bool) -> Iterator[None]:
    """Raise Optuna's verbosity to WARNING (study creation, sampler fallbacks at INFO) for the
    duration of a fit; nested and concurrent fits restore it once, at the end of the last."""
    global _quiet_depth, _quiet_saved
    if not active:
        yield
        return
    with _quiet_lock:
        if _quiet_depth == 0:
            _quiet_saved = optuna.logging.get_verbosity()
            optuna.logging.set_verbosity(max(_quiet_saved, optuna.logging.WARNING))
        _quiet_depth += 1
    try:
        yield
    finally:
        with _quiet_lock:
            _quiet_depth -= 1
            if _quiet_depth == 0:
                optuna.logging.set_verbosity(_quiet_saved)


# -- fit failures: checked once per search, as RandomizedSearchCV does --------------------------
# BaseSearchCV's evaluate_candidates raises "All the N fits failed" when every fit of *one call*
# fails. RandomizedSearchCV makes one call; we make one per batch, so a batch of one failing
# candidate would end the search. While a CondBayesSearchCV searches, the check of its own
# evaluate_candidates calls is deferred (the results are collected) and made once, on every
# fit of the search, at the end: the same single FitFailedWarning, or the same ValueError when
# every fit failed. Calls from anything else (another search nested in the estimator) go to
# scikit-learn's function unchanged.
_deferred = threading.local()
_patch_lock = threading.Lock()
_check_fit_failures: Callable[[list, Any], None] | None = None


def _deferring_check(results: list, error_score: Any) -> None:
    assert _check_fit_failures is not None
    search = getattr(_deferred, "search", None)
    caller = sys._getframe(1)
    if (
        search is not None
        and caller.f_code.co_name == "evaluate_candidates"
        and caller.f_locals.get("self") is search
    ):
        _deferred.results.extend(results)
        return
    _check_fit_failures(results, error_score)


def _install_deferring_check() -> bool:
    """Put :func:`_deferring_check` in scikit-learn's search module (once, idempotent)."""
    global _check_fit_failures
    with _patch_lock:
        current = getattr(_sklearn_search, "_warn_or_raise_about_fit_failures", None)
        if current is None:
            return False
        if current is not _deferring_check:
            _check_fit_failures = current
            _sklearn_search._warn_or_raise_about_fit_failures = _deferring_check
        return True


@contextlib.contextmanager
def _deferred_fit_failures(search: Any) -> Iterator[list | None]:
    """Collect the fit results of ``search``'s evaluate_candidates calls (``None`` if the
    check could not be deferred); the caller checks them at the end."""
    if not _install_deferring_check():
        yield None
        return
    previous = getattr(_deferred, "search", None), getattr(_deferred, "results", None)
    _deferred.search, _deferred.results = search, []
    try:
        yield _deferred.results
    finally:
        _deferred.search, _deferred.results = previous


_NON_FINITE = "One or more of the .* scores are non-finite"


def _warn_non_finite(results: Mapping[str, Any]) -> None:
    """scikit-learn's warning about non-finite mean scores, once per search (it is muted for
    the intermediate batches, where it would repeat)."""
    for key, value in results.items():
        if key.startswith(("mean_train_", "mean_test_")) and not np.all(np.isfinite(value)):
            split = key.split("_")[1]
            warnings.warn(
                f"One or more of the {split} scores are non-finite: {value}",
                category=UserWarning,
                stacklevel=4,
            )


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
            signal variance per branch, all around one constant mean, so that a branch whose
            first random trials were poor is not written off; ``b`` the best value of the
            maximised score when it is known, 1 for accuracy or R^2, 0 for a ``neg_*`` loss,
            so that the model fits the log error; docs/search_cv.md sec. 8).
        scoring, cv, refit, n_jobs, verbose, pre_dispatch, error_score, return_train_score:
            as for ``RandomizedSearchCV``. The score maximised is the ``refit`` metric for
            multi-metric scoring with ``refit="name"``, the single score otherwise, and the
            first metric of ``scoring`` when several are scored and ``refit`` is ``False`` or
            a callable. ``n_jobs`` is also the batch size: that many configurations are
            proposed (the later ones seeing the earlier ones as pending, never duplicates) and
            cross-validated together.
        random_state: seed (int, ``RandomState`` or ``None``) of the default sampler and of
            the choice among unused configurations of an exhausted finite space; a given
            ``sampler`` keeps its own seed.
        callbacks: callables ``callback(study, trial)`` with the signature of Optuna's
            ``study.optimize(callbacks=...)``, called after each trial is told (``trial`` is
            its ``FrozenTrial``); ``study.stop()`` inside a callback ends the search after the
            current batch (``optuna.study.MaxTrialsCallback`` works). scikit-learn's own
            callbacks (``set_callbacks``) are supported as for every ``BaseSearchCV``.

    Attributes:
        cv_results_, best_estimator_, best_score_, best_params_, best_index_, scorer_,
        n_splits_, refit_time_, multimetric_, classes_, n_features_in_, feature_names_in_:
            as for ``RandomizedSearchCV``; ``cv_results_`` lists the candidates in the order
            they were evaluated, parameters inactive in a candidate's branch masked.
        study_: the Optuna study of the search (``direction="maximize"``). Each trial that
            was evaluated has the user attribute ``cv_results_index``; a score that is
            ``NaN`` (a failed fit with ``error_score=np.nan``) is told as the worst finite
            score so far (user attribute ``cv_failed``), or as a FAIL while there is none; a
            trial that repeated an evaluated configuration is a FAIL with the user attribute
            ``duplicate_of`` and was not evaluated.

    Verbose: ``verbose >= 1`` prints one line per evaluated candidate (its score, the best so
    far, its parameters) besides scikit-learn's own messages; Optuna's INFO messages are
    muted during ``fit`` unless ``verbose >= 2``.
    """

    _parameter_constraints: dict = {
        **BaseSearchCV._parameter_constraints,
        "search_spaces": [dict, list],
        "n_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "sampler": [BaseSampler, None],
        "random_state": ["random_state"],
        "callbacks": [list, tuple, None],
    }

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
    ) -> None:
        self.search_spaces = search_spaces
        self.n_iter = n_iter
        self.sampler = sampler
        self.random_state = random_state
        self.callbacks = callbacks
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
        if not _skip_validation():
            self._validate_params()
        self._search_space = translate_search_spaces(self.search_spaces, self.estimator)
        for callback in self.callbacks or ():
            if not callable(callback):
                raise ValueError(
                    "CondBayesSearchCV: callbacks must be callables callback(study, trial); "
                    f"got {callback!r}."
                )
        with _quiet_optuna(self.verbose < 2):
            return super().fit(X, y, **params)

    # -- the search ----------------------------------------------------------------------
    def _make_sampler(self) -> tuple[BaseSampler, int | None]:
        random_state = self.random_state
        if random_state is None:
            seed = None
        elif isinstance(random_state, numbers.Integral):
            seed = int(random_state)
        else:
            seed = int(check_random_state(random_state).randint(2**31 - 1))
        if self.sampler is None:
            sampler = TreeGPSampler(
                seed=seed, objective_bound=self._score_bound(), **DEFAULT_SAMPLER_OPTIONS
            )
            return sampler, seed
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
        _warn_if_splits_vary(self._checked_cv_orig)
        sampler, seed = self._make_sampler()
        rng = np.random.default_rng(seed)
        study = optuna.create_study(direction="maximize", sampler=sampler)
        self.study_ = study
        batch_size = max(1, min(int(effective_n_jobs(self.n_jobs)), n_iter))
        if self.verbose > 0:
            print(
                f"[CondBayesSearchCV] {n_iter} candidates in batches of {batch_size}, "
                f"proposed by {type(sampler).__name__}"
            )
        search_ctx = None
        if callback_ctx is not None:
            search_ctx = callback_ctx.subcontext(
                task_name="search", max_subtasks=math.ceil(n_iter / batch_size)
            ).call_on_fit_task_begin(estimator=self)
        with _deferred_fit_failures(self) as fit_results:
            results = self._search(
                evaluate_candidates, study, space, n_iter, batch_size, rng, search_ctx
            )
        if fit_results is not None:
            assert _check_fit_failures is not None
            _check_fit_failures(fit_results, self.error_score)
        _warn_non_finite(results)
        if search_ctx is not None:
            search_ctx.call_on_fit_task_end(estimator=self)

    def _search(
        self,
        evaluate_candidates: Callable,
        study: Study,
        space: _SearchSpace,
        n_iter: int,
        batch_size: int,
        rng: np.random.Generator,
        search_ctx: Any,
    ) -> Mapping[str, Any]:
        """Ask, evaluate and tell batches until ``n_iter`` candidates (or a stop)."""
        seen: dict[tuple, int] = {}
        metric = None
        results: Mapping[str, Any] = {}
        n_done, stop = 0, False
        while n_done < n_iter and not stop:
            size_now = min(batch_size, n_iter - n_done)
            trials, candidates = [], []
            for _ in range(size_now):
                trial, params = self._ask_new(study, space, seen, rng)
                trials.append(trial)
                candidates.append(params)
            batch_ctx = None
            if search_ctx is not None:
                batch_ctx = search_ctx.subcontext(
                    task_name="batch",
                    max_subtasks=size_now * self.n_splits_,
                    sequential_subtasks=False,
                ).call_on_fit_task_begin(estimator=self)
            try:
                with warnings.catch_warnings():
                    warnings.filterwarnings("ignore", _NON_FINITE, UserWarning)
                    results = evaluate_candidates(candidates, callback_ctx=batch_ctx)
            except BaseException:
                for trial in trials:
                    study.tell(trial, state=TrialState.FAIL)
                raise
            metric = metric or self._objective_metric(results)
            scores = np.asarray(results[f"mean_test_{metric}"], dtype=float)
            for offset, trial in enumerate(trials):
                index = n_done + offset
                trial.set_user_attr("cv_results_index", index)
                frozen = _tell(study, trial, float(scores[index]))
                if self.verbose > 0:
                    self._report(index, n_iter, metric, scores[: index + 1], candidates[offset])
                stop = self._call_callbacks(study, frozen) or stop
            n_done += size_now
            if batch_ctx is not None:
                stop = bool(batch_ctx.call_on_fit_task_end(estimator=self)) or stop
        return results

    def _ask_new(
        self,
        study: Study,
        space: _SearchSpace,
        seen: dict[tuple, int],
        rng: np.random.Generator,
    ) -> tuple[Trial, dict[str, Any]]:
        """Ask a trial whose configuration was not evaluated (or asked) before.

        A trial that repeats one (the samplers' random startup trials can, in a discrete
        space) is told FAIL with the user attribute ``duplicate_of`` and asked again; after
        ``_MAX_DUPLICATE_ASKS`` repeats, an unused configuration of a finite space is
        enqueued, and an infinite space accepts the repeat with a warning.
        """
        for _ in range(_MAX_DUPLICATE_ASKS):
            trial = study.ask()
            params = space.suggest(trial)
            key = params_key(trial.params)
            if key not in seen:
                seen[key] = trial.number
                return trial, params
            trial.set_user_attr("duplicate_of", seen[key])
            study.tell(trial, state=TrialState.FAIL)
        unused = _unused_configuration(space, seen, rng)
        if unused is not None:
            study.enqueue_trial(unused)
        else:
            warnings.warn(
                f"CondBayesSearchCV: {_MAX_DUPLICATE_ASKS} proposals in a row repeated "
                "evaluated configurations; evaluating a repeat.",
                UserWarning,
                stacklevel=3,
            )
        trial = study.ask()
        params = space.suggest(trial)
        seen.setdefault(params_key(trial.params), trial.number)
        return trial, params

    def _objective_metric(self, results: Mapping[str, Any]) -> str:
        """The metric whose mean test score the sampler maximises."""
        if isinstance(self.refit, str) and f"mean_test_{self.refit}" in results:
            return self.refit
        if "mean_test_score" in results:
            return "score"
        return next(k[len("mean_test_") :] for k in results if k.startswith("mean_test_"))

    def _call_callbacks(self, study: Study, trial: FrozenTrial) -> bool:
        """Call the Optuna-style callbacks; ``True`` if one of them called ``study.stop()``."""
        if not self.callbacks:
            return False
        # study.stop() only works inside Study.optimize; let it work inside our callbacks too.
        local = getattr(study, "_thread_local", None)
        previous = getattr(local, "in_optimize_loop", False)
        study._stop_flag = False
        if local is not None:
            local.in_optimize_loop = True
        try:
            for callback in self.callbacks:
                callback(study, trial)
        finally:
            if local is not None:
                local.in_optimize_loop = previous
        return bool(getattr(study, "_stop_flag", False))

    def _report(
        self, index: int, n_iter: int, metric: str, scores: np.ndarray, params: dict
    ) -> None:
        finite = scores[np.isfinite(scores)]
        best = f"{finite.max():.4f}" if finite.size else "nan"
        shown = ", ".join(f"{k}={_short(v)}" for k, v in params.items())
        print(
            f"[CondBayesSearchCV {index + 1}/{n_iter}] mean_test_{metric}={scores[-1]:.4f} "
            f"(best {best}) {shown}"
        )


def _skip_validation() -> bool:
    from sklearn import get_config

    return bool(get_config().get("skip_parameter_validation", False))


def _short(value: Any) -> str:
    if _is_estimator(value):
        return type(value).__name__
    if isinstance(value, float):
        return f"{value:.4g}"
    return repr(value)


def _unused_configuration(
    space: _SearchSpace, seen: Mapping[tuple, int], rng: np.random.Generator
) -> dict[str, Any] | None:
    """A random configuration of a finite space that ``seen`` lacks (``None`` if none)."""
    if not math.isfinite(space.size()):
        return None
    unused = [
        c
        for c in itertools.islice(space.configurations(), _MAX_ENUMERATION)
        if params_key(c) not in seen
    ]
    return unused[int(rng.integers(len(unused)))] if unused else None


def _tell(study: Study, trial: Trial, score: float) -> FrozenTrial:
    """Tell the mean test score; a ``NaN`` (failed fit or scoring) becomes the worst finite
    score so far, so the sampler learns that the region is bad, or a FAIL while there is
    none."""
    if not math.isnan(score):
        return study.tell(trial, score)
    trial.set_user_attr("cv_failed", True)
    finite = [
        t.value
        for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        if t.value is not None and math.isfinite(t.value)
    ]
    if finite:
        return study.tell(trial, min(finite))
    return study.tell(trial, state=TrialState.FAIL)


def _warn_if_splits_vary(cv: Any) -> None:
    try:
        from sklearn.model_selection._split import _yields_constant_splits
    except ImportError:  # pragma: no cover - private helper of scikit-learn
        return
    if not _yields_constant_splits(cv):
        warnings.warn(
            f"CondBayesSearchCV: the splitter {cv!r} shuffles without a fixed random_state, "
            "so each batch of candidates is cross-validated on different splits; give it a "
            "random_state to compare candidates on the same splits.",
            UserWarning,
            stacklevel=3,
        )
