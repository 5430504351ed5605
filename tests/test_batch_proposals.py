"""Batch and parallel proposals (docs/batch.md): recorded proposals, pending points, races,
Monte-Carlo fantasies; several threads, several OS processes on one storage, ask-and-tell."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import numpy as np
import optuna
import pytest
from conftest import FAST_BY_SAMPLER
from optuna.distributions import (
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
    distribution_to_json,
)
from optuna.trial import TrialState

import condsamplers
from benchmarks.batch_spread import blind, history, objective, smallest_distance
from condsamplers.samplers import base, proposals
from condsamplers.samplers.base import MAX_RACE_RETRIES, ConditionalSampler
from condsamplers.samplers.proposals import (
    PROPOSAL_ATTR,
    Configuration,
    encode_pending,
    first_new_configuration,
    params_key,
    read_proposal,
)

optuna.logging.set_verbosity(optuna.logging.WARNING)
FAST = dict(n_candidates=64, n_local_search=2, n_restarts=0)
#: The neural samplers' test-sized networks (tests/conftest.py), with this file's few candidates.
FAST_BY_NAME = {
    "DNGOSampler": dict(FAST_BY_SAMPLER["dngo"], n_candidates=64),
    "BOHAMIANNSampler": dict(FAST_BY_SAMPLER["bohamiann"], n_candidates=64),
}
#: Samplers whose fit is deterministic given the data: blind to each other, their proposals
#: pile up at one maximiser. A neural network is trained from a fresh seed at each step, so
#: its blind proposals already differ.
DETERMINISTIC_FIT = ("ArcGPSampler", "BNGPSampler", "TreeGPSampler")
N_STARTUP = 4

#: Every sampler of the library (all go through the shared base).
SAMPLER_CLASSES: dict[str, type[ConditionalSampler]] = {
    name: getattr(condsamplers, name)
    for name in condsamplers.__all__
    if isinstance(getattr(condsamplers, name), type)
    and issubclass(getattr(condsamplers, name), ConditionalSampler)
    and getattr(condsamplers, name) is not ConditionalSampler
}


def _fast(name: str) -> dict[str, Any]:
    return FAST_BY_NAME.get(name, FAST)


def _assert_all_complete_and_distinct(study: optuna.Study, n_trials: int) -> None:
    trials = study.get_trials(deepcopy=False)
    assert len(trials) == n_trials
    assert all(t.state == TrialState.COMPLETE for t in trials)
    keys = [params_key(t.params) for t in trials]
    assert len(set(keys)) == len(keys), "two trials have identical parameters"


def _assert_proposals_recorded(study: optuna.Study, n_model_trials: int) -> None:
    """Model-based trials carry their whole proposal, and evaluated it: every parameter the
    trial asked for that the proposal holds has the proposed value. (The two sets may differ:
    a tree inferred from few trials, say when every COMPLETE trial took one branch, makes the
    other branch's parameters look like root ones; the objective then asks for parameters the
    proposal lacks, sampled independently, and ignores proposed ones it does not use.)"""
    recorded = [(t, read_proposal(t)) for t in study.get_trials(deepcopy=False)]
    with_proposal = [(t, r) for t, r in recorded if r is not None]
    assert len(with_proposal) >= n_model_trials
    for trial, proposal in with_proposal:
        shared = proposal.params.keys() & trial.params.keys()
        assert shared and all(proposal.params[k] == trial.params[k] for k in shared)


# -- (a) several OS processes on one storage -------------------------------------------------

WORKER = textwrap.dedent(
    """
    import os
    import sys

    import optuna
    from optuna.samplers import RandomSampler

    import condsamplers

    sys.path.insert(0, sys.argv[5])
    sys.path.insert(1, os.path.dirname(sys.argv[5]))  # the repository root: benchmarks/
    from test_batch_proposals import FAST, N_STARTUP, objective, open_storage

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage_kind, location, sampler_name, worker = sys.argv[1:5]
    sampler = getattr(condsamplers, sampler_name)(
        seed=0,  # the same model seed in every worker: concurrent proposals can collide
        n_startup_trials=N_STARTUP,
        independent_sampler=RandomSampler(seed=100 + int(worker)),
        **FAST,
    )
    study = optuna.load_study(
        study_name="batch", storage=open_storage(storage_kind, location), sampler=sampler
    )
    study.optimize(objective, n_trials=int(sys.argv[6]))
    """
)


def open_storage(kind: str, location: str) -> optuna.storages.BaseStorage:
    if kind == "journal":
        backend = optuna.storages.journal.JournalFileBackend(location)
        return optuna.storages.JournalStorage(backend)
    return optuna.storages.RDBStorage(
        f"sqlite:///{location}", engine_kwargs={"connect_args": {"timeout": 60}}
    )


@pytest.mark.parametrize("storage_kind", ["journal", "sqlite"])
@pytest.mark.parametrize("sampler_name", ["ArcGPSampler", "TreeGPSampler"])
def test_processes_on_one_storage(tmp_path: Path, storage_kind: str, sampler_name: str) -> None:
    n_workers, n_each = 2, 8
    location = str(tmp_path / ("journal.log" if storage_kind == "journal" else "study.db"))
    storage = open_storage(storage_kind, location)
    optuna.create_study(study_name="batch", storage=storage)
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    here = str(Path(__file__).resolve().parent)
    workers = [
        subprocess.Popen(
            [sys.executable, str(script), storage_kind, location, sampler_name, str(w)]
            + [here, str(n_each)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for w in range(n_workers)
    ]
    outputs = [w.communicate(timeout=300)[0] for w in workers]
    assert [w.returncode for w in workers] == [0] * n_workers, outputs
    study = optuna.load_study(study_name="batch", storage=open_storage(storage_kind, location))
    _assert_all_complete_and_distinct(study, n_workers * n_each)
    _assert_proposals_recorded(study, n_workers * n_each - 2 * N_STARTUP - n_workers)


# -- (b) threads: study.optimize(n_jobs=3) ---------------------------------------------------


@pytest.mark.parametrize("name", sorted(SAMPLER_CLASSES))
def test_threads(name: str) -> None:
    sampler = SAMPLER_CLASSES[name](seed=0, n_startup_trials=N_STARTUP, **_fast(name))
    study = optuna.create_study(sampler=sampler)
    study.optimize(objective, n_trials=15, n_jobs=3)
    _assert_all_complete_and_distinct(study, 15)
    _assert_proposals_recorded(study, 15 - N_STARTUP - 3)


# -- (c) ask-and-tell with 5 open trials -----------------------------------------------------


def _ask_batch(study: optuna.Study, size: int, suggest_all: bool = True) -> list[optuna.Trial]:
    """Ask ``size`` trials, each suggesting (all of, or only the first parameter of) its
    configuration before the next is asked; checks each proposal is recorded by then."""
    trials = []
    for _ in range(size):
        trial = study.ask()
        if suggest_all:
            objective(trial)
        else:
            trial.suggest_categorical("kind", ["a", "b"])
        stored = study._storage.get_trial(trial._trial_id)
        proposal = read_proposal(stored)
        assert proposal is not None, "the proposal must be recorded before the next ask"
        assert {k: v for k, v in proposal.params.items() if k in stored.params} == stored.params
        trials.append(trial)
    return trials


@pytest.mark.parametrize("name", sorted(SAMPLER_CLASSES))
@pytest.mark.parametrize("n_fantasies", [0, 4])
def test_ask_and_tell_batch_is_spread_by_pending_points(name: str, n_fantasies: int) -> None:
    spreads = {}
    for is_blind in (False, True):
        make = blind(SAMPLER_CLASSES[name]) if is_blind else SAMPLER_CLASSES[name]
        sampler = make(seed=1, n_startup_trials=N_STARTUP, n_fantasies=n_fantasies, **_fast(name))
        study = history(sampler)
        trials = _ask_batch(study, 5)
        params = [study._storage.get_trial(t._trial_id).params for t in trials]
        assert len({params_key(p) for p in params}) == 5
        spreads[is_blind] = smallest_distance(params)
        for trial in trials:
            study.tell(trial, objective(trial))
    # Blind to each other, the 5 proposals pile up at the maximiser of the same EI; with the
    # earlier ones pending, each later one is sent elsewhere.
    spread_out = spreads[False] > 0.05 and spreads[False] > 5 * spreads[True]
    if name not in DETERMINISTIC_FIT and not spread_out:
        pytest.xfail(
            "known weakness, open (docs/batch.md): the pending trials barely move the "
            f"neural samplers' proposals; spread {spreads[False]:.3f} seeing them, "
            f"{spreads[True]:.3f} blind (test-sized networks)"
        )
    assert spreads[False] > 0.05
    assert spreads[False] > 5 * spreads[True]


def test_recorded_proposals_are_the_pending_points(monkeypatch: pytest.MonkeyPatch) -> None:
    """Trials that have suggested only their branch enter as whole configurations."""
    seen: list[np.ndarray] = []
    propose = base.propose

    def spy(space, data, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(data.active_pending.sum(axis=1))
        return propose(space, data, *args, **kwargs)

    monkeypatch.setattr(base, "propose", spy)
    study = history(condsamplers.ArcGPSampler(seed=0, n_startup_trials=N_STARTUP, **FAST))
    seen.clear()
    trials = _ask_batch(study, 4, suggest_all=False)
    assert [len(s) for s in seen] == [0, 1, 2, 3]
    for s in seen:  # each pending trial has its branch, x, and y or n active: 3 columns
        assert list(s) == [3] * len(s)
    proposals = [read_proposal(study._storage.get_trial(t._trial_id)) for t in trials]
    assert len({params_key(p.params) for p in proposals if p is not None}) == 4


@pytest.mark.parametrize("name", sorted(SAMPLER_CLASSES))
def test_another_workers_half_suggested_trials_leave_the_model_usable(
    name: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Four RUNNING trials of a worker with another sampler have suggested their branch and
    nothing else yet: the model still proposes (the BN kernel of such partial points was
    indefinite and the sampler fell back to random sampling)."""
    study = history(SAMPLER_CLASSES[name](seed=0, n_startup_trials=N_STARTUP, **_fast(name)))
    other = optuna.load_study(
        study_name=study.study_name,
        storage=study._storage,
        sampler=optuna.samplers.RandomSampler(seed=0),
    )
    for _ in range(4):
        other.ask().suggest_categorical("kind", ["a", "b"])
    with caplog.at_level("WARNING", logger="optuna"):
        trial = study.ask()
        objective(trial)
    assert read_proposal(study._storage.get_trial(trial._trial_id)) is not None
    assert "could not be fitted" not in caplog.text


