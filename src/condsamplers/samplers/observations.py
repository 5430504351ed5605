"""A study's trials as the pipeline's :class:`~condsamplers.pipeline.Observations`: the
objective values as a finite minimisation target (optionally the log of their gap to a known
bound), the RUNNING trials' recorded proposals as pending points, and the constraint values.
Nothing here proposes; :mod:`condsamplers.samplers.base` calls it at each step."""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, TrialState

from condsamplers.log import get_logger
from condsamplers.pipeline import Observations
from condsamplers.samplers.optuna_storage import CONSTRAINTS_ATTR
from condsamplers.samplers.proposals import encode_pending
from condsamplers.space import ConditionalSpace, step_fidelity
from condsamplers.warping import log_regret

_logger = get_logger(__name__)

#: A logging call ``warn(message, count)``.
Warn = Callable[[str, int], None]
#: Per study, the warnings already logged.
_warned: weakref.WeakKeyDictionary[Study, set[str]] = weakref.WeakKeyDictionary()


def _warner(study: Study) -> Warn:
    """A warning that is logged once per study and cause (with the count of trials it
    concerns when first seen), not at every suggestion nor at every new such trial."""
    logged = _warned.setdefault(study, set())

    def warn(message: str, count: int) -> None:
        if count > 0 and message not in logged:
            logged.add(message)
            _logger.warning(message, count)

    return warn


#: Relative tolerance of ``objective_bound``: a value beyond it by no more is rounding.
_BOUND_ROUNDING = 1e-12


#: Rows a COMPLETE trial gives the model at most when the study has pruned trials: its final
#: value and values it reported at earlier steps, spread over its curve on a log scale (the
#: shape of the learning curves). A PRUNED trial gives one row, its last reported value: under
#: Hyperband most trials are pruned, and their earlier values would multiply the model's rows
#: (and its cost, cubic in a leaf's rows) for little.
MAX_ROWS_PER_TRIAL = 4


#: The notice for trials without parameters (:func:`evaluated_trials`).
PARAMETERLESS_NOTICE = (
    "%d finished trial(s) without parameters (the objective returned or was pruned before "
    "its first suggest_*, or a trial was added without params) are left out of the model: "
    "they hold no configuration to learn from or to propose again."
)


def evaluated_trials(study: Study, intermediate_values: bool = True) -> list[FrozenTrial]:
    """The trials the model learns from: the COMPLETE ones and, with ``intermediate_values``,
    the PRUNED ones that reported a value (``trial.report``); those without parameters are
    left out, with a notice (once per study)."""
    states = (
        (TrialState.COMPLETE, TrialState.PRUNED) if intermediate_values else (TrialState.COMPLETE,)
    )
    trials = study.get_trials(deepcopy=False, states=states)
    finished = [t for t in trials if t.state == TrialState.COMPLETE or _reported(t)]
    with_parameters = [t for t in finished if t.params]
    if len(with_parameters) < len(finished):
        _warner(study)(PARAMETERLESS_NOTICE, len(finished) - len(with_parameters))
    return with_parameters


def _reported(trial: FrozenTrial) -> dict[int, float]:
    """The trial's finite intermediate values by step."""
    return {s: v for s, v in trial.intermediate_values.items() if np.isfinite(v)}


def _curve_steps(steps: list[int], n: int) -> list[int]:
    """At most ``n`` of the sorted ``steps``, spread on a log scale, the last one included."""
    if len(steps) <= n:
        return steps
    picks = np.unique(np.round(np.geomspace(1, len(steps), n)).astype(int) - 1)
    return [steps[i] for i in picks]


class Rows(NamedTuple):
    """The model's rows (:func:`observation_rows`)."""

    #: for each row, the position of its trial in the trials given.
    positions: list[int]
    #: its value.
    values: np.ndarray
    #: its fidelity (:func:`condsamplers.space.step_fidelity`); ``None``: all at the highest.
    fidelity: np.ndarray | None
    #: the share of its trial's training time the row took (its step over the trial's last).
    time_shares: np.ndarray


def observation_rows(trials: list[FrozenTrial]) -> Rows:
    """The model's rows from COMPLETE and PRUNED ``trials``; the fidelities are ``None`` when
    no trial is PRUNED (one row per trial, its value).

    With PRUNED trials, a COMPLETE trial gives its final value at fidelity 1 and up to
    ``MAX_ROWS_PER_TRIAL - 1`` values it reported before its last step; a PRUNED trial gives
    its last reported value at that step's fidelity. The highest step reported in the study is
    fidelity 1.
    """
    if all(t.state == TrialState.COMPLETE for t in trials):
        values = np.array([t.values for t in trials], dtype=float).reshape(len(trials), -1)
        if values.shape[1] == 1:
            values = values[:, 0]
        return Rows(list(range(len(trials))), values, None, np.ones(len(trials)))
    curves = [_reported(t) for t in trials]
    max_step = max((max(c) for c in curves if c), default=0)
    positions, values, steps, shares = [], [], [], []
    for i, (trial, curve) in enumerate(zip(trials, curves, strict=True)):
        reported = sorted(curve)
        last = reported[-1] if reported else max_step
        if trial.state == TrialState.COMPLETE:
            earlier = _curve_steps(reported[:-1], MAX_ROWS_PER_TRIAL - 1)
            rows = [(s, curve[s], s / last) for s in earlier] + [(max_step, trial.value, 1.0)]
        else:
            rows = [(last, curve[last], 1.0)]
        for step, value, share in rows:
            positions.append(i)
            values.append(value)
            steps.append(step)
            shares.append(share)
    fidelity = step_fidelity(np.array(steps), max_step)
    return Rows(positions, np.array(values, dtype=float), fidelity, np.array(shares))


