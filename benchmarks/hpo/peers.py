"""The samplers of the real-HPO suite, peers and ours, behind one ask-and-tell loop.

Optuna samplers (ours, random, TPE, GPSampler) run a define-by-run objective
(:func:`spec.suggest`). SMAC3 runs its hyperparameter-optimisation facade (random forest,
default initial design) on a ConfigSpace built from the same declaration, with the conditions
declared by hand (``InCondition``), as a SMAC user would write them. Peer packages (``smac``,
``optunahub``) come from the optional extra ``bench``; a peer whose package is missing is
reported as unavailable, never silently replaced.

Each runner returns a :class:`Run`: per trial the configuration, the value, the extras, and the
sampler's own seconds (objective time excluded).
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import optuna

from benchmarks.hpo.spec import Config, Param, Task, active_params, suggest

#: Trials sampled at random before our samplers' models (their default, n_startup_trials).
N_STARTUP = 10


@dataclasses.dataclass
class Run:
    """One sampler's run of one task on one seed."""

    configs: list[Config]
    values: list[float]
    extras: list[dict[str, float]]
    sampler_seconds: list[float]


class _Clock:
    """Accumulates the seconds spent outside the objective, per trial."""

    def __init__(self) -> None:
        self.seconds: list[float] = []
        self._mark = time.perf_counter()

    def objective_starts(self) -> None:
        self.seconds.append(time.perf_counter() - self._mark)

    def objective_ends(self) -> None:
        self._mark = time.perf_counter()


def _optunahub_module(package: str, peer: str) -> Any:
    """An OptunaHub package from a local copy of the registry (``CONDSAMPLERS_OPTUNAHUB_REGISTRY``:
    the root of a checkout of optuna/optunahub-registry)."""
    import os

    import optunahub

    root = os.environ.get("CONDSAMPLERS_OPTUNAHUB_REGISTRY")
    if not root:
        raise RuntimeError(
            f"{peer} needs a local copy of the OptunaHub registry: set "
            "CONDSAMPLERS_OPTUNAHUB_REGISTRY to its root (the folder holding package/)."
        )
    return optunahub.load_local_module(package=package, registry_root=str(Path(root) / "package"))


def _tpe_union(seed: int) -> optuna.samplers.BaseSampler:
    """OptunaHub's ``tpe_union_multivariate``."""
    module = _optunahub_module("samplers/tpe_union_multivariate", "tpe_union")
    return module.TPEUnionMultivariateSampler(seed=seed)


def _hierarchical_tpe(seed: int) -> optuna.samplers.BaseSampler:
    """OptunaHub's ``hierarchical_tpe`` (a multivariate TPE per group of parameters that occur
    together, routed down the branches by a decision tree learnt from the trials), with its
    defaults: the structure learnt, not given by ``conditional_fn``, as a new user runs it."""
    module = _optunahub_module("samplers/hierarchical_tpe", "htpe")
    return module.HierarchicalTPESampler(seed=seed)


#: Optuna's samplers and OptunaHub's, by name.
OPTUNA_PEERS: dict[str, Callable[[int], optuna.samplers.BaseSampler]] = {
    "random": lambda seed: optuna.samplers.RandomSampler(seed=seed),
    "tpe": lambda seed: optuna.samplers.TPESampler(seed=seed),
    "tpe_mv": lambda seed: optuna.samplers.TPESampler(seed=seed, multivariate=True, group=True),
    "gp": lambda seed: optuna.samplers.GPSampler(seed=seed, warn_independent_sampling=False),
    "tpe_union": _tpe_union,
    "htpe": _hierarchical_tpe,
}
#: Our samplers, which take options in the sampler name: ``treegp[output_warping=rank]``.
OURS = {"treegp": "TreeGPSampler", "arcgp": "ArcGPSampler", "bngp": "BNGPSampler"}
SAMPLERS = (*OPTUNA_PEERS, "smac", *OURS)


def parse_variant(name: str) -> tuple[str, dict[str, Any]]:
    """``"treegp[a=1,b=x]"`` -> ``("treegp", {"a": 1, "b": "x"})`` (values as Python literals
    where they parse as one, else strings)."""
    import ast

    if "[" not in name:
        return name, {}
    base, _, rest = name.partition("[")
    options: dict[str, Any] = {}
    for item in filter(None, rest.rstrip("]").split(",")):
        key, _, text = item.partition("=")
        try:
            options[key] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            options[key] = text
    return base, options


def check_sampler_name(
    name: str, samplers: tuple[str, ...] = SAMPLERS, ours: dict[str, str] = OURS
) -> str:
    """``name`` if it names one of ``samplers`` (options in brackets for ``ours`` only), else
    a ValueError."""
    base, options = parse_variant(name)
    if base not in samplers or (options and base not in ours):
        raise ValueError(
            f"unknown sampler {name!r}; choose from {samplers} (options in brackets only for "
            f"{sorted(ours)}, e.g. treegp[output_warping=rank])"
        )
    return name


