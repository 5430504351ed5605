"""Fast checks of the benchmark problems (``benchmarks/problems.py``) and runner."""

from __future__ import annotations

import importlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import optuna
import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))
problems = importlib.import_module("benchmarks.problems")
run = importlib.import_module("benchmarks.run")

N_STRUCTURE_TRIALS = 300
PROBLEM_NAMES = list(problems.PROBLEMS)

optuna.logging.set_verbosity(optuna.logging.WARNING)


def _random_study(problem: Any, n_trials: int, seed: int = 0) -> optuna.Study:
    """Optimise ``problem`` with Optuna's RandomSampler."""
    sampler = optuna.samplers.RandomSampler(seed=seed)
    study = optuna.create_study(direction=problem.direction, sampler=sampler)
    study.optimize(problem.objective, n_trials=n_trials)
    return study


@pytest.fixture(scope="module")
def random_trials() -> dict[str, list[optuna.trial.FrozenTrial]]:
    """Many random trials of every problem, shared by the structure and optimum checks."""
    return {
        name: _random_study(problem, N_STRUCTURE_TRIALS).trials
        for name, problem in problems.PROBLEMS.items()
    }


def test_registry() -> None:
    assert PROBLEM_NAMES == [
        "jenatton_small",
        "jenatton_small_offcentre",
        "jenatton_large",
        "branching_nested",
        "net_depth",
        "branin",
        "hartmann6",
    ]
    for name in PROBLEM_NAMES:
        problem = problems.get_problem(name)
        assert problem.name == name
        assert problem.direction in ("minimize", "maximize")
        assert problem.n_startup_trials == 10
    with pytest.raises(KeyError):
        problems.get_problem("nope")


@pytest.mark.parametrize("name", PROBLEM_NAMES)
def test_objective_runs_under_random_sampler(name: str) -> None:
    problem = problems.get_problem(name)
    study = _random_study(problem, 20)
    assert len(study.trials) == 20
    for trial in study.trials:
        assert trial.state == optuna.trial.TrialState.COMPLETE
        true_value = problem.true_value(trial.params)
        if problem.noise_std == 0.0:
            assert trial.value == pytest.approx(true_value, abs=1e-12)
        else:
            assert abs(trial.value - true_value) < 6 * problem.noise_std


@pytest.mark.parametrize("name", PROBLEM_NAMES)
def test_optimum_attained(name: str) -> None:
    problem = problems.get_problem(name)
    assert problem.true_value(problem.optimal_params) == pytest.approx(problem.optimum, abs=1e-12)
    assert problem.regret(problem.true_value(problem.optimal_params)) == pytest.approx(
        0, abs=1e-12
    )
    assert set(problem.optimal_params) == _active_params(problem, problem.optimal_params)


@pytest.mark.parametrize("name", PROBLEM_NAMES)
def test_no_random_point_beats_optimum(name: str, random_trials: dict[str, list[Any]]) -> None:
    problem = problems.get_problem(name)
    regrets = [problem.regret(problem.true_value(t.params)) for t in random_trials[name]]
    assert min(regrets) >= -1e-12


def _active_params(problem: Any, params: dict[str, Any]) -> set[str]:
    """Parameters ``expected_tree`` says are active given the values in ``params``."""
    active: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, entry in problem.expected_tree.items():
            if name in active:
                continue
            if entry is None or (entry[0] in active and params.get(entry[0]) in entry[1]):
                active.add(name)
                changed = True
    return active


@pytest.mark.parametrize("name", PROBLEM_NAMES)
def test_expected_tree_matches_sampled_params(
    name: str, random_trials: dict[str, list[Any]]
) -> None:
    problem = problems.get_problem(name)
    tree = problem.expected_tree
    seen: set[str] = set()
    activating: dict[str, set[Any]] = {p: set() for p in tree}
    for trial in random_trials[name]:
        params = trial.params
        seen |= set(params)
        assert set(params) == _active_params(problem, params)
        for param, entry in tree.items():
            if entry is not None and param in params:
                activating[param].add(params[entry[0]])
    assert seen == set(tree)
    for param, entry in tree.items():
        if entry is not None:
            assert entry[1] == tuple(sorted(entry[1]))
            assert activating[param] == set(entry[1]), param


