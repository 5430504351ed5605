"""Optuna trial constraints (``trial.set_constraint`` and ``constraints_func``), for every sampler:
EI weighted by the probability of feasibility of one surrogate per constraint."""

from __future__ import annotations

import math

import numpy as np
import optuna
import pytest
import scipy.stats
import torch

from condsamplers.acquisition import Constraint, make_log_ei, with_feasibility
from condsamplers.models.gp import ExactGP
from condsamplers.pipeline import Observations
from condsamplers.samplers.observations import trial_constraints
from condsamplers.space import FeatureSpec

optuna.logging.set_verbosity(optuna.logging.WARNING)

N_STARTUP = 6
#: ``trial.set_constraint`` is Optuna 5's; on Optuna 4 constraints come from ``constraints_func``.
needs_set_constraint = pytest.mark.skipif(
    not hasattr(optuna.Trial, "set_constraint"), reason="trial.set_constraint needs Optuna 5"
)
N_TRIALS = 26


def _constrained(trial: optuna.Trial) -> float:
    """Branch "disk": minimise the distance to (0.8, 0.8) subject to x + y <= 1 (constrained
    optimum (0.5, 0.5), value 0.18); branch "flat": 0.5, no constraint applies there."""
    branch = trial.suggest_categorical("branch", ["disk", "flat"])
    if branch == "flat":
        return 0.5
    x, y = trial.suggest_float("x", 0, 1), trial.suggest_float("y", 0, 1)
    trial.set_constraint("sum", x + y - 1.0)
    return (x - 0.8) ** 2 + (y - 0.8) ** 2


def _feasible(trial: optuna.trial.FrozenTrial) -> bool:
    return all(c <= 0 for c in trial_constraints(trial).values())


def _model_trials(study: optuna.Study) -> list[optuna.trial.FrozenTrial]:
    return study.trials[N_STARTUP:]


@needs_set_constraint
def test_set_constraint_steers_proposals_to_the_feasible_optimum(make_sampler) -> None:
    study = optuna.create_study(sampler=make_sampler(n_startup_trials=N_STARTUP))
    study.optimize(_constrained, n_trials=N_TRIALS)
    disk = [t for t in _model_trials(study) if t.params["branch"] == "disk"]
    assert len(disk) >= 0.7 * len(_model_trials(study)), "the model prefers the worse branch"
    # Unconstrained, EI would chase (0.8, 0.8), which violates x + y <= 1 by 0.6: proposals
    # hug the boundary instead (about half of them just outside it: the optimum is on it).
    violations = [trial_constraints(t)["sum"] for t in disk]
    assert np.median(violations) < 0.05
    assert min(t.value for t in disk if _feasible(t)) < 0.19  # constrained optimum 0.18


def test_constraints_func_is_honoured_like_set_constraint(make_sampler) -> None:
    def objective(trial: optuna.Trial) -> float:
        x, y = trial.suggest_float("x", 0, 1), trial.suggest_float("y", 0, 1)
        return (x - 0.8) ** 2 + (y - 0.8) ** 2

    def constraints(trial: optuna.trial.FrozenTrial) -> list[float]:
        return [trial.params["x"] + trial.params["y"] - 1.0]

    sampler = make_sampler(n_startup_trials=N_STARTUP, constraints_func=constraints)
    study = optuna.create_study(sampler=sampler)
    study.optimize(objective, n_trials=20)
    assert all(trial_constraints(t) for t in study.trials)  # stored by after_trial
    assert np.median([trial_constraints(t)["0"] for t in _model_trials(study)]) < 0.05
    assert min(t.value for t in study.trials if _feasible(t)) < 0.19


@needs_set_constraint
def test_without_a_feasible_trial_the_sampler_searches_for_one(make_sampler) -> None:
    """Feasible only for x >= 0.9; every startup trial is infeasible."""

    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0, 1)
        trial.set_constraint("x_large", 0.9 - x)
        return x

    study = optuna.create_study(sampler=make_sampler(n_startup_trials=4))
    for x in (0.1, 0.3, 0.5, 0.7):
        study.enqueue_trial({"x": x})
    study.optimize(objective, n_trials=10)
    assert any(_feasible(t) for t in study.trials[4:])


