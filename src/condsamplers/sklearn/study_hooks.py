"""How ``CondBayesSearchCV`` drives its Optuna study besides asking and telling: Optuna's
logging muted during a fit, and Optuna-style callbacks called after each trial is told."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import optuna
from optuna.study import Study
from optuna.trial import FrozenTrial

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


def call_callbacks(callbacks: Any, study: Study, trial: FrozenTrial) -> bool:
    """Call the Optuna-style callbacks; ``True`` if one of them called ``study.stop()``."""
    if not callbacks:
        return False
    # study.stop() only works inside Study.optimize; let it work inside our callbacks too.
    local = getattr(study, "_thread_local", None)
    previous = getattr(local, "in_optimize_loop", False)
    study._stop_flag = False
    if local is not None:
        local.in_optimize_loop = True
    try:
        for callback in callbacks:
            callback(study, trial)
    finally:
        if local is not None:
            local.in_optimize_loop = previous
    return bool(getattr(study, "_stop_flag", False))