def test_branching_nested_v_choices_depend_on_z(random_trials: dict[str, list[Any]]) -> None:
    for trial in random_trials["branching_nested"]:
        z, v = trial.params["z"], trial.params["v"]
        choices = problems.BRANCHING_NESTED_CHOICES[z]
        distribution = trial.distributions["v"]
        assert (distribution.low, distribution.high) == (choices[0], choices[-1])
        assert v in choices


def test_branching_nested_grid_optimum() -> None:
    x1 = np.linspace(-10.0, 10.0, 2001)
    x2 = np.linspace(-5.0, 5.0, 1001)
    grid_x1, grid_x2 = np.meshgrid(x1, x2, indexing="ij")
    best: dict[tuple[int, int], tuple[float, float, float]] = {}
    for z, choices in problems.BRANCHING_NESTED_CHOICES.items():
        for v in choices:
            values = problems.branching_nested_function(grid_x1, grid_x2, z, v)
            i, j = np.unravel_index(np.argmax(values), values.shape)
            best[(z, v)] = (float(values[i, j]), float(x1[i]), float(x2[j]))
    winner = max(best, key=lambda key: best[key][0])
    value, arg_x1, arg_x2 = best[winner]
    assert winner == (2, 1)
    assert (arg_x1, arg_x2) == pytest.approx((6.0, 0.0), abs=1e-9)
    assert value == pytest.approx(5.0, abs=1e-12)
    runner_up = max(v[0] for key, v in best.items() if key != winner)
    assert runner_up == pytest.approx(4.2087, abs=1e-3)
    problem = problems.get_problem("branching_nested")
    assert problem.optimal_params == {"x1": 6.0, "x2": 0.0, "z": 2, "v": 1}


def test_branching_nested_noise_is_reproducible() -> None:
    problem = problems.get_problem("branching_nested")
    first = [t.value for t in _random_study(problem, 200, seed=3).trials]
    second = _random_study(problem, 200, seed=3).trials
    assert first == [t.value for t in second]
    noise = np.array([t.value - problem.true_value(t.params) for t in second])
    assert 0.15 < noise.std() < 0.25
    other_seed = problem.with_noise_seed(1)
    trial = second[0]
    fixed = optuna.trial.FixedTrial(trial.params, number=trial.number)
    assert other_seed.objective(fixed) != pytest.approx(trial.value)


def test_net_depth_grid_optimum() -> None:
    units = np.arange(16, 513, dtype=float)
    dropout = np.linspace(0.0, 0.9, 901)
    grid_units, grid_dropout = np.meshgrid(units, dropout, indexing="ij")
    layer_min: dict[int, float] = {}
    for layer in range(1, problems.NET_MAX_DEPTH + 1):
        penalty = problems.net_layer_penalty(layer, grid_units, grid_dropout)
        i, j = np.unravel_index(np.argmin(penalty), penalty.shape)
        layer_min[layer] = float(penalty[i, j])
        assert units[i] == problems.net_best_units(layer)
        assert dropout[j] == pytest.approx(problems.net_best_dropout(units[i]), abs=1e-9)
        assert layer_min[layer] == pytest.approx(0.0, abs=1e-12)
    log_lr = np.linspace(-5.0, -1.0, 4001)
    problem = problems.get_problem("net_depth")
    lr_values = [problem.true_value({"depth": 0, "lr": 10.0**x}) for x in log_lr]
    assert log_lr[int(np.argmin(lr_values))] == pytest.approx(-2.5, abs=1e-9)
    depth_values = []
    for depth in range(problems.NET_MAX_DEPTH + 1):
        params: dict[str, Any] = {"depth": depth, "lr": 10.0**-2.5}
        for layer in range(1, depth + 1):
            params[f"units_{layer}"] = problems.net_best_units(layer)
            params[f"dropout_{layer}"] = problems.net_best_dropout(params[f"units_{layer}"])
        depth_values.append(problem.true_value(params))
    assert int(np.argmin(depth_values)) == 3
    assert min(depth_values) == pytest.approx(0.05, abs=1e-12)
    assert problem.optimal_params["units_1"] == 256
    assert problem.optimal_params["dropout_3"] == pytest.approx(0.26)


