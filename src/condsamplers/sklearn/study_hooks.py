"""How ``CondBayesSearchCV`` drives its Optuna study besides asking and telling: Optuna's
logging muted during a fit, Optuna-style callbacks called after each trial is told, and the
line printed per candidate with ``verbose``."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import optuna
from optuna.storages import BaseStorage
from optuna.study import Study
from optuna.trial import FrozenTrial, Trial

from condsamplers.sklearn.search_space import _is_estimator

# -- Optuna's logging ------------------------------------------------------------------------
_quiet_lock = threading.Lock()
_quiet_depth = 0
_quiet_saved = optuna.logging.WARNING


@contextlib.contextmanager
def quiet_optuna(active: bool) -> Iterator[None]:
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


class CallbackStudy(Study):
    """The search's study as its Optuna-style callbacks see it: the same study (name, storage,
    sampler, pruner), so a callback reads and writes the search's own trials, whose
    :meth:`stop` asks the search to stop after the batch under way. Optuna's ``Study.stop``
    works only inside ``Study.optimize``, which the search does not call."""

    def __init__(self, study: Study, storage: BaseStorage) -> None:
        super().__init__(
            study_name=study.study_name,
            storage=storage,
            sampler=study.sampler,
            pruner=study.pruner,
        )
        self.stop_requested = False

    def stop(self) -> None:
        """End the search after the current batch (Optuna's ``Study.stop`` for a search)."""
        self.stop_requested = True


def call_callbacks(callbacks: Any, study: CallbackStudy | None, trial: FrozenTrial) -> bool:
    """Call the Optuna-style callbacks; ``True`` if one of them called ``study.stop()``."""
    if not callbacks or study is None:
        return False
    study.stop_requested = False
    for callback in callbacks:
        callback(study, trial)
    return study.stop_requested


def print_candidate(
    results: Mapping[str, Any],
    metric: str,
    trial: Trial,
    ordinal: int,
    n_iter: int,
    params: dict,
) -> None:
    """Print one line for a candidate that finished: its score and the best so far."""
    index = int(trial.user_attrs["cv_results_index"])
    scores = np.asarray(results[f"mean_test_{metric}"][: index + 1], dtype=float)
    finite = scores[np.isfinite(scores)]
    best = f"{finite.max():.4f}" if finite.size else "nan"
    shown = ", ".join(f"{k}={_short(v)}" for k, v in params.items())
    print(
        f"[CondBayesSearchCV {ordinal}/{n_iter}] "
        f"mean_test_{metric}={scores[-1]:.4f} (best {best}) {shown}"
    )


def _short(value: Any) -> str:
    if _is_estimator(value):
        return type(value).__name__
    if isinstance(value, float):
        return f"{value:.4g}"
    return repr(value)
