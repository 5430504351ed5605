"""TreeGPSampler's own options: two-step EI (one path searched), joint EI, independent GPs."""

from __future__ import annotations

import numpy as np
import optuna
import pytest

from condsamplers import TreeGPSampler, infer_space
from condsamplers.models.tree_gp import TreeGP
from condsamplers.optimize import OptimizerSettings
from condsamplers.pipeline import Observations, propose
from condsamplers.samplers.proposals import read_proposal

optuna.logging.set_verbosity(optuna.logging.WARNING)
FAST = dict(n_candidates=128, n_local_search=2, n_restarts=0)


def _three_leaves(trial: optuna.Trial) -> float:
    kind = trial.suggest_categorical("kind", ["a", "b", "c"])
    shared = trial.suggest_float("shared", 0, 1) if kind != "c" else 0.5
    x = trial.suggest_float(f"x_{kind}", -1, 1)
    return {"a": 0.1, "b": 0.4, "c": 0.8}[kind] + x**2 + 0.5 * shared


def _random_study(n: int) -> optuna.Study:
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(_three_leaves, n_trials=n)
    return study


def test_two_step_searches_the_path_with_the_best_path_ei_only() -> None:
    study = _random_study(20)
    space = infer_space(study.trials)
    rows = [space.encode_trial(t.params, t.distributions) for t in study.trials]
    data = Observations(
        X=np.array([r[0] for r in rows]),
        active=np.array([r[1] for r in rows]),
        y=np.array([t.value for t in study.trials]),
        X_pending=np.zeros((0, space.n_features)),
        active_pending=np.zeros((0, space.n_features), dtype=bool),
    )
    settings = OptimizerSettings(n_candidates=128, n_local_search=2, two_step=True)
    proposal = propose(space, data, TreeGP(seed=0), np.random.default_rng(0), settings)
    assert proposal.path is not None
    on_path = {space.index[k] for k in proposal.path.active}
    assert all(set(np.flatnonzero(a)) == on_path for a in proposal.active)
    # The best leaf ("a", offset 0.1) is the one a well-fitted path EI picks here.
    kind = space.nodes[space.index["kind"]]
    chosen = dict(proposal.path.branch_values)["kind"]
    assert [kind.distribution.choices[int(v)] for v in chosen] == ["a"]


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"acquisition": "joint"},
        {"independent": True, "acquisition": "joint"},
        {"inner_basis": "linear"},
        {"independent": True, "acquisition": "joint", "offsets": "shared"},
    ],
    ids=["two-step", "joint", "independent", "linear-inner-basis", "independent-shared-offset"],
)
def test_every_variant_finds_the_best_leaf(options: dict) -> None:
    sampler = TreeGPSampler(seed=0, n_startup_trials=6, **FAST, **options)
    study = optuna.create_study(sampler=sampler)
    study.optimize(_three_leaves, n_trials=25)
    assert study.best_params["kind"] == "a"
    assert study.best_value < 0.1 + 0.05


@pytest.mark.parametrize(
    ("options", "name"),
    [
        ({"acquisition": "path"}, "acquisition"),
        ({"leaf_inputs": "all"}, "leaf_inputs"),
        ({"inner_basis": "rff"}, "inner_basis"),
        ({"signal_variance": "path"}, "signal_variance"),
        ({"offsets": "path"}, "offsets"),
        ({"independent": True, "acquisition": "two_step"}, "acquisition='joint'"),
    ],
)
def test_bad_options_name_the_parameter(options: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        TreeGPSampler(**options)


def test_two_step_leaves_a_branch_whose_few_configurations_are_all_evaluated() -> None:
    """The best branch has three configurations; once they are evaluated the path EI must
    not keep choosing it (every candidate there a repeat, the trial left to random search)."""

    def objective(trial: optuna.Trial) -> float:
        if trial.suggest_categorical("branch", ["small", "float"]) == "small":
            return {"p": 0.0, "q": 0.1, "r": 0.2}[trial.suggest_categorical("k", ["p", "q", "r"])]
        return 0.5 + (trial.suggest_float("x", 0, 1) - 0.3) ** 2

    sampler = TreeGPSampler(seed=0, n_startup_trials=4, acquisition="two_step", **FAST)
    study = optuna.create_study(sampler=sampler)
    study.optimize(objective, n_trials=16)
    model_based = [t for t in study.trials if read_proposal(t) is not None]
    assert len(model_based) == 16 - 4
    for t in model_based:  # (the random startup trials may repeat one another)
        assert all(t.params != earlier.params for earlier in study.trials[: t.number])
    assert min(abs(t.params["x"] - 0.3) for t in study.trials if "x" in t.params) < 0.05
