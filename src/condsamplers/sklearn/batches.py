"""What evaluating one search's candidates in batches (one ``evaluate_candidates`` call per
batch, where ``RandomizedSearchCV`` makes one call) changes, and how ``CondBayesSearchCV``
keeps ``RandomizedSearchCV``'s behaviour: fit failures checked once per search, the warning
about non-finite scores given once, a failed (``NaN``) score told to the study, and a warning
when the splits differ from batch to batch.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, Trial, TrialState
from sklearn.model_selection import _search as _sklearn_search

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


def _tell(study: Study, trial: Trial, values: float | np.ndarray) -> FrozenTrial:
    """Tell the mean test score (or, in a multi-objective study, each objective's value); a
    ``NaN`` (failed fit or scoring) becomes that objective's worst finite value so far, so the
    sampler learns that the region is bad, or the trial is a FAIL while an objective has
    none."""
    values = np.atleast_1d(np.asarray(values, dtype=float))
    if not np.isnan(values).any():
        return study.tell(trial, [float(v) for v in values])
    trial.set_user_attr("cv_failed", True)
    done = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    filled = []
    for j, (value, direction) in enumerate(zip(values, study.directions, strict=True)):
        if not math.isnan(value):
            filled.append(float(value))
            continue
        finite = [t.values[j] for t in done if math.isfinite(t.values[j])]
        if not finite:
            return study.tell(trial, state=TrialState.FAIL)
        filled.append(max(finite) if direction == StudyDirection.MINIMIZE else min(finite))
    return study.tell(trial, filled)


def _splits_are_constant(cv: Any) -> bool:
    """Whether ``cv`` gives the same splits at every call, from its public parameters: it does
    not shuffle (``shuffle=False``), or its ``random_state`` is an integer. A splitter that is
    random by nature (``ShuffleSplit``) has no ``shuffle`` and counts as shuffling; one without
    a ``random_state`` (a list of splits, ``TimeSeriesSplit``) as constant."""
    shuffle = getattr(cv, "shuffle", True)
    random_state = getattr(cv, "random_state", 0)
    return not shuffle or isinstance(random_state, numbers.Integral)


def _warn_if_splits_vary(cv: Any) -> None:
    if not _splits_are_constant(cv):
        warnings.warn(
            f"CondBayesSearchCV: the splitter {cv!r} shuffles without a fixed random_state, "
            "so each batch of candidates is cross-validated on different splits; give it a "
            "random_state to compare candidates on the same splits.",
            UserWarning,
            stacklevel=3,
        )