def test_constraints_func_must_be_callable(sampler_class) -> None:
    with pytest.raises(ValueError, match="constraints_func"):
        sampler_class(constraints_func=[1.0])


@needs_set_constraint
def test_infinite_constraint_values_are_clipped_with_a_warning(
    make_sampler, caplog: pytest.LogCaptureFixture
) -> None:
    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0, 1)
        trial.set_constraint("c", math.inf if x > 0.8 else x - 0.5)
        return -x

    study = optuna.create_study(sampler=make_sampler(n_startup_trials=3))
    study.enqueue_trial({"x": 0.9})
    with caplog.at_level("WARNING", logger="optuna.condsamplers"):
        study.optimize(objective, n_trials=6)
    assert "infinite" in caplog.text
    assert all(t.state == optuna.trial.TrialState.COMPLETE for t in study.trials)


def test_feasibility_weight_is_log_ei_plus_log_phi() -> None:
    """``log(EI * P(c <= 0))`` with the constraint GP's ``Phi(-mu / sigma)``, finite where
    ``Phi`` underflows."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(12, 1))
    active = np.ones_like(X, dtype=bool)
    features = FeatureSpec(np.array([0]))
    objective = ExactGP("matern", seed=0).fit(X, active, np.sin(6 * X[:, 0]), features)
    constraint = ExactGP("matern", seed=0).fit(X, active, X[:, 0] - 0.5, features)
    query = torch.linspace(0, 1, 7, dtype=torch.float64)[:, None]
    on = torch.ones_like(query, dtype=torch.bool)
    no_exemption = np.zeros((0, 1), dtype=bool)
    weighted = with_feasibility(
        make_log_ei(objective, best=-0.5), [Constraint(constraint, no_exemption)]
    )
    mean, var = constraint.posterior(query, on)
    log_phi = scipy.stats.norm.logcdf((-mean / var.sqrt()).detach().numpy())
    expected = make_log_ei(objective, best=-0.5)(query, on) + torch.as_tensor(log_phi)
    torch.testing.assert_close(weighted(query, on), expected)
    assert torch.isfinite(expected).all() and expected.min() < -100  # deep in the tail


def test_observations_reject_malformed_constraints() -> None:
    X = np.zeros((3, 1))
    active = np.ones((3, 1), dtype=bool)
    empty = np.zeros((0, 1))
    with pytest.raises(ValueError, match="shape"):
        Observations(X, active, np.zeros(3), empty, empty.astype(bool), np.zeros((2, 1)))
    with pytest.raises(ValueError, match="infinite"):
        Observations(X, active, np.zeros(3), empty, empty.astype(bool), np.full((3, 1), np.inf))


def test_constraints_are_read_as_optuna_4_and_5_store_them() -> None:
    """``constraints_func``'s values (a sequence under ``"constraints"``, every version) and
    ``set_constraint``'s (``"constraints:<name>"``, Optuna 5) read by name on either version."""
    trial = optuna.trial.create_trial(
        params={},
        distributions={},
        value=1.0,
        system_attrs={"constraints": [0.5, -1.0], "constraints:area": 2.0},
    )
    assert trial_constraints(trial) == {"0": 0.5, "1": -1.0, "area": 2.0}
    plain = optuna.trial.create_trial(params={}, distributions={}, value=1.0)
    assert trial_constraints(plain) == {}


def test_a_nan_from_constraints_func_is_an_error_naming_the_trial() -> None:
    from condsamplers import TreeGPSampler

    sampler = TreeGPSampler(seed=0, constraints_func=lambda t: [float("nan")])
    study = optuna.create_study(sampler=sampler)
    with pytest.raises(ValueError, match="constraints_func returned NaN for trial 0"):
        study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=1)
