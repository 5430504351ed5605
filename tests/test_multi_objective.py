"""Several objectives: Pareto fronts, hypervolumes and their boxes, log-EHVI, the step of
:func:`condsamplers.pipeline_pareto.propose_pareto`, and every sampler on multi-objective
studies (conditional spaces, constraints, running trials, determinism)."""

from __future__ import annotations

import math

import numpy as np
import optuna
import pytest
import torch
from optuna.trial import TrialState

from condsamplers.acquisition import make_log_ehvi, normal_qmc_samples
from condsamplers.hypervolume import (
    hypervolume,
    hypervolume_improvement,
    non_dominated_boxes,
    pareto_mask,
    reference_point,
)
from condsamplers.models.gp import ExactGP
from condsamplers.optimize import OptimizerSettings
from condsamplers.pipeline import Observations, propose
from condsamplers.pipeline_pareto import MAX_BOXES, n_boxes, parego_values, unit_scaled
from condsamplers.samplers.proposals import read_proposal
from condsamplers.space import infer_space

STAIRS = np.array([[1.0, 3.0], [2.0, 2.0], [3.0, 1.0]])


# -- fronts, hypervolumes, boxes -------------------------------------------------------------
def test_pareto_mask_keeps_each_non_dominated_point_once() -> None:
    Y = np.array([[1, 3], [2, 2], [2, 2], [3, 3], [3, 1], [1, 3.5]], dtype=float)
    assert pareto_mask(Y).tolist() == [True, True, False, False, True, False]


def test_hypervolume_of_a_staircase_and_the_boxes_that_tile_the_rest() -> None:
    ref = np.array([4.0, 4.0])
    assert hypervolume(STAIRS, ref) == pytest.approx(6.0)  # 3 * 1 + 2 * 1 + 1 * 1
    lowers, uppers = non_dominated_boxes(STAIRS, ref)
    assert len(lowers) == 4  # n + 1 boxes in two dimensions
    # (1.5, 1.5) adds [1.5, 2] x [1.5, 3] and [2, 3] x [1.5, 2]; a dominated point adds 0.
    improvement = hypervolume_improvement(np.array([[1.5, 1.5], [3.5, 3.5]]), lowers, uppers)
    assert improvement == pytest.approx([1.25, 0.0])
    assert hypervolume(np.array([[5.0, 5.0]]), ref) == 0.0  # beyond the reference point


@pytest.mark.parametrize("k", [3, 4])
def test_boxes_agree_with_monte_carlo_and_improvement_with_the_volume_gained(k: int) -> None:
    rng = np.random.default_rng(k)
    Y = rng.random((25, k))
    front, ref = Y[pareto_mask(Y)], np.full(k, 1.1)
    points = rng.random((200_000, k)) * 1.1
    dominated = np.zeros(len(points), dtype=bool)
    for p in front:
        dominated |= np.all(points >= p, axis=1)
    assert hypervolume(front, ref) == pytest.approx(dominated.mean() * 1.1**k, abs=0.01)
    lowers, uppers = non_dominated_boxes(front, ref)
    assert len(lowers) <= n_boxes(len(front), k)
    new = rng.random((5, k)) * 0.6
    gained = [hypervolume(np.vstack([front, x]), ref) - hypervolume(front, ref) for x in new]
    np.testing.assert_allclose(hypervolume_improvement(new, lowers, uppers), gained, atol=1e-12)


def test_reference_point_lies_beyond_every_value() -> None:
    Y = np.array([[0.0, 5.0], [1.0, 5.0]])
    ref = reference_point(Y)
    assert ref == pytest.approx([1.1, 5.5])  # a tenth of the range; of the magnitude if 0


