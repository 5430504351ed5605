"""A per-evaluation time limit, as hyperopt-sklearn's ``trial_timeout``: an evaluation that runs
longer than the limit is stopped and scored as a failed configuration.

Some configurations of the CASH space never finish in practice: ``SVC(max_iter=-1)`` on
unscaled breast-cancer features ran for more than 10 minutes in libsvm, which cannot be
interrupted from Python. So the evaluation runs in a child process (started by a
``forkserver``, which holds no torch or sampler state) and the child is killed at the limit.
The result is what a user with that budget per trial would see; which configurations reach a
limit depends a little on the machine and its load, so tasks only get one where it is needed,
with a wide margin (see ``cash.py``).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
from collections.abc import Callable
from typing import Any, TypeVar

Result = TypeVar("Result")

_CONTEXT = multiprocessing.get_context("forkserver")
#: Modules the fork server imports once, so that each child starts with them loaded instead of
#: importing them again (2-4 s per child on a busy 2-core machine): the CASH evaluations and
#: their libraries, and what ``search_cv_cash`` imports, which a child runs again as its main
#: module when it is the script (condsamplers and torch: imported, never run, in the fork
#: server). A module that is not installed is skipped.
PRELOAD = (
    "benchmarks.hpo.cash",
    "condsamplers.sklearn",
    "sklearn.ensemble",
    "sklearn.linear_model",
    "sklearn.neighbors",
    "sklearn.svm",
    "sklearn.tree",
    "xgboost",
)
_CONTEXT.set_forkserver_preload(list(PRELOAD))


def _evaluate_in_child(
    sink: multiprocessing.connection.Connection,
    evaluate_fn: Callable[[Any], Any],
    config: Any,
) -> None:
    try:
        outcome: tuple[bool, Any] = (True, evaluate_fn(config))
    except Exception as exc:  # raised again in the parent (e.g. a missing package)
        outcome = (False, exc)
    try:
        sink.send(outcome)
    except Exception:  # an exception that does not pickle
        sink.send((False, RuntimeError(repr(outcome[1]))))
    finally:
        sink.close()


def evaluate_within(
    evaluate_fn: Callable[[Any], Result], config: Any, seconds: float
) -> Result | None:
    """``evaluate_fn(config)`` run in a child process; ``None`` when it did not return within
    ``seconds`` (the child is then killed) or died without a result (a crash of native code).
    An exception ``evaluate_fn`` raises is raised here. ``evaluate_fn`` and ``config`` must
    pickle (a module-level function or a partial of one)."""
    if not seconds > 0:
        raise ValueError(f"seconds must be > 0, got {seconds!r}")
    source, sink = _CONTEXT.Pipe(duplex=False)
    child = _CONTEXT.Process(target=_evaluate_in_child, args=(sink, evaluate_fn, config))
    child.start()
    sink.close()
    try:
        if not source.poll(seconds):
            return None
        try:
            succeeded, payload = source.recv()
        except EOFError:  # the child died before it sent anything
            return None
        if not succeeded:
            raise payload
        return payload
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        source.close()