def test_jenatton_offcentre_optimum_is_off_centre() -> None:
    problem = problems.get_problem("jenatton_small_offcentre")
    centre = {"x1": 0, "x2": 0, "r8": 0.0, "x4": 0.0}
    assert problem.regret(problem.true_value(centre)) == pytest.approx(0.37**2)
    large = problems.get_problem("jenatton_large")
    leaf8 = {"x1": 1, "x3": 1, "r_right": 0.0, "x7": 1, "l8": 0.0}
    assert large.true_value(leaf8) == pytest.approx(0.8)


def test_regret_curve_uses_best_observed_trial() -> None:
    problem = problems.get_problem("branching_nested")
    distributions = {
        "x1": optuna.distributions.FloatDistribution(-10, 10),
        "x2": optuna.distributions.FloatDistribution(-5, 5),
        "z": optuna.distributions.CategoricalDistribution([1, 2]),
        "v": optuna.distributions.IntDistribution(1, 2),
    }
    good = {"x1": 6.0, "x2": 0.0, "z": 2, "v": 1}
    bad = {"x1": -10.0, "x2": 5.0, "z": 2, "v": 2}
    trials = [
        optuna.trial.create_trial(params=bad, distributions=distributions, value=3.0),
        optuna.trial.create_trial(params=good, distributions=distributions, value=4.0),
        # noise makes a bad configuration look best: regret follows the observed best
        optuna.trial.create_trial(params=bad, distributions=distributions, value=9.0),
    ]
    _, true_values, regrets = run.regret_curve(problem, trials)
    bad_regret = 5.0 - true_values[0]
    assert regrets == pytest.approx([bad_regret, 0.0, bad_regret], abs=1e-12)


def test_timed_sampler_excludes_objective_time() -> None:
    sampler = run.TimedSampler(optuna.samplers.RandomSampler(seed=0))
    study = optuna.create_study(sampler=sampler)

    def slow_objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0.0, 1.0)
        time.sleep(0.02)
        return x

    study.optimize(slow_objective, n_trials=5)
    times = sampler.time_per_trial(5)
    assert all(0.0 < t < 0.01 for t in times)


def test_runner_end_to_end(tmp_path: Path) -> None:
    argv = [
        "benchmarks/run.py",
        "--problems",
        "jenatton_small",
        "branching_nested",
        "--samplers",
        "random",
        "tpe",
        "--seeds",
        "2",
        "--n-trials-override",
        "12",
        "--no-plots",
        "--out",
        str(tmp_path),
    ]
    run.main(argv)
    results = json.loads((tmp_path / "results.json").read_text())
    assert set(results["runs"]) == {"jenatton_small@12", "branching_nested@12"}
    record = results["runs"]["jenatton_small@12"]["tpe"]["1"]
    assert len(record["regret"]) == len(record["sampler_time"]) == 12
    assert np.all(np.diff(record["regret"]) <= 0)
    assert results["commands"][0]["command"].startswith("python benchmarks/run.py")
    report = tmp_path / "report.md"
    run.main(
        ["benchmarks/run.py", "--out", str(tmp_path), "--markdown", str(report), "--no-plots"]
    )
    text = report.read_text()
    assert "## jenatton_small@12" in text and "| tpe |" in text


def test_branin_and_hartmann6_optima() -> None:
    """The three Branin minima share 5 / (4 pi); Hartmann6's refined minimiser is a local
    minimum (no better point nearby) at the tabulated -3.32237."""
    for x1, x2 in [(-np.pi, 12.275), (np.pi, 2.275), (3 * np.pi, 2.475)]:
        assert problems.branin_function(x1, x2) == pytest.approx(0.397887, abs=1e-6)
    x1, x2 = np.meshgrid(np.linspace(-5, 10, 601), np.linspace(0, 15, 601))
    assert problems.branin_function(x1, x2).min() >= problems.BRANIN_OPTIMUM - 1e-12
    hartmann = problems.get_problem("hartmann6")
    assert hartmann.optimum == pytest.approx(-3.32237, abs=1e-5)
    rng = np.random.default_rng(0)
    around = np.asarray(problems.HARTMANN6_ARGMIN) + 1e-3 * rng.standard_normal((500, 6))
    assert problems.hartmann6_function(around).min() >= hartmann.optimum - 1e-12
