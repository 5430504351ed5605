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
