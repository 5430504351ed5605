"""Path patience (condsamplers.path_patience): a path that has had ``k`` trials since the best
value last improved sits out the proposals until the best value improves again."""

from __future__ import annotations

import numpy as np
import optuna
import pytest

from condsamplers import TreeGPSampler, infer_space
from condsamplers.path_patience import last_improvement, on_path, paths_out_of_patience
from condsamplers.samplers.proposals import read_proposal

optuna.logging.set_verbosity(optuna.logging.WARNING)

KINDS = ("flat", "slope", "bowl")


def _objective(trial: optuna.Trial) -> float:
    """``flat``'s value is 0.5 wherever its ``x`` is: its first trial is its best, and it
    beats the other two kinds' best (1.0) by far."""
    kind = trial.suggest_categorical("kind", KINDS)
    x = trial.suggest_float(f"{kind}_x", 0.0, 1.0)
    if kind == "flat":
        return 0.5
    return 1.0 + (x if kind == "slope" else (x - 0.5) ** 2)


def _study(sampler: optuna.samplers.BaseSampler, n_trials: int) -> optuna.Study:
    study = optuna.create_study(sampler=sampler)
    study.optimize(_objective, n_trials=n_trials)
    return study


def _since_improvement(values: list[float], kinds: list[str], kind: str, t: int) -> int:
    """Trials of ``kind`` among the first ``t`` after the last new best before trial ``t``."""
    since = last_improvement(np.asarray(values[:t])) + 1
    return sum(k == kind for k in kinds[since:t])


def _fast(**options: object) -> TreeGPSampler:
    return TreeGPSampler(
        seed=0, n_startup_trials=6, n_candidates=64, n_local_search=1, n_restarts=0, **options
    )


@pytest.mark.parametrize(
    ("y", "index"), [([3.0], 0), ([3.0, 2.0, 2.0, 5.0], 1), ([3.0, 2.0, 2.0, 1.0, 1.0, 4.0], 3)]
)
def test_the_last_improvement_is_the_last_value_below_every_earlier_one(
    y: list[float], index: int
) -> None:
    assert last_improvement(np.asarray(y)) == index


def test_a_path_sits_out_once_it_has_had_patience_trials_since_the_last_new_best() -> None:
    study = _study(optuna.samplers.RandomSampler(seed=1), 24)
    space = infer_space(study.trials)
    paths = space.paths()
    assert paths is not None and len(paths) == 3
    X, active, _ = space.encode_trials(study.trials)
    kinds = [t.params["kind"] for t in study.trials]
    for path in paths:  # each trial lies on the path of its kind, and on no other
        rows = on_path(space, path, X, active)
        assert len({kinds[i] for i in np.flatnonzero(rows)}) == 1
    assert sum(on_path(space, p, X, active).sum() for p in paths) == len(kinds)

    y = np.array([t.value for t in study.trials])
    since = last_improvement(y) + 1
    counts = {p: int(on_path(space, p, X[since:], active[since:]).sum()) for p in paths}
    for patience in (1, 2, 3, 5):
        out = paths_out_of_patience(space, paths, X, active, y, patience)
        expected = [p for p in paths if counts[p] >= patience]
        assert out == (expected if len(expected) < len(paths) else [])


def test_every_path_is_kept_where_all_would_sit_out() -> None:
    study = _study(optuna.samplers.RandomSampler(seed=2), 30)
    space = infer_space(study.trials)
    paths = space.paths()
    assert paths is not None
    X, active, _ = space.encode_trials(study.trials)
    y = np.zeros(len(study.trials))  # the first trial is the best: every later one counts
    assert paths_out_of_patience(space, paths, X, active, y, 1) == []


def test_the_sampler_leaves_a_branch_that_stopped_paying_after_patience_trials() -> None:
    patience = 3
    study = _study(_fast(path_patience=patience), 24)
    values = [t.value for t in study.trials]
    kinds = [t.params["kind"] for t in study.trials]
    sat_out = 0
    for t in range(6, len(kinds)):  # the model-based trials
        out = {k for k in KINDS if _since_improvement(values, kinds, k, t) >= patience}
        if len(out) < len(KINDS):  # (where every kind would sit out, none does)
            assert kinds[t] not in out, f"trial {t} went to {kinds[t]} after {patience} misses"
            sat_out += bool(out)
    assert sat_out > 0
    # ... while without patience the flat branch, whose first trial beats every other, takes
    # most of the model-based trials
    flat_default = [t.params["kind"] for t in _study(_fast(), 24).trials[6:]].count("flat")
    assert flat_default > kinds[6:].count("flat")


@pytest.mark.parametrize("acquisition", ["two_step", "joint"])
def test_a_trial_whose_given_values_lead_to_a_path_that_sits_out_is_still_proposed(
    acquisition: str,
) -> None:
    """An enqueued ``kind="flat"`` after flat's patience ran out: the model proposes flat's
    own parameters, given the kind (a recorded proposal), instead of none."""
    study = _study(_fast(path_patience=1, acquisition=acquisition), 12)
    values = [t.value for t in study.trials]
    kinds = [t.params["kind"] for t in study.trials]
    assert _since_improvement(values, kinds, "flat", len(kinds)) >= 1
    study.enqueue_trial({"kind": "flat"})
    study.optimize(_objective, n_trials=1)
    trial = study.trials[-1]
    proposal = read_proposal(trial)
    assert trial.params["kind"] == "flat"
    assert proposal is not None and proposal.params == trial.params


def test_path_patience_gives_the_same_suggestions_for_the_same_seed() -> None:
    first = [t.params for t in _study(_fast(path_patience=2), 14).trials]
    assert first == [t.params for t in _study(_fast(path_patience=2), 14).trials]


@pytest.mark.parametrize("patience", [0, -1, 2.5, True])
def test_path_patience_must_be_a_positive_integer(patience: object) -> None:
    with pytest.raises(ValueError, match="path_patience"):
        TreeGPSampler(path_patience=patience)  # type: ignore[arg-type]