#: Durations are floored at this many seconds before their log is taken.
MIN_SECONDS = 1e-3


def log_durations(trials: list[FrozenTrial], time_shares: np.ndarray) -> np.ndarray:
    """``log(max(share * duration, MIN_SECONDS))`` of each row's trial (``datetime_complete -
    datetime_start``; a trial without both counts as ``MIN_SECONDS``): the cost each row's
    configuration took to reach its value, steps taken to cost the same."""
    seconds = np.array(
        [t.duration.total_seconds() if t.duration is not None else 0.0 for t in trials]
    )
    return np.log(np.maximum(seconds * time_shares, MIN_SECONDS))


def study_observations(
    study: Study,
    space: ConditionalSpace,
    evaluated: list[FrozenTrial],
    trial: FrozenTrial,
    objective_bound: float | None = None,
    owner: str = "sampler",
    cost_aware: bool = False,
) -> Observations | None:
    """What the model of ``trial``'s step sees: the ``evaluated`` trials (COMPLETE, and PRUNED
    ones with their intermediate values at their fidelities, :func:`observation_rows`)
    encoded on ``space`` with their values to minimise (the log of their gap to
    ``objective_bound`` when given, :func:`gap_to_bound`), every other RUNNING trial's
    recorded proposal as a pending point, the constraint values, and with ``cost_aware`` the
    log of each row's duration (:func:`log_durations`). ``None`` if no trial has a finite
    value. ``owner`` names the sampler in errors."""
    X_trials, active_trials, kept = space.encode_trials(evaluated)
    encoded = [evaluated[i] for i in kept]
    positions, values, fidelity, time_shares = observation_rows(encoded)
    X, active = X_trials[positions], active_trials[positions]
    rows = [encoded[i] for i in positions]
    warn = _warner(study)
    y = objective_minimisation_values(values, study.directions, warn)
    if y is None:
        return None
    if objective_bound is not None and y.ndim == 2:
        raise ValueError(
            f"{owner}: objective_bound={objective_bound!r} applies to single-objective "
            f"studies; this one has {y.shape[1]} objectives. Pass objective_bound=None."
        )
    if objective_bound is not None:
        y = gap_to_bound(y, study.direction, rows, objective_bound, owner)
    pending = [
        encoded
        for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        if t.number != trial.number and (encoded := encode_pending(space, t)) is not None
    ]
    d = space.n_features
    return Observations(
        X=X,
        active=active,
        y=y,
        X_pending=np.array([p[0] for p in pending]).reshape(-1, d),
        active_pending=np.array([p[1] for p in pending], dtype=bool).reshape(-1, d),
        constraints=constraint_values(rows, warn),
        fidelity=fidelity,
        log_cost=log_durations(rows, time_shares) if cost_aware else None,
    )


def gap_to_bound(
    y: np.ndarray,
    direction: StudyDirection,
    trials: list[FrozenTrial],
    bound: float,
    owner: str = "sampler",
) -> np.ndarray:
    """``y`` (minimisation values of ``trials``) as the log of their gap to ``bound`` (the
    sampler's ``objective_bound``; :func:`condsamplers.warping.log_regret`); a trial beyond
    the bound is an error that names it.

    A value beyond the bound by rounding only (a relative ``1e-12``: scikit-learn's average
    precision of a perfect ranking can be ``1.0000000000000002``) counts as at the bound."""
    minimise = direction == StudyDirection.MINIMIZE
    target = bound if minimise else -bound
    rounding = _BOUND_ROUNDING * max(1.0, abs(bound))
    y = np.where((y < target) & (y >= target - rounding), target, y)
    beyond = np.flatnonzero(y < target)
    if len(beyond):
        first = trials[int(beyond[0])]
        value = float(y[beyond[0]] if minimise else -y[beyond[0]])
        raise ValueError(
            f"{owner}: objective_bound={bound!r}, but trial {first.number} "
            f"has the value {value!r}, {'below' if minimise else 'above'} it "
            f"({len(beyond)} value(s) in all). objective_bound must be a value that no "
            "trial can beat (1.0 for an accuracy maximised, 0.0 for a loss minimised); "
            "pass None if there is none."
        )
    return log_regret(y, target)


