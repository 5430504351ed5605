"""One sampler and pruner on one multi-fidelity problem and seed, until its budget is spent.

Names: ``sampler`` or ``sampler+pruner`` (pruner ``hyperband`` when not given; ``median``,
``sha`` for successive halving, ``none``); samplers ``random``, ``tpe`` (Optuna's default),
``treegp``, ``arcgp``, ``bngp``, ``dngo``, ours taking options in brackets
(``treegp[intermediate_values=False]``); ``smac``: SMAC3's multi-fidelity facade (Hyperband
over its random forest), budgets 1..MAX_STEP, each run trained from scratch as SMAC does.

Every step trained costs one unit of budget. A run records, after each evaluation, the budget
used so far and the best value of a configuration trained for all ``MAX_STEP`` steps.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import tempfile
import time
from pathlib import Path
from typing import Any

import optuna

from benchmarks.fidelity.problems import MAX_STEP, FidelityProblem
from benchmarks.hpo.peers import OPTUNA_PEERS, build_sampler, configspace, parse_variant
from benchmarks.hpo.spec import suggest

OURS = {
    "treegp": "TreeGPSampler",
    "arcgp": "ArcGPSampler",
    "bngp": "BNGPSampler",
    "dngo": "DNGOSampler",
}
PRUNERS = ("hyperband", "median", "sha", "none")


@dataclasses.dataclass
class FidelityRun:
    """``trace``: ``(budget used, best full-training value so far)`` after each evaluation
    (``inf`` until one configuration is fully trained); ``sampler_seconds``: per trial, the
    time outside training."""

    trace: list[tuple[int, float]]
    sampler_seconds: list[float]
    n_trials: int
    n_full: int


def split_name(name: str) -> tuple[str, str]:
    """``"tpe+median"`` -> ``("tpe", "median")``; the pruner defaults to ``hyperband``."""
    sampler, _, pruner = name.partition("+")
    pruner = pruner or "hyperband"
    base, options = parse_variant(sampler)
    known = base in OURS or base in OPTUNA_PEERS or base == "smac"
    if not known or pruner not in PRUNERS or (options and base not in OURS):
        raise ValueError(
            f"unknown sampler {name!r}: sampler one of {sorted([*OURS, *OPTUNA_PEERS, 'smac'])} "
            f"(options in brackets for ours), pruner one of {PRUNERS}"
        )
    return sampler, pruner


def make_pruner(name: str) -> optuna.pruners.BasePruner:
    if name == "hyperband":
        return optuna.pruners.HyperbandPruner(
            min_resource=1, max_resource=MAX_STEP, reduction_factor=3
        )
    if name == "median":
        return optuna.pruners.MedianPruner(n_startup_trials=5)
    if name == "sha":
        return optuna.pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=3)
    return optuna.pruners.NopPruner()


def make_sampler(name: str, seed: int) -> optuna.samplers.BaseSampler:
    return build_sampler(name, seed, OURS, OPTUNA_PEERS)


def run(name: str, problem: FidelityProblem, seed: int) -> FidelityRun:
    """Run ``name`` (:func:`split_name`) on ``problem`` with ``seed`` until the budget is
    spent."""
    sampler, pruner = split_name(name)
    if sampler == "smac":
        return _run_smac(problem, seed)
    return _run_optuna(make_sampler(sampler, seed), make_pruner(pruner), problem, seed)


def _run_optuna(
    sampler: optuna.samplers.BaseSampler,
    pruner: optuna.pruners.BasePruner,
    problem: FidelityProblem,
    seed: int,
) -> FidelityRun:
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    # A fixed name: HyperbandPruner assigns brackets by a hash of the study name.
    study = optuna.create_study(
        study_name=f"{problem.name}-{seed}", sampler=sampler, pruner=pruner
    )
    result = FidelityRun([], [], 0, 0)
    state = {"used": 0, "best": math.inf, "mark": time.perf_counter()}

    def objective(trial: optuna.Trial) -> float:
        config = suggest(trial, problem.space)
        result.sampler_seconds.append(time.perf_counter() - state["mark"])
        value = math.inf
        try:
            for step, value in enumerate(problem.curve(config), start=1):
                state["used"] += 1
                trial.report(value, step)
                if step < MAX_STEP and trial.should_prune():
                    raise optuna.TrialPruned()
        finally:
            state["mark"] = time.perf_counter()
        state["best"] = min(state["best"], value)
        result.n_full += 1
        return value

    def record(study: optuna.Study, trial: optuna.trial.FrozenTrial) -> None:
        result.trace.append((int(state["used"]), float(state["best"])))
        if state["used"] >= problem.budget:
            study.stop()

    study.optimize(objective, callbacks=[record])
    result.n_trials = len(study.trials)
    return result


def _run_smac(problem: FidelityProblem, seed: int) -> FidelityRun:
    import logging

    from smac import MultiFidelityFacade, Scenario
    from smac.runhistory.dataclasses import TrialValue

    from benchmarks.hpo.peers import _decode_configuration

    logging.getLogger("smac").setLevel(logging.ERROR)
    result = FidelityRun([], [], 0, 0)
    used, best = 0, math.inf
    with tempfile.TemporaryDirectory() as output:
        scenario = Scenario(
            configspace(problem.space, seed),
            deterministic=True,
            n_trials=100_000,
            min_budget=1,
            max_budget=MAX_STEP,
            seed=seed,
            output_directory=Path(output),
        )
        facade = MultiFidelityFacade(
            scenario,
            target_function=lambda config, seed=0, budget=1: 0.0,
            overwrite=True,
            logging_level=False,
        )
        while used < problem.budget:
            start = time.perf_counter()
            info = facade.ask()
            result.sampler_seconds.append(time.perf_counter() - start)
            config = _decode_configuration(problem.space, dict(info.config))
            steps = int(round(info.budget or MAX_STEP))
            value = _value_after(problem, config, steps)
            used += steps
            if steps >= MAX_STEP:
                best = min(best, value)
                result.n_full += 1
            start = time.perf_counter()
            facade.tell(info, TrialValue(cost=value))
            result.sampler_seconds[-1] += time.perf_counter() - start
            result.trace.append((used, best))
            result.n_trials += 1
    return result


def _value_after(problem: FidelityProblem, config: dict[str, Any], steps: int) -> float:
    """The value after training ``config`` for ``steps`` steps from scratch."""
    values = list(itertools.islice(problem.curve(config), steps))
    return float(values[-1]) if values else math.inf


def best_at(trace: list[tuple[int, float]], budget: float) -> float:
    """The best value of a run once ``budget`` units were used (``inf`` before any)."""
    best = math.inf
    for used, value in trace:
        if used > budget:
            break
        best = value
    return best
