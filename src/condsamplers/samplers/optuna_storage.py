"""The one place where condsamplers reaches past Optuna's public API.

A sampler must write on a trial it is sampling (its recorded proposal, the values of
``constraints_func``), and Optuna gives samplers no public way to do it: its own samplers
write through the study's storage, as these functions do. ``study._storage`` and
``FrozenTrial._trial_id`` have kept their names and meaning from Optuna 3 to 5; keeping every
such access here means a future change is mended in one file (and caught by the tests, which
run on the lowest and the newest supported Optuna).
"""

from __future__ import annotations

import logging
import math
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import optuna
import sqlalchemy.exc
from optuna.exceptions import ExperimentalWarning
from optuna.storages import BaseStorage
from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

T = TypeVar("T")

#: Errors of a storage that may pass: a locked SQLite file, a dropped database connection, a
#: journal file briefly unavailable (SQLAlchemy is a dependency of Optuna).
TRANSIENT_STORAGE_ERRORS: tuple[type[BaseException], ...] = (
    sqlalchemy.exc.OperationalError,
    sqlalchemy.exc.InterfaceError,
    sqlalchemy.exc.DisconnectionError,
    OSError,
)
#: Seconds to wait before each retry of a step that met a transient storage error.
RETRY_DELAYS = (0.1, 0.5, 2.0)

#: Where Optuna keeps the values of ``constraints_func`` (a sequence) in a trial's
#: ``system_attrs``; ``trial.set_constraint`` (Optuna 5) uses ``"constraints:<name>"`` keys.
CONSTRAINTS_ATTR = "constraints"


def retrying_storage_errors(
    step: Callable[[], T | None], what: str, logger: logging.Logger
) -> T | None:
    """Run ``step``; on a transient storage error (:data:`TRANSIENT_STORAGE_ERRORS`) run it again
    after each of :data:`RETRY_DELAYS`. Returns its result, or ``None`` once every retry failed,
    the reason logged as a warning naming ``what`` (the caller falls back, and the trial is not
    lost). Any other error is raised as it is."""
    for delay in (*RETRY_DELAYS, None):
        try:
            return step()
        except TRANSIENT_STORAGE_ERRORS as error:
            if delay is None:
                logger.warning(
                    "%s failed on a storage error after %d retries (%s: %s); this trial is "
                    "sampled by the independent sampler.",
                    what,
                    len(RETRY_DELAYS),
                    type(error).__name__,
                    str(error).splitlines()[0] if str(error) else "",
                )
                return None
            logger.info("%s: storage error (%s), retrying in %.1f s.", what, error, delay)
            time.sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover


def set_trial_system_attr(study: Study, trial: FrozenTrial, key: str, value: Any) -> None:
    """Write ``value`` under ``key`` in the trial's ``system_attrs``, in the study's storage
    (seen by every worker on that storage)."""
    study._storage.set_trial_system_attr(trial._trial_id, key, value)


def fail_stale_trials(study: Study) -> None:
    """Where the study's storage has a heartbeat (``heartbeat_interval`` set), fail the RUNNING
    trials whose heartbeat stopped for longer than its grace period (a killed worker's), with
    Optuna's public :func:`optuna.storages.fail_stale_trials`: ``study.optimize`` does it
    before each trial, an ask-and-tell loop does not, and a dead worker's recorded proposal
    would stay a pending point of every later step. Nothing without a heartbeat: a RUNNING
    trial may then train for hours, and no one can tell it from a dead one."""
    storage: BaseStorage = study._storage
    interval = getattr(storage, "get_heartbeat_interval", None)
    if interval is None or interval() is None:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExperimentalWarning)
        optuna.storages.fail_stale_trials(study)


def study_key(study: Study) -> tuple[int, int]:
    """Which study a step belongs to (its storage object and its id in that storage), so that
    one sampler shared by several studies never reuses one study's tree or fit for another."""
    return (id(study._storage), study._study_id)


#: Whole studies built for the views pruners give samplers, by :func:`study_key` (a few).
_whole_studies: dict[tuple[int, int], Study] = {}
_whole_studies_lock = threading.Lock()
_MAX_WHOLE_STUDIES = 8


def whole_study(study: Study) -> Study:
    """The whole study behind ``study``. Optuna's ``HyperbandPruner`` gives samplers a view of
    the study that shows only the trials of the current trial's bracket, so that TPE models
    each bracket on its own; condsamplers' model reads each trial's fidelity, so it learns
    from every bracket. ``study`` itself when it is an ``optuna.study.Study``; otherwise the
    same study (name and storage) as a ``Study``."""
    if type(study) is Study:
        return study
    key = study_key(study)
    with _whole_studies_lock:
        whole = _whole_studies.get(key)
        if whole is None:
            whole = Study(
                study_name=study.study_name,
                storage=study._storage,
                sampler=study.sampler,
                pruner=study.pruner,
            )
            if len(_whole_studies) >= _MAX_WHOLE_STUDIES:
                _whole_studies.pop(next(iter(_whole_studies)))
            _whole_studies[key] = whole
        return whole


def store_constraints(
    constraints_func: Callable[[FrozenTrial], Sequence[float]],
    study: Study,
    trial: FrozenTrial,
    state: TrialState,
) -> None:
    """Call ``constraints_func`` on a finished (COMPLETE or PRUNED) trial and store its values
    as Optuna's own samplers do (``system_attrs["constraints"]``), so that Optuna's
    feasibility-aware tools (``study.best_trials``, plots) and every worker see them.

    Raises:
        ValueError: a value is NaN (as Optuna's samplers raise); nothing is stored then.
    """
    if state not in (TrialState.COMPLETE, TrialState.PRUNED):
        return
    values = tuple(float(c) for c in constraints_func(trial))
    if any(math.isnan(c) for c in values):
        raise ValueError(
            f"constraints_func returned NaN for trial {trial.number} ({values}); constraint "
            "values must be numbers (<= 0 means feasible)."
        )
    set_trial_system_attr(study, trial, CONSTRAINTS_ATTR, values)
