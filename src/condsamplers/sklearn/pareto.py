"""The ``pareto_objectives`` option of ``CondBayesSearchCV``: a search for the Pareto front
of several scores (and the fit or score time) instead of the best of one.

Each objective is a column of ``cv_results_``: a scorer's mean test score, maximised
(``"score"`` with one scorer, a key of ``scoring`` with several), or ``"fit_time"`` /
``"score_time"``, the mean seconds of a fit / of scoring, minimised. The study is then an
Optuna multi-objective study and the sampler proposes by expected hypervolume improvement
(docs/multi_objective.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from optuna.study import StudyDirection

from condsamplers.hypervolume import pareto_mask

#: The times of ``cv_results_`` an objective may name, minimised.
TIMES = ("fit_time", "score_time")


def check_pareto_objectives(objectives: Any, resource: Any) -> list[str] | None:
    """``objectives`` as a list of at least two distinct names (``None`` passes through)."""
    if objectives is None:
        return None
    if isinstance(objectives, str) or not isinstance(objectives, Sequence):
        raise ValueError(
            "CondBayesSearchCV: pareto_objectives must be a list of at least two names "
            f"(scorers of scoring, 'fit_time', 'score_time'); got {objectives!r}."
        )
    names = list(objectives)
    if (
        len(names) < 2
        or len(set(names)) != len(names)
        or not all(isinstance(n, str) for n in names)
    ):
        raise ValueError(
            "CondBayesSearchCV: pareto_objectives needs at least two distinct names "
            f"(scorers of scoring, 'fit_time', 'score_time'); got {objectives!r}."
        )
    if resource is not None:
        raise ValueError(
            "CondBayesSearchCV: pareto_objectives does not combine with resource (Optuna's "
            "multi-objective studies take no intermediate values); set one of them to None."
        )
    return names


def directions(objectives: list[str]) -> list[StudyDirection]:
    """Times minimised, scores maximised."""
    return [
        StudyDirection.MINIMIZE if name in TIMES else StudyDirection.MAXIMIZE
        for name in objectives
    ]


def columns(objectives: list[str], results: Mapping[str, Any]) -> list[str]:
    """The ``cv_results_`` key of each objective; an unknown name is an error naming the
    scorers there are."""
    keys = []
    for name in objectives:
        key = f"mean_{name}" if name in TIMES else f"mean_test_{name}"
        if key not in results:
            scorers = sorted(k[len("mean_test_") :] for k in results if k.startswith("mean_test_"))
            raise ValueError(
                f"CondBayesSearchCV: pareto_objectives names {name!r}, which is neither a "
                f"scorer of scoring ({scorers}) nor one of {list(TIMES)}."
            )
        keys.append(key)
    return keys


def last_rows(objectives: list[str], results: Mapping[str, Any], count: int) -> np.ndarray:
    """The objectives' values ``(count, k)`` of the last ``count`` rows of ``cv_results_``."""
    return np.column_stack(
        [np.asarray(results[key][-count:], dtype=float) for key in columns(objectives, results)]
    )


def front_indices(objectives: list[str], results: Mapping[str, Any]) -> np.ndarray:
    """The rows of ``cv_results_`` on the Pareto front of the objectives (rows with a ``NaN``
    excluded), in row order."""
    keys = columns(objectives, results)
    values = np.column_stack([np.asarray(results[k], dtype=float) for k in keys])
    signs = np.array([1.0 if n in TIMES else -1.0 for n in objectives])
    rows = np.flatnonzero(~np.isnan(values).any(axis=1))
    if len(rows) == 0:
        return rows
    return rows[pareto_mask(values[rows] * signs)]
