"""Fuzzed inputs: objective values, spaces and data a user may hand the samplers and the
regressors. Each case ends in documented handling (the study goes on, model-based) or in a
clear error naming what to change; none crashes deep in linear algebra or proposes garbage.
The table of cases and outcomes is docs/limitations.md, "Unusual inputs"."""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Callable

import numpy as np
import optuna
import pytest
from optuna.study import StudyDirection
from optuna.trial import TrialState

from condsamplers import TreeGPSampler
from condsamplers.samplers.observations import finite_minimisation_values
from condsamplers.samplers.proposals import read_proposal
from condsamplers.sklearn import (
    BOHAMIANNRegressor,
    CondGPRegressor,
    DNGORegressor,
    TreeGPRegressor,
)

optuna.logging.set_verbosity(optuna.logging.WARNING)

N_TRIALS = 10


def sampler(**kwargs) -> TreeGPSampler:
    fast = dict(n_startup_trials=4, n_candidates=64, n_local_search=1, n_restarts=0)
    return TreeGPSampler(seed=0, **fast, **kwargs)


def run(objective: Callable, n_trials: int = N_TRIALS, **kwargs) -> optuna.Study:
    study = optuna.create_study(sampler=sampler(**kwargs))
    study.optimize(objective, n_trials=n_trials, catch=(RuntimeError,))
    return study


def model_based(study: optuna.Study) -> int:
    """Trials proposed by the model (a recorded whole proposal), not by the fallback."""
    return sum(read_proposal(t) is not None for t in study.trials)


def quadratic(value: Callable[[int, float], float | None]) -> Callable:
    def objective(trial: optuna.Trial) -> float | None:
        return value(trial.number, trial.suggest_float("x", -1.0, 1.0))

    return objective


@pytest.mark.parametrize(
    ("case", "value", "failed"),
    [
        ("NaN values", lambda i, x: math.nan if i % 3 == 0 else x * x, 4),
        ("None values", lambda i, x: None if i % 3 == 0 else x * x, 4),
        ("+inf values", lambda i, x: math.inf if i % 3 == 0 else x * x, 0),
        ("-inf values", lambda i, x: -math.inf if i == 5 else x * x, 0),
        ("values near 1e300", lambda i, x: 1e300 * (1.0 + x * x), 0),
        ("values near 1e-300", lambda i, x: 1e-300 * (1.0 + x * x), 0),
        ("values of 1e-15", lambda i, x: 1e-15 * x * x, 0),
        ("a constant value", lambda i, x: 3.0, 0),
    ],
)
def test_unusual_objective_values_leave_the_study_model_based(
    case: str, value: Callable, failed: int
) -> None:
    study = run(quadratic(value))
    states = [t.state for t in study.trials]
    assert states.count(TrialState.FAIL) == failed, case  # Optuna fails NaN / None itself
    assert len(study.trials) == N_TRIALS
    assert model_based(study) >= N_TRIALS - 4 - failed, case


@pytest.mark.parametrize(
    ("direction", "expected"),
    [
        (StudyDirection.MINIMIZE, [1.0, 3.0, 3.0, 1.0, 2.0]),
        (StudyDirection.MAXIMIZE, [-1.0, -3.0, -3.0, -1.0, -2.0]),  # negated: minimised
    ],
)
def test_the_model_sees_infinite_values_as_the_worst_or_best_finite_one(
    direction: StudyDirection, expected: list[float]
) -> None:
    """+inf and -inf become the worst and best finite value observed (as values to minimise),
    with one warning that says so."""
    values = np.array([1.0, math.inf, 3.0, -math.inf, 2.0])
    said: list[str] = []
    y = finite_minimisation_values(values, direction, lambda text, *args: said.append(text))
    np.testing.assert_array_equal(y, expected)
    assert len(said) == 1 and "infinite objective value" in said[0]