# -- log-EHVI --------------------------------------------------------------------------------
class _Constant:
    """A stand-in surrogate with the same posterior everywhere."""

    def __init__(self, mean: float, var: float) -> None:
        self.mean, self.var = mean, var

    def posterior(self, X: torch.Tensor, active: torch.Tensor) -> tuple[torch.Tensor, ...]:
        ones = torch.ones(len(X), dtype=torch.float64)
        return self.mean * ones, self.var * ones


def test_log_ehvi_is_the_mean_improvement_of_posterior_samples() -> None:
    lowers, uppers = non_dominated_boxes(STAIRS, np.array([4.0, 4.0]))
    samples = normal_qmc_samples(4096, 2, seed=0)
    X, active = torch.zeros(3, 1, dtype=torch.float64), torch.ones(3, 1, dtype=torch.bool)
    certain = make_log_ehvi([_Constant(1.5, 1e-30)] * 2, lowers, uppers, samples)
    assert torch.exp(certain(X, active)).numpy() == pytest.approx([1.25] * 3)
    uncertain = make_log_ehvi([_Constant(1.5, 0.25)] * 2, lowers, uppers, samples)
    draws = np.random.default_rng(0).normal(1.5, 0.5, (400_000, 2))
    expected = hypervolume_improvement(draws, lowers, uppers).mean()
    assert math.exp(float(uncertain(X, active)[0])) == pytest.approx(expected, rel=0.01)
    # No improvement: finite, far below.
    dominated = make_log_ehvi([_Constant(5.0, 1e-30)] * 2, lowers, uppers, samples)
    assert torch.isfinite(dominated(X, active)).all() and float(dominated(X, active)[0]) < -40


def test_unit_scaling_and_parego_scalarisation() -> None:
    Y = np.array([[10.0, 0.001], [20.0, 0.003], [30.0, 0.002]])
    scaled = unit_scaled(Y)
    assert scaled.min(axis=0) == pytest.approx([0, 0]) and scaled.max(axis=0) == pytest.approx(
        [1, 1]
    )
    values = parego_values(scaled, np.random.default_rng(0))
    assert values.shape == (3,) and np.all(values >= 0)


# -- the step --------------------------------------------------------------------------------
def _conditional_trials(n: int, k: int, seed: int = 0) -> list:
    study = optuna.create_study(
        directions=["minimize"] * k, sampler=optuna.samplers.RandomSampler(seed=seed)
    )

    def objective(trial: optuna.Trial) -> tuple[float, ...]:
        branch = trial.suggest_categorical("branch", ["a", "b"])
        x = trial.suggest_float(f"x_{branch}", 0.0, 1.0)
        return tuple((x - j / max(1, k - 1)) ** 2 + (branch == "b") * 0.1 for j in range(k))

    study.optimize(objective, n_trials=n)
    return study.trials


def _observations(trials: list, k: int) -> tuple:
    space = infer_space(trials)
    X, active, _ = space.encode_trials(trials)
    y = np.array([t.values for t in trials])
    empty = np.empty((0, space.n_features))
    return space, Observations(X, active, y.reshape(-1, k), empty, empty.astype(bool))


def test_propose_with_two_objectives_returns_candidates_on_the_space() -> None:
    space, data = _observations(_conditional_trials(12, 2), 2)
    settings = OptimizerSettings(n_candidates=128, n_local_search=2)
    proposal = propose(
        space, data, ExactGP(), np.random.default_rng(0), settings, lambda k: ExactGP()
    )
    assert proposal.X.shape[1] == space.n_features and len(proposal.X) >= 1
    assert np.all(np.isfinite(proposal.acquisition_values))
    again = propose(
        space, data, ExactGP(), np.random.default_rng(0), settings, lambda k: ExactGP()
    )
    np.testing.assert_array_equal(proposal.X, again.X)  # deterministic given the generator


