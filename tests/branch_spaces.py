"""Spaces and trials shared by the tests of the branch choices before the path EI
(tests/test_branch_draw.py: the Thompson draw; tests/test_branch_tpe.py: TPE's rule)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import optuna

from condsamplers import TreeGPSampler, infer_space
from condsamplers.space import ConditionalSpace

Encoded = tuple[ConditionalSpace, np.ndarray, np.ndarray, np.ndarray]
#: ``draw_branches`` or ``choose_branches``: (space, X, active, y, paths, rng) -> paths.
Chooser = Callable[..., list]


def three_kinds(trial: optuna.Trial) -> float:
    kind = trial.suggest_categorical("kind", ["a", "b", "c"])
    x = trial.suggest_float(f"x_{kind}", -1, 1)
    return {"a": 0.0, "b": 1.0, "c": 2.0}[kind] + x**2


def two_kinds(trial: optuna.Trial) -> float:
    kind = trial.suggest_categorical("kind", ["a", "b"])
    x = trial.suggest_float(f"x_{kind}", -1, 1)
    return {"a": 0.0, "b": 1.0}[kind] + x**2


def nested_kinds(trial: optuna.Trial) -> float:
    model = trial.suggest_categorical("model", ["plain", "tree"])
    if model == "plain":
        return 3.0 + trial.suggest_float("x_plain", -1, 1) ** 2
    kind = trial.suggest_categorical("kind", ["a", "b", "c"])
    x = trial.suggest_float(f"x_{kind}", -1, 1)
    return {"a": 0.0, "b": 1.0, "c": 2.0}[kind] + x**2


def encoded(objective: Callable[[optuna.Trial], float], n: int) -> Encoded:
    """``n`` random trials of ``objective``, encoded (:func:`encode`)."""
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=1))
    study.optimize(objective, n_trials=n)
    return encode(study.trials)


def encode(trials: list) -> Encoded:
    """The inferred space and the encoded trials: ``X``, ``active`` and the values."""
    space = infer_space(trials)
    rows = [space.encode_trial(t.params, t.distributions) for t in trials]
    X = np.array([r[0] for r in rows])
    active = np.array([r[1] for r in rows])
    return space, X, active, np.array([t.value for t in trials])


def designed(rows: list[tuple[dict, float]], choices: dict[str, tuple[str, ...]]) -> Encoded:
    """A space and the encoded trials of ``(params, value)`` rows: the parameters named in
    ``choices`` are categorical, the others floats in [-1, 1]."""
    trials = []
    for params, value in rows:
        distributions = {
            name: optuna.distributions.CategoricalDistribution(choices[name])
            if name in choices
            else optuna.distributions.FloatDistribution(-1.0, 1.0)
            for name in params
        }
        trials.append(
            optuna.trial.create_trial(params=params, distributions=distributions, value=value)
        )
    return encode(trials)


def drawn(space: ConditionalSpace, paths: list, name: str) -> set[str]:
    """The values of parameter ``name`` that ``paths`` take."""
    node = space.nodes[space.index[name]]
    return {
        node.distribution.choices[int(v)]
        for p in paths
        for key, values in p.branch_values
        if key == name
        for v in values
    }


def draws(choose: Chooser, encoded_trials: Encoded, seeds: int = 200) -> list[list]:
    """The paths ``choose`` keeps on ``encoded_trials``, once per generator seed."""
    space, X, active, y = encoded_trials
    paths = space.paths()
    assert paths is not None
    return [choose(space, X, active, y, paths, np.random.default_rng(s)) for s in range(seeds)]


def suggestions(sampler: TreeGPSampler) -> list[dict]:
    """The parameters of 14 trials of :func:`three_kinds` under ``sampler``."""
    study = optuna.create_study(sampler=sampler)
    study.optimize(three_kinds, n_trials=14)
    return [t.params for t in study.trials]


def kernel(name: str, i: int) -> dict:
    return {"kernel": name, f"x_{name}": i / 10}


def prep(family: str, preprocessing: str, x: float) -> dict:
    return {"family": family, "prep": preprocessing, f"x_{family}": x, f"z_{preprocessing}": 0.0}


def kinds_kept(choose: Chooser, seeds: int = 200) -> dict[str, int]:
    """How many of ``seeds`` generator seeds ``choose`` keeps each branch of
    :func:`three_kinds` (30 random trials); each time the paths of one branch only."""
    space, X, active, y = encoded(three_kinds, 30)
    paths = space.paths()
    assert paths is not None and len(paths) == 3
    counts = {"a": 0, "b": 0, "c": 0}
    for seed in range(seeds):
        kinds = drawn(
            space, choose(space, X, active, y, paths, np.random.default_rng(seed)), "kind"
        )
        assert len(kinds) == 1  # one branch's paths, every other parameter as it was
        counts[kinds.pop()] += 1
    return counts


def untried_c_chosen(choose: Chooser, seeds: int = 200) -> int:
    """How many of ``seeds`` generator seeds ``choose`` takes branch "c" of :func:`three_kinds`
    (30 random trials) once the trials of "c" are forgotten."""
    space, X, active, y = encoded(three_kinds, 30)
    paths = space.paths()
    assert paths is not None
    kind = space.index["kind"]
    c_code = space.nodes[kind].to_unit(np.array([2.0]))[0]
    tried = ~np.isclose(X[:, kind], c_code)
    return sum(
        drawn(space, choose(space, X[tried], active[tried], y[tried], paths, rng), "kind") == {"c"}
        for rng in (np.random.default_rng(s) for s in range(seeds))
    )