def test_a_minus_inf_value_is_the_studys_best_and_the_study_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Optuna reports the -inf as the best value; the model sees the best finite value (one
    warning), and every trial after the startup is model-based."""
    with caplog.at_level(logging.WARNING, logger="optuna.condsamplers"):
        study = run(quadratic(lambda i, x: -math.inf if i == 5 else x * x))
    assert study.best_value == -math.inf
    assert caplog.text.count("infinite objective value") == 1
    assert model_based(study) == N_TRIALS - 4


def test_extreme_scales_give_the_proposals_of_unit_values() -> None:
    """Values of 1e160 or 1e300 (whose squares overflow) or 1e-160 and 1e-300 (underflow) are
    modelled as the same values at scale 1 would be: the same suggestions (to rounding), not a
    flat model, and no overflow warning."""
    scales = (1e300, 1e160, 1e-160, 1e-300)
    unit = [t.params["x"] for t in run(quadratic(lambda i, x: 1.0 + x * x)).trials]
    for scale in scales:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            study = run(quadratic(lambda i, x, s=scale: s * (1.0 + x * x)))
        assert np.allclose([t.params["x"] for t in study.trials], unit, atol=1e-6), scale


def test_an_objective_that_raises_fails_its_trials_only() -> None:
    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", -1.0, 1.0)
        if trial.number % 3 == 0:
            raise RuntimeError("the training crashed")
        return x * x

    study = run(objective)
    assert [t.state for t in study.trials].count(TrialState.FAIL) == 4
    assert model_based(study) >= 2


@pytest.mark.parametrize(
    "make", [sampler, optuna.samplers.TPESampler, optuna.samplers.RandomSampler]
)
def test_one_name_of_two_distribution_kinds_is_refused_by_optuna(make: Callable) -> None:
    """Optuna's storage refuses two distribution kinds under one name in a study, whatever the
    sampler (TPE and random search alike): the fix is one name per branch."""

    def objective(trial: optuna.Trial) -> float:
        if trial.suggest_categorical("branch", ["a", "b"]) == "a":
            return trial.suggest_float("p", 0.0, 1.0)
        return {"u": 0.1, "v": 0.5}[trial.suggest_categorical("p", ["u", "v"])]

    study = optuna.create_study(sampler=make())
    with pytest.raises(ValueError, match="different distribution kind"):
        study.optimize(objective, n_trials=N_TRIALS)


@pytest.mark.parametrize(
    ("case", "objective"),
    [
        (
            "a 50-choice categorical",
            lambda t: int(t.suggest_categorical("c", [f"c{i}" for i in range(50)])[1:]) % 7,
        ),
        ("an integer range of 10^9", lambda t: abs(t.suggest_int("i", 0, 10**9) - 123456789)),
        (
            "a log range 1e-12..1e12",
            lambda t: abs(math.log10(t.suggest_float("x", 1e-12, 1e12, log=True)) - 3.0),
        ),
        (
            "mixed-type categorical choices",
            lambda t: (
                {None: 1.0, 1: 0.5, "a": 0.2, 2.5: 0.7}[
                    t.suggest_categorical("m", [None, 1, "a", 2.5])
                ]
                + (t.suggest_float("x", 0.0, 1.0) - 0.3) ** 2
            ),
        ),
        (
            "32 nested dimensions",
            lambda t: (
                sum((t.suggest_float(f"d{i}", 0.0, 1.0) - 0.5) ** 2 for i in range(32))
                if t.suggest_categorical("deep", [True, False])
                else 1.0 + t.suggest_float("y", 0.0, 1.0)
            ),
        ),
    ],
)
def test_unusual_spaces_are_searched_model_based(case: str, objective: Callable) -> None:
    study = run(objective, n_trials=12)
    assert all(t.state == TrialState.COMPLETE for t in study.trials), case
    assert model_based(study) >= 6, case


@pytest.mark.parametrize(("low", "high"), [(0.0, 10.0), (2.0, 3.0)], ids=["wider", "disjoint"])
def test_a_range_that_changes_mid_study_is_respected(low: float, high: float) -> None:
    """After the change the model's own proposals (not only what Optuna keeps of them) lie in
    the new range, wider or disjoint from the old one."""

    def objective(trial: optuna.Trial) -> float:
        bounds = (0.0, 1.0) if trial.number < 7 else (low, high)
        return (trial.suggest_float("x", *bounds) - 0.3) ** 2

    study = run(objective, n_trials=14)
    assert all(0.0 <= t.params["x"] <= 1.0 for t in study.trials[:7])
    later = [read_proposal(t) for t in study.trials[8:]]
    assert all(p is not None and low <= p.params["x"] <= high for p in later)
    assert all(low <= t.params["x"] <= high for t in study.trials[7:])


def test_a_constraint_function_returning_nan_is_an_error_naming_it() -> None:
    """As Optuna's own samplers (constraint values must be numbers)."""

    def objective(trial: optuna.Trial) -> float:
        return trial.suggest_float("x", -1.0, 1.0) ** 2

    with pytest.raises(ValueError, match="constraints_func returned NaN"):
        run(objective, constraints_func=lambda trial: [math.nan])


# -- the regressors ----------------------------------------------------------------------
REGRESSORS = [CondGPRegressor, TreeGPRegressor, DNGORegressor, BOHAMIANNRegressor]
FAST = {DNGORegressor: {"n_epochs": 20}, BOHAMIANNRegressor: {"n_burn_in": 20, "n_samples": 5}}


def regressor(cls: type) -> object:
    return cls(**FAST.get(cls, {}))


def data() -> tuple[np.ndarray, np.ndarray]:
    X = np.random.default_rng(0).uniform(size=(20, 3))
    return X, X.sum(axis=1)


@pytest.mark.parametrize("cls", REGRESSORS)
@pytest.mark.parametrize(
    ("case", "change", "message"),
    [
        (
            "NaN in y",
            lambda X, y: (X, np.where(np.arange(len(y)) == 2, np.nan, y)),
            "y contains NaN",
        ),
        ("inf in X", lambda X, y: (np.where(X > 0.95, np.inf, X), y), "contains infinity"),
        ("strings", lambda X, y: (np.full(X.shape, "a"), y), "numeric"),
    ],
)
def test_regressors_refuse_bad_data_with_scikit_learns_errors(
    cls: type, case: str, change: Callable, message: str
) -> None:
    X, y = change(*data())
    with pytest.raises(ValueError, match=message):
        regressor(cls).fit(X, y)


@pytest.mark.parametrize("cls", REGRESSORS)
def test_regressors_read_nan_as_inactive_and_check_the_feature_count(cls: type) -> None:
    X, y = data()
    X[:, 2] = np.nan  # a column never active: modelled as absent
    model = regressor(cls).fit(X, y)
    assert np.all(np.isfinite(model.predict(X)))
    one = regressor(cls).fit(X[:1], y[:1])  # one sample: the prior around it
    assert np.all(np.isfinite(one.predict(X[:3])))
    with pytest.raises(ValueError, match="X has 2 features.*expecting 3 features"):
        model.predict(X[:, :2])