# -- races between workers -------------------------------------------------------------------


def test_a_concurrently_recorded_duplicate_is_proposed_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another worker records the same configuration while this one proposes; this one sees
    it on re-reading and proposes something else, with that trial as pending."""
    sampler = condsamplers.ArcGPSampler(seed=0, n_startup_trials=N_STARTUP, **FAST)
    study = history(sampler)
    rival = study.ask()  # another worker's open trial, with no proposal yet
    calls: list[dict[str, Any]] = []
    record = proposals.record_proposal

    def racing_record(study_, trial, proposal):  # type: ignore[no-untyped-def]
        record(study_, trial, proposal)
        if not calls:  # the rival records the same configuration at the same time
            record(study_, study_._storage.get_trial(rival._trial_id), proposal)
        calls.append(proposal.params)

    monkeypatch.setattr(base, "record_proposal", racing_record)
    trial = study.ask()
    objective(trial)
    assert len(calls) == 2
    assert calls[1] != calls[0]
    assert trial.params == calls[1]
    assert read_proposal(study._storage.get_trial(trial._trial_id)).params == calls[1]


def test_a_retry_that_fails_withdraws_the_first_record(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first proposal is duplicated by a concurrent worker; the retry finds nothing (say,
    every candidate repeats a trial): the trial goes to the independent sampler, and its
    record must not claim the abandoned proposal."""
    sampler = condsamplers.ArcGPSampler(seed=0, n_startup_trials=N_STARTUP, **FAST)
    study = history(sampler)
    propose = ConditionalSampler._propose

    def first_only(self, study_, trial, complete, given, attempt=0):  # type: ignore[no-untyped-def]
        return propose(self, study_, trial, complete, given, attempt) if attempt == 0 else None

    monkeypatch.setattr(ConditionalSampler, "_propose", first_only)
    monkeypatch.setattr(base, "rival_trial", lambda *args: 0)
    trial = study.ask()
    objective(trial)
    assert read_proposal(study._storage.get_trial(trial._trial_id)) is None


