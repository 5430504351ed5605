"""One sampler on one multi-objective problem and seed: every trial's objective values and the
sampler's own seconds.

Names: ``random``, ``tpe`` (Optuna's default TPE, multi-objective), ``nsga2`` (Optuna's
NSGA-II, default population), ``gp`` (Optuna's GPSampler, LogEHVI, conditional parameters
sampled independently), ``smac`` (SMAC3's hyperparameter-optimisation facade with its ParEGO
multi-objective algorithm, the conditions declared by hand), and ours, ``treegp``, ``arcgp``,
``bngp``, ``dngo``, ``bohamiann``, with options in brackets (``treegp[acquisition='joint']``).
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from pathlib import Path

import optuna

from benchmarks.hpo.peers import (
    _decode_configuration,
    build_sampler,
    check_sampler_name,
    configspace,
    parse_variant,
)
from benchmarks.hpo.spec import suggest
from benchmarks.pareto.problems import ParetoProblem

OURS = {
    "treegp": "TreeGPSampler",
    "arcgp": "ArcGPSampler",
    "bngp": "BNGPSampler",
    "dngo": "DNGOSampler",
    "bohamiann": "BOHAMIANNSampler",
}
PEERS = {
    "random": lambda seed: optuna.samplers.RandomSampler(seed=seed),
    "tpe": lambda seed: optuna.samplers.TPESampler(seed=seed),
    "nsga2": lambda seed: optuna.samplers.NSGAIISampler(seed=seed),
    "gp": lambda seed: optuna.samplers.GPSampler(seed=seed, warn_independent_sampling=False),
}
SAMPLERS = (*PEERS, "smac", *OURS)


@dataclasses.dataclass
class ParetoRun:
    values: list[list[float]]
    sampler_seconds: list[float]


def check_name(name: str) -> str:
    return check_sampler_name(name, SAMPLERS, OURS)


def run(name: str, problem: ParetoProblem, seed: int, n_trials: int) -> ParetoRun:
    if parse_variant(check_name(name))[0] == "smac":
        return _run_smac(problem, seed, n_trials)
    return _run_optuna(build_sampler(name, seed, OURS, PEERS), problem, n_trials)


def _run_optuna(
    sampler: optuna.samplers.BaseSampler, problem: ParetoProblem, n_trials: int
) -> ParetoRun:
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    study = optuna.create_study(directions=["minimize"] * len(problem.reference), sampler=sampler)
    result = ParetoRun([], [])
    mark = [time.perf_counter()]

    def objective(trial: optuna.Trial) -> tuple[float, ...]:
        config = suggest(trial, problem.space)
        result.sampler_seconds.append(time.perf_counter() - mark[0])
        values = problem.evaluate(config)
        result.values.append([float(v) for v in values])
        mark[0] = time.perf_counter()
        return values

    study.optimize(objective, n_trials=n_trials)
    return result


def _run_smac(problem: ParetoProblem, seed: int, n_trials: int) -> ParetoRun:
    import logging

    from smac import HyperparameterOptimizationFacade, Scenario
    from smac.multi_objective.parego import ParEGO
    from smac.runhistory.dataclasses import TrialValue

    logging.getLogger("smac").setLevel(logging.ERROR)
    names = [f"objective_{j}" for j in range(len(problem.reference))]
    result = ParetoRun([], [])
    with tempfile.TemporaryDirectory() as output:
        scenario = Scenario(
            configspace(problem.space, seed),
            objectives=names,
            deterministic=True,
            n_trials=n_trials,
            seed=seed,
            output_directory=Path(output),
        )
        facade = HyperparameterOptimizationFacade(
            scenario,
            target_function=lambda config, seed=0: dict.fromkeys(names, 0.0),
            multi_objective_algorithm=ParEGO(scenario),
            intensifier=HyperparameterOptimizationFacade.get_intensifier(
                scenario, max_config_calls=1
            ),
            overwrite=True,
            logging_level=False,
        )
        for _ in range(n_trials):
            start = time.perf_counter()
            info = facade.ask()
            result.sampler_seconds.append(time.perf_counter() - start)
            values = problem.evaluate(_decode_configuration(problem.space, dict(info.config)))
            start = time.perf_counter()
            facade.tell(info, TrialValue(cost=[float(v) for v in values]))
            result.sampler_seconds[-1] += time.perf_counter() - start
            result.values.append([float(v) for v in values])
    return result