def build_sampler(
    name: str,
    seed: int,
    ours: dict[str, str] = OURS,
    peers: dict[str, Callable[[int], optuna.samplers.BaseSampler]] = OPTUNA_PEERS,
) -> optuna.samplers.BaseSampler:
    """The Optuna sampler ``name`` (one of ``ours``, with its bracketed options, or of
    ``peers``) seeded with ``seed``."""
    base, options = parse_variant(name)
    if base in ours:
        import condsamplers

        return getattr(condsamplers, ours[base])(seed=seed, **options)
    return peers[base](seed)


def run_sampler(name: str, task: Task, seed: int, n_trials: int) -> Run:
    """Run sampler ``name`` on ``task`` for ``n_trials`` trials with ``seed``."""
    if parse_variant(check_sampler_name(name))[0] == "smac":
        return _run_smac(task, seed, n_trials)
    return _run_optuna(build_sampler(name, seed), task, n_trials)


def _run_optuna(sampler: optuna.samplers.BaseSampler, task: Task, n_trials: int) -> Run:
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    study = optuna.create_study(sampler=sampler)
    run = Run([], [], [], [])
    clock = _Clock()

    def objective(trial: optuna.Trial) -> float:
        config = suggest(trial, task.space)
        clock.objective_starts()
        value, extras = task.evaluate(config)
        clock.objective_ends()
        run.configs.append(config)
        run.values.append(float(value))
        run.extras.append(extras)
        return value

    study.optimize(objective, n_trials=n_trials)
    # The time of trial t runs from the end of objective t-1 to the start of objective t (the
    # sampler's before_trial, relative sampling and each suggest); after_trial of t is in t+1.
    run.sampler_seconds = clock.seconds
    return run


# ---- SMAC3 ----------------------------------------------------------------------------------


def _encode_choice(value: Any) -> Any:
    """ConfigSpace categoricals take strings and numbers; None and bools become strings."""
    return repr(value) if value is None or isinstance(value, bool) else value


def configspace(space: tuple[Param, ...], seed: int) -> Any:
    """The ConfigSpace of a declaration: every parameter, each condition as an InCondition."""
    from ConfigSpace import Categorical, ConfigurationSpace, Float, InCondition, Integer

    cs = ConfigurationSpace(seed=seed)
    made: dict[str, Any] = {}
    for p in space:
        if p.kind == "categorical":
            hp = Categorical(p.name, [_encode_choice(c) for c in p.choices])
        elif p.kind == "int":
            hp = Integer(p.name, (int(p.low), int(p.high)), log=p.log)
        else:
            hp = Float(p.name, (float(p.low), float(p.high)), log=p.log)
        made[p.name] = hp
        cs.add(hp)
    for p in space:
        if p.parent is not None:
            values = [_encode_choice(v) for v in p.values]
            cs.add(InCondition(made[p.name], made[p.parent], values))
    return cs


def _decode_configuration(space: tuple[Param, ...], values: dict[str, Any]) -> Config:
    config: Config = {}
    for p in space:
        if p.name not in values:
            continue
        value = values[p.name]
        if p.kind == "categorical":
            value = next(c for c in p.choices if _encode_choice(c) == value)
        elif p.kind == "int":
            value = int(value)
        else:
            value = float(value)
        config[p.name] = value
    active = {q.name for q in active_params(space, config)}
    return {k: v for k, v in config.items() if k in active}


def _run_smac(task: Task, seed: int, n_trials: int) -> Run:
    import logging

    from smac import HyperparameterOptimizationFacade, Scenario
    from smac.runhistory.dataclasses import TrialValue

    logging.getLogger("smac").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as output:
        scenario = Scenario(
            configspace(task.space, seed),
            deterministic=True,
            n_trials=n_trials,
            seed=seed,
            output_directory=Path(output),
        )
        facade = HyperparameterOptimizationFacade(
            scenario,
            target_function=lambda config, seed=0: 0.0,
            overwrite=True,
            logging_level=False,
        )
        run = Run([], [], [], [])
        for _ in range(n_trials):
            start = time.perf_counter()
            info = facade.ask()
            run.sampler_seconds.append(time.perf_counter() - start)
            config = _decode_configuration(task.space, dict(info.config))
            value, extras = task.evaluate(config)
            start = time.perf_counter()
            facade.tell(info, TrialValue(cost=float(value)))
            run.sampler_seconds[-1] += time.perf_counter() - start
            run.configs.append(config)
            run.values.append(float(value))
            run.extras.append(extras)
    return run