def test_endless_races_fall_back_to_the_independent_sampler(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    sampler = condsamplers.ArcGPSampler(seed=0, n_startup_trials=N_STARTUP, **FAST)
    study = history(sampler)
    monkeypatch.setattr(base, "rival_trial", lambda *args: 0)
    with caplog.at_level("INFO", logger="optuna.condsamplers"):
        trial = study.ask()
        objective(trial)
    assert f"{MAX_RACE_RETRIES + 1} proposals in a row" in caplog.text
    assert read_proposal(study._storage.get_trial(trial._trial_id)) is None
    assert set(trial.params) >= {"kind", "x"}


def test_trials_completed_while_a_thread_waits_for_the_lock_are_learnt_from(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A thread's step waits for the sampler's lock (another thread proposes); a trial
    completes meanwhile. Once the step holds the lock, its model learns from that trial too
    (before, it was fitted to the trials of before the wait, and knew nothing at all there)."""
    sampler = condsamplers.ArcGPSampler(seed=0, n_startup_trials=N_STARTUP, **FAST)
    study = history(sampler)
    learnt: list[int] = []
    observations = ConditionalSampler._observations

    def spy(self, study_, space, complete, trial):  # type: ignore[no-untyped-def]
        learnt.append(len(complete))
        return observations(self, study_, space, complete, trial)

    monkeypatch.setattr(ConditionalSampler, "_observations", spy)
    trial = study.ask()
    frozen = study._storage.get_trial(trial._trial_id)
    space = sampler.infer_relative_search_space(study, frozen)
    results: list[dict[str, Any]] = []
    with sampler._lock:  # another thread's step
        waiting = threading.Thread(
            target=lambda: results.append(sampler.sample_relative(study, frozen, space))
        )
        waiting.start()
        waiting.join(timeout=0.5)
        assert waiting.is_alive(), "the step must wait for the lock"
        study.add_trial(
            optuna.trial.create_trial(
                params={"kind": "a", "x": 0.3, "y": 0.5},
                distributions={"kind": KIND, "x": X_DIST, "y": Y_DIST},
                value=0.0,
            )
        )
    waiting.join()
    assert results and results[0]
    assert learnt == [13]


def _record(params: dict[str, Any], distributions: dict[str, Any]) -> dict[str, Any]:
    return {
        "format": 1,
        "params": params,
        "distributions": {k: distribution_to_json(d) for k, d in distributions.items()},
    }


KIND = CategoricalDistribution(["a", "b"])
X_DIST, Y_DIST = FloatDistribution(-1.0, 1.0), FloatDistribution(0.0, 1.0)


def test_first_new_refuses_another_running_trials_recorded_proposal() -> None:
    sampler = condsamplers.ArcGPSampler(seed=3, n_startup_trials=N_STARTUP, **FAST)
    study = history(sampler)
    claimed = {"kind": "a", "x": 0.25, "y": 0.5}
    free = {"kind": "a", "x": 0.25, "y": 0.75}
    other = study.ask()  # open, nothing suggested yet, only its recorded proposal
    dists = {"kind": KIND, "x": X_DIST, "y": Y_DIST}
    study._storage.set_trial_system_attr(other._trial_id, PROPOSAL_ATTR, _record(claimed, dists))
    space = sampler.conditional_space(study)
    X, A = zip(*(space.encode_trial(p, dists) for p in (claimed, free)), strict=True)
    new = study._storage.get_trial(study.ask()._trial_id)
    chosen = first_new_configuration(space, np.stack(X), np.stack(A), study, new)
    assert chosen is not None and chosen.params == pytest.approx(free)
    assert not chosen.repeats_pending
    # Only the claimed candidate left (an exhausted space): it is returned, marked as a repeat.
    repeat = first_new_configuration(space, np.stack(X[:1]), np.stack(A[:1]), study, new)
    assert repeat is not None and repeat.repeats_pending
    assert repeat.params == pytest.approx(claimed)
    # A candidate that repeats a COMPLETE trial is never returned.
    done = study.trials[0]
    x, a = space.encode_trial(done.params, done.distributions)
    assert first_new_configuration(space, x[None], a[None], study, new) is None


def test_a_claim_that_holds_more_than_the_candidate_is_refused() -> None:
    """Another open trial's claim holds the candidate's values and one more (``y``, proposed
    from an older tree in which ``y`` did not depend on ``kind``): evaluating the candidate
    would repeat that trial, so it is refused, by the step and by the re-reading of rivals."""
    sampler = condsamplers.ArcGPSampler(seed=3, n_startup_trials=N_STARTUP, **FAST)
    study = history(sampler)
    n_dist = IntDistribution(1, 4)
    candidate = {"kind": "b", "x": 1.0, "n": 4}
    free = {"kind": "b", "x": 1.0, "n": 3}
    other = study.ask()
    claim, dists = {**candidate, "y": 1.0}, {"kind": KIND, "x": X_DIST, "y": Y_DIST, "n": n_dist}
    study._storage.set_trial_system_attr(other._trial_id, PROPOSAL_ATTR, _record(claim, dists))
    space = sampler.conditional_space(study)
    X, A = zip(*(space.encode_trial(p, dists) for p in (candidate, free)), strict=True)
    new = study._storage.get_trial(study.ask()._trial_id)
    chosen = first_new_configuration(space, np.stack(X), np.stack(A), study, new)
    assert chosen is not None and chosen.params == free and not chosen.repeats_pending
    as_proposal = {"kind": KIND, "x": X_DIST, "n": n_dist}
    assert proposals.rival_trial(study, new, Configuration(candidate, as_proposal)) == other.number
    assert proposals.rival_trial(study, new, Configuration(free, as_proposal)) is None


def test_copies_of_a_claimed_candidate_do_not_pass_for_an_exhausted_space() -> None:
    """Several local searches can end at one corner of the box: 40 copies of another open
    trial's configuration at the top of the candidate list, then a free one. The free one is
    proposed, not a repeat (test_threads[DNGOSampler] once evaluated a corner twice so)."""
    sampler = condsamplers.ArcGPSampler(seed=3, n_startup_trials=N_STARTUP, **FAST)
    study = history(sampler)
    corner = {"kind": "a", "x": -1.0, "y": 0.0}
    free = {"kind": "a", "x": 0.25, "y": 0.75}
    other = study.ask()
    dists = {"kind": KIND, "x": X_DIST, "y": Y_DIST}
    study._storage.set_trial_system_attr(other._trial_id, PROPOSAL_ATTR, _record(corner, dists))
    space = sampler.conditional_space(study)
    (x_corner, a_corner), (x_free, a_free) = (space.encode_trial(p, dists) for p in (corner, free))
    X = np.stack([x_corner] * 40 + [x_free])
    A = np.stack([a_corner] * 40 + [a_free])
    new = study._storage.get_trial(study.ask()._trial_id)
    chosen = first_new_configuration(space, X, A, study, new)
    assert chosen is not None and not chosen.repeats_pending
    assert chosen.params == pytest.approx(free)


def test_an_exhausted_space_is_shared_by_open_trials() -> None:
    """More open trials than configurations: each still gets a model-based proposal, the
    first ones all distinct."""
    sampler = condsamplers.ArcGPSampler(seed=0, n_startup_trials=1, **FAST)
    study = optuna.create_study(sampler=sampler)
    space = {"u": CategoricalDistribution([1, 2]), "w": CategoricalDistribution([3, 4])}
    study.tell(study.ask(space), 0.0)
    trials = [study.ask(space) for _ in range(5)]
    configurations = [params_key(t.params) for t in trials]
    assert len(set(configurations[:3])) == 3
    assert all(read_proposal(study._storage.get_trial(t._trial_id)) for t in trials)


# -- (d) unreadable or incompatible recorded proposals --------------------------------------


GARBAGE: list[Any] = [
    "junk",
    42,
    None,
    {"format": 99, "params": {"x": 0.1}, "distributions": {}},
    {"format": 1, "params": "x", "distributions": {}},
    {"format": 1, "params": {"x": 0.1}, "distributions": "nope"},
    {"format": 1, "params": {"x": 0.1}, "distributions": {"x": "not json"}},
    {"format": 1, "params": {"x": [1, 2]}, "distributions": {"x": '{"name": "Foo"}'}},
    {
        "format": 1,
        "params": {"x": 7.0, "kind": "zzz", "unknown": 3, "n": 99},
        "distributions": {
            "x": distribution_to_json(FloatDistribution(-10.0, 10.0)),
            "kind": distribution_to_json(CategoricalDistribution(["zzz", "a"])),
            "unknown": distribution_to_json(IntDistribution(0, 5)),
            "n": distribution_to_json(IntDistribution(1, 200)),
        },
    },
]


@pytest.mark.parametrize("name", sorted(SAMPLER_CLASSES))
def test_garbage_proposals_do_not_break_a_suggestion(name: str) -> None:
    sampler = SAMPLER_CLASSES[name](seed=0, n_startup_trials=N_STARTUP, **_fast(name))
    study = history(sampler)
    open_trials = []
    for value in GARBAGE:
        trial = study.ask()
        study._storage.set_trial_system_attr(trial._trial_id, PROPOSAL_ATTR, value)
        open_trials.append(trial)
    space = sampler.conditional_space(study)
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        encoded = encode_pending(space, t)
        assert encoded is None or (np.isfinite(encoded[0]).all() and encoded[1].any())
    trial = study.ask()
    value = objective(trial)
    study.tell(trial, value)
    assert read_proposal(study._storage.get_trial(trial._trial_id)) is not None
    assert study.trials[trial.number].state == TrialState.COMPLETE


def test_encoding_of_pending_trials() -> None:
    study = history(condsamplers.ArcGPSampler(seed=0, n_startup_trials=N_STARTUP, **FAST))
    space = condsamplers.ArcGPSampler(seed=0).conditional_space(study)
    column = {node.name: space.index[node.key] for node in space.nodes}
    dists = {"kind": KIND, "x": X_DIST, "y": Y_DIST}

    def pending(actual: dict[str, Any], proposal: Any) -> tuple[np.ndarray, np.ndarray] | None:
        trial_id = study.ask()._trial_id
        for name, value in actual.items():
            distribution = dists[name]
            internal = distribution.to_internal_repr(value)
            study._storage.set_trial_param(trial_id, name, internal, distribution)
        study._storage.set_trial_system_attr(trial_id, PROPOSAL_ATTR, proposal)
        return encode_pending(space, study._storage.get_trial(trial_id))

    proposal = _record({"kind": "a", "x": 0.0, "y": 0.25}, dists)
    # A whole recorded proposal: every column of its path is active.
    x, a = pending({}, proposal)
    assert set(np.flatnonzero(a)) == {column["kind"], column["x"], column["y"]}
    assert x[column["x"]] == pytest.approx(0.5) and x[column["y"]] == pytest.approx(0.25)
    # The params the trial has win over its proposal ...
    x, a = pending({"x": 0.5}, proposal)
    assert set(np.flatnonzero(a)) == {column["kind"], column["x"], column["y"]}
    assert x[column["x"]] == pytest.approx(0.75)
    # ... and a proposed parameter that the trial's actual branch makes inactive is dropped.
    x, a = pending({"kind": "b"}, proposal)
    assert set(np.flatnonzero(a)) == {column["kind"], column["x"]}
    assert x[column["kind"]] == 1
    # x recorded under a wider distribution, with a value outside the current one: skipped.
    wide = _record({"kind": "a", "x": 5.0, "y": 0.25}, {**dists, "x": FloatDistribution(-9, 9)})
    _, a = pending({}, wide)
    assert set(np.flatnonzero(a)) == {column["kind"], column["y"]}
    # Withdrawn proposal and no params: nothing to encode; withdrawn with params: the params.
    assert pending({}, None) is None
    _, a = pending({"kind": "b"}, None)
    assert set(np.flatnonzero(a)) == {column["kind"]}


# -- (e) Monte-Carlo fantasies ---------------------------------------------------------------


def _proposals_with_pending(n_fantasies: int, seed: int) -> list[dict[str, Any]]:
    sampler = condsamplers.TreeGPSampler(
        seed=seed, n_startup_trials=N_STARTUP, n_fantasies=n_fantasies, **FAST
    )
    study = history(sampler)
    return [study._storage.get_trial(t._trial_id).params for t in _ask_batch(study, 3)]


def test_monte_carlo_fantasies_are_deterministic_given_the_seed() -> None:
    first = _proposals_with_pending(n_fantasies=4, seed=5)
    assert _proposals_with_pending(n_fantasies=4, seed=5) == first
    # ... and they are a different acquisition than the believer's once trials are pending.
    believer = _proposals_with_pending(n_fantasies=0, seed=5)
    assert believer[0] == first[0]  # nothing pending yet: the same step
    assert believer[1:] != first[1:]


def test_n_fantasies_is_validated() -> None:
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="n_fantasies"):
            condsamplers.ArcGPSampler(n_fantasies=bad)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="n_fantasies"):
            condsamplers.TreeGPSampler(n_fantasies=bad)  # type: ignore[arg-type]


def test_a_configuration_within_the_resolution_of_a_pending_one_is_near() -> None:
    from optuna.distributions import CategoricalDistribution, IntDistribution

    from condsamplers.samplers.proposals import near_configuration

    distributions = {
        "x": FloatDistribution(0.0, 1.0),
        "lr": FloatDistribution(1e-4, 1.0, log=True),
        "k": IntDistribution(1, 10),
        "c": CategoricalDistribution(["a", "b"]),
    }
    base = {"x": 0.3, "lr": 0.01, "k": 3, "c": "a"}

    def config(**changes) -> Configuration:
        return Configuration({**base, **changes}, distributions)

    assert near_configuration(config(x=0.3 + 5e-7), base)
    assert near_configuration(config(lr=0.01 * (1 + 1e-6)), base)  # log scale: 1e-6 / 9.2
    assert not near_configuration(config(x=0.3 + 2e-6), base)
    assert not near_configuration(config(lr=0.0101), base)
    assert not near_configuration(config(k=4), base)
    assert not near_configuration(config(c="b"), base)
    assert not near_configuration(config(), {**base, "extra": 1})


def test_a_candidate_within_the_resolution_of_a_finished_trial_is_not_proposed() -> None:
    """A candidate within 1e-6 of its range of a COMPLETE trial is skipped by the step and
    found as a rival after recording (two workers whose local searches end at one optimum)."""
    distributions = {"x": FloatDistribution(0.0, 1.0), "y": FloatDistribution(0.0, 1.0)}
    study = optuna.create_study()
    for x in (0.2, 0.5, 0.8):
        study.add_trial(
            optuna.create_trial(params={"x": x, "y": x}, distributions=distributions, value=x)
        )
    space = condsamplers.TreeGPSampler(seed=0).conditional_space(study)
    new = study._storage.get_trial(study.ask()._trial_id)
    near, far = {"x": 0.5 + 4e-7, "y": 0.5}, {"x": 0.5 + 1e-3, "y": 0.5}
    X, A = zip(*(space.encode_trial(p, distributions) for p in (near, far)), strict=True)
    chosen = first_new_configuration(space, np.stack(X), np.stack(A), study, new)
    assert chosen is not None and chosen.params == pytest.approx(far)
    assert proposals.rival_trial(study, new, Configuration(near, distributions)) == 1
    assert proposals.rival_trial(study, new, Configuration(far, distributions)) is None