def test_many_objectives_with_a_large_front_fall_back_to_parego() -> None:
    k = 5
    space, data = _observations(_conditional_trials(40, k), k)
    front = pareto_mask(unit_scaled(data.y)).sum()
    assert n_boxes(front, k) > MAX_BOXES  # so the step scalarises
    settings = OptimizerSettings(n_candidates=128, n_local_search=2)
    proposal = propose(
        space, data, ExactGP(), np.random.default_rng(0), settings, lambda k: ExactGP()
    )
    assert len(proposal.X) >= 1 and np.all(np.isfinite(proposal.acquisition_values))


# -- the samplers ----------------------------------------------------------------------------
def _conditional_two_objectives(trial: optuna.Trial) -> tuple[float, float]:
    """Error against cost: a cheap linear branch and a costly net branch with a depth."""
    model = trial.suggest_categorical("model", ["linear", "net"])
    rate = trial.suggest_float("rate", 1e-3, 1.0, log=True)
    fit = (math.log10(rate) + 1.5) ** 2 / 4
    if model == "linear":
        return 0.5 + fit + trial.suggest_float("l2", 0.0, 1.0) / 4, 0.1
    depth = trial.suggest_int("depth", 1, 3)
    return 0.2 / depth + fit, 0.3 * depth


def test_every_sampler_proposes_from_its_models_in_a_multi_objective_study(make_sampler) -> None:
    study = optuna.create_study(directions=["minimize", "minimize"], sampler=make_sampler())
    study.optimize(_conditional_two_objectives, n_trials=9)
    model_based = [t for t in study.trials[5:] if read_proposal(t) is not None]
    assert len(model_based) == 4
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    assert len(study.best_trials) >= 1


def test_multi_objective_suggestions_repeat_with_the_seed(make_sampler) -> None:
    runs = []
    for _ in range(2):
        study = optuna.create_study(
            directions=["minimize", "maximize"], sampler=make_sampler(n_startup_trials=3)
        )
        study.optimize(
            lambda t: (lambda a, b: (a, -b))(*_conditional_two_objectives(t)), n_trials=6
        )
        runs.append([t.params for t in study.trials])
    assert runs[0] == runs[1]


def test_multi_objective_with_constraints_and_a_running_trial(make_sampler) -> None:
    def constraints(trial: optuna.trial.FrozenTrial) -> tuple[float]:
        return (trial.params.get("depth", 0) - 2.5,)  # at most two layers

    sampler = make_sampler(constraints_func=constraints)
    study = optuna.create_study(directions=["minimize", "minimize"], sampler=sampler)
    study.optimize(_conditional_two_objectives, n_trials=7)
    running = study.ask()
    running.suggest_categorical("model", ["linear", "net"])
    trial = study.ask()
    values = _conditional_two_objectives(trial)
    study.tell(trial, values)
    assert read_proposal(study.trials[-1]) is not None


def test_objective_bound_is_refused_for_several_objectives() -> None:
    from condsamplers import TreeGPSampler

    sampler = TreeGPSampler(seed=0, n_startup_trials=2, objective_bound=0.0)
    study = optuna.create_study(directions=["minimize", "minimize"], sampler=sampler)
    with pytest.raises(ValueError, match="objective_bound=0.0 applies to single-objective"):
        study.optimize(_conditional_two_objectives, n_trials=4)


def test_optunas_pareto_front_plots_work_on_these_studies() -> None:
    import warnings

    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from optuna.visualization.matplotlib import plot_pareto_front

    from condsamplers import TreeGPSampler

    sampler = TreeGPSampler(seed=0, n_startup_trials=4, n_candidates=64, n_local_search=2)
    study = optuna.create_study(directions=["minimize", "minimize"], sampler=sampler)
    study.optimize(_conditional_two_objectives, n_trials=7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        axes = plot_pareto_front(study, target_names=["error", "cost"])
    assert axes.get_xlabel() == "error" and axes.get_ylabel() == "cost"
    plotly = pytest.importorskip("plotly")
    assert plotly is not None
    figure = optuna.visualization.plot_pareto_front(study)
    assert len(figure.data) >= 1