def objective_minimisation_values(
    values: np.ndarray, directions: list[StudyDirection], warn: Warn | None = None
) -> np.ndarray | None:
    """:func:`finite_minimisation_values` of one objective (``values`` ``(n,)``) or of each
    column of ``(n, k)`` values with its own direction; ``None`` if a column has no finite
    value."""
    if values.ndim == 1:
        return finite_minimisation_values(values, directions[0], warn)
    columns = [
        finite_minimisation_values(values[:, j], direction, warn)
        for j, direction in enumerate(directions)
    ]
    if any(column is None for column in columns):
        return None
    return np.column_stack(columns)


def finite_minimisation_values(
    values: np.ndarray, direction: StudyDirection, warn: Warn | None = None
) -> np.ndarray | None:
    """Objective values as a finite minimisation target; ``None`` if none is finite.

    +-inf are clipped to the worst / best finite value and a warning is logged (through
    ``warn`` when given): they are real observations (say, a diverged training run) that must
    not poison the model.
    """
    y = -values if direction == StudyDirection.MAXIMIZE else values.copy()
    finite = np.isfinite(y)
    if not finite.any():
        return None
    if not finite.all():
        (warn or _logger.warning)(
            "%d trial(s) have an infinite objective value; the model sees them as the "
            "worst (or best) finite value observed.",
            int((~finite).sum()),
        )
        y = np.clip(
            np.nan_to_num(y, posinf=np.inf, neginf=-np.inf), y[finite].min(), y[finite].max()
        )
    return y


def trial_constraints(trial: FrozenTrial) -> dict[str, float]:
    """A trial's constraint values by name, on every supported Optuna version: Optuna 5's
    ``FrozenTrial.constraints`` where it exists; otherwise (Optuna 4) read from the trial's
    ``system_attrs`` as Optuna 4 stores them, a sequence named ``"0"``, ``"1"``, ..."""
    constraints = getattr(trial, "constraints", None)
    if isinstance(constraints, dict):
        return constraints
    attrs = trial.system_attrs
    found = {str(i): float(c) for i, c in enumerate(attrs.get(CONSTRAINTS_ATTR) or ())}
    prefix = f"{CONSTRAINTS_ATTR}:"
    found.update({k[len(prefix) :]: float(v) for k, v in attrs.items() if k.startswith(prefix)})
    return found


def constraint_values(trials: list[FrozenTrial], warn: Warn | None = None) -> np.ndarray | None:
    """``(n, m)`` constraint values of ``trials`` (``trial.constraints``: ``set_constraint``
    and ``constraints_func`` alike), columns in sorted name order, ``NaN`` where a trial did
    not report one; ``None`` if no trial reported any. Infinite values are clipped to the
    largest finite magnitude of their column (or +-1), with a warning."""
    reported = [trial_constraints(t) for t in trials]
    names = sorted({name for c in reported for name in c})
    if not names:
        return None
    values = np.array([[c.get(name, np.nan) for name in names] for c in reported], dtype=float)
    infinite = np.isinf(values)
    if infinite.any():
        (warn or _logger.warning)(
            "%d constraint value(s) are infinite; the constraint model sees them clipped to "
            "the largest finite magnitude of their constraint.",
            int(infinite.sum()),
        )
        finite = np.where(np.isfinite(values), np.abs(values), 0.0)
        bound = np.maximum(finite.max(axis=0), 1.0)
        values = np.where(infinite, np.sign(values) * bound, values)
    return values


def _best_first_key(y: np.ndarray) -> np.ndarray:
    """A sort key, lower first: the value, or with several objectives a row's best rank
    among the objectives (the best rows of every objective come first)."""
    if y.ndim == 1:
        return y
    ranks = np.argsort(np.argsort(y, axis=0, kind="stable"), axis=0, kind="stable")
    return ranks.min(axis=1)


def subsample_observations(data: Observations, cap: int, rng: np.random.Generator) -> Observations:
    """At most ``cap`` observations of ``data``: the best ``cap // 2`` by value (with several
    objectives, by the best rank of a row among them), and a uniform
    random sample of the others for the rest, so that the incumbent's region keeps all its
    points and the model still sees the whole space (pending points and constraint rows
    follow). ``data`` itself if it has no more than ``cap``."""
    n = len(data.y)
    if n <= cap:
        return data
    order = np.argsort(_best_first_key(data.y), kind="stable")
    best, rest = order[: cap // 2], order[cap // 2 :]
    keep = np.sort(np.concatenate([best, rng.choice(rest, size=cap - len(best), replace=False)]))
    return dataclasses.replace(
        data,
        X=data.X[keep],
        active=data.active[keep],
        y=data.y[keep],
        constraints=None if data.constraints is None else data.constraints[keep],
        fidelity=None if data.fidelity is None else data.fidelity[keep],
        log_cost=None if data.log_cost is None else data.log_cost[keep],
    )
