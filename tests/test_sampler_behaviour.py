"""The samplers (and their shared base) as an Optuna user sees them; every test runs for
every sampler of the library."""

from __future__ import annotations

import copy
import logging
import math
import pickle

import numpy as np
import optuna
import pytest
from optuna.distributions import FloatDistribution, IntDistribution
from optuna.trial import TrialState

from condsamplers import BOHAMIANNSampler, DNGOSampler
from condsamplers.samplers.proposals import (
    PROPOSAL_ATTR,
    Configuration,
    params_key,
    read_proposal,
    record_proposal,
)
from condsamplers.warping import log_regret

optuna.logging.set_verbosity(optuna.logging.WARNING)


def _tree(trial: optuna.Trial) -> float:
    branch = trial.suggest_categorical("branch", ["left", "right"])
    if branch == "left":
        return trial.suggest_float("a", -1, 1) ** 2 + 0.1
    return (trial.suggest_float("b", -1, 1) - 0.5) ** 2 + 0.2


def test_same_seed_gives_same_suggestions(make_sampler) -> None:
    runs = []
    for _ in range(2):
        study = optuna.create_study(sampler=make_sampler())
        study.optimize(_tree, n_trials=12)
        runs.append([t.params for t in study.trials])
    assert runs[0] == runs[1]


def test_finds_the_best_leaf_of_a_small_tree(make_sampler) -> None:
    study = optuna.create_study(sampler=make_sampler(**{"n_candidates": 256}))
    study.optimize(_tree, n_trials=25)
    assert study.best_params["branch"] == "left"
    assert study.best_value < 0.1 + 1e-3


def test_maximize_is_minimize_of_the_negation(make_sampler) -> None:
    minimised = optuna.create_study(sampler=make_sampler())
    minimised.optimize(_tree, n_trials=12)
    maximised = optuna.create_study(sampler=make_sampler(), direction="maximize")
    maximised.optimize(lambda t: -_tree(t), n_trials=12)
    assert [t.params for t in minimised.trials] == [t.params for t in maximised.trials]


def test_nan_and_failed_trials_are_skipped(make_sampler) -> None:
    study = optuna.create_study(sampler=make_sampler())
    study.optimize(lambda t: _tree(t) if t.number % 3 else float("nan"), n_trials=15)
    states = [t.state for t in study.trials]
    assert states.count(TrialState.FAIL) == 5
    assert states.count(TrialState.COMPLETE) == 10


def test_all_trials_failed_falls_back_to_independent_sampling(make_sampler) -> None:
    study = optuna.create_study(sampler=make_sampler(n_startup_trials=0))
    study.optimize(lambda t: _tree(t) * float("nan"), n_trials=4)
    assert all(t.state == TrialState.FAIL for t in study.trials)
    assert len({str(t.params) for t in study.trials}) == 4


def test_infinite_values_are_clipped_with_a_warning(
    make_sampler, caplog: pytest.LogCaptureFixture
) -> None:
    study = optuna.create_study(sampler=make_sampler())
    with caplog.at_level(logging.WARNING):
        study.optimize(lambda t: _tree(t) * (1.0 if t.number % 4 else math.inf), n_trials=10)
    assert "infinite objective value" in caplog.text
    assert all(t.state == TrialState.COMPLETE for t in study.trials)


def test_the_infinite_value_warning_is_logged_once_per_study(
    make_sampler, caplog: pytest.LogCaptureFixture
) -> None:
    study = optuna.create_study(sampler=make_sampler(n_startup_trials=3))
    with caplog.at_level(logging.WARNING, logger="optuna.condsamplers"):
        study.optimize(lambda t: _tree(t) * (math.inf if t.number == 0 else 1.0), n_trials=8)
        first = caplog.text.count("infinite objective value")
        study.optimize(lambda t: _tree(t) * math.inf, n_trials=1)
        study.optimize(_tree, n_trials=2)
    assert first == 1  # five model-based suggestions saw trial 0, one line
    assert caplog.text.count("infinite objective value") == 1  # not again for a new one


@pytest.mark.parametrize("trigger", ["return", "prune", "add_trial"])
def test_a_trial_without_parameters_is_left_out_and_the_study_stays_model_based(
    make_sampler, trigger: str, caplog: pytest.LogCaptureFixture
) -> None:
    """An objective that returns or prunes before its first suggest, or a baseline added
    without params: the model leaves that trial out (one notice) and keeps proposing; before,
    every later candidate counted as a repeat of the empty trial and went to random search."""

    def objective(trial: optuna.Trial) -> float:
        if trial.number == 2 and trigger == "return":
            return 1.0
        if trial.number == 2 and trigger == "prune":
            raise optuna.TrialPruned()
        return _tree(trial)

    study = optuna.create_study(sampler=make_sampler(n_startup_trials=3))
    with caplog.at_level(logging.WARNING, logger="optuna.condsamplers"):
        if trigger == "add_trial":
            study.add_trial(optuna.trial.create_trial(value=1.0))
        study.optimize(objective, n_trials=9 if trigger == "add_trial" else 10)
    assert len(study.trials) == 10
    assert sum(read_proposal(t) is not None for t in study.trials) == 6  # all after startup
    # A pruned trial that reported nothing is no observation in any case: no notice for it.
    assert caplog.text.count("without parameters") == (0 if trigger == "prune" else 1)


def test_constant_objective_and_a_single_trial(make_sampler) -> None:
    study = optuna.create_study(sampler=make_sampler(n_startup_trials=1))
    study.optimize(lambda t: t.suggest_float("x", 0, 1) * 0 + 3.0, n_trials=6)
    xs = [t.params["x"] for t in study.trials]
    assert len(set(xs)) == 6 and all(0 <= x <= 1 for x in xs)


def test_duplicate_points_do_not_break_the_model_and_are_not_proposed_again(make_sampler) -> None:
    study = optuna.create_study(sampler=make_sampler(n_startup_trials=1))
    distributions = {"x": FloatDistribution(0, 1), "y": FloatDistribution(0, 1)}
    for _ in range(5):
        study.add_trial(
            optuna.create_trial(
                params={"x": 0.0, "y": 0.0}, distributions=distributions, value=0.0
            )
        )
    study.optimize(lambda t: t.suggest_float("x", 0, 1) + t.suggest_float("y", 0, 1), 3)
    new = [t.params for t in study.trials[5:]]
    assert all(p != {"x": 0.0, "y": 0.0} for p in new)


def test_a_nan_choice_is_one_configuration_and_is_not_repeated(
    make_sampler, caplog: pytest.LogCaptureFixture
) -> None:
    """``float("nan")`` is a valid categorical choice; ``nan != nan`` must neither make an
    evaluated configuration look new (9 trials over 9 configurations evaluate each once) nor
    make each trial's distribution look like a new one."""

    def objective(trial: optuna.Trial) -> float:
        a = trial.suggest_categorical("a", [float("nan"), 1.0, 2.0])
        b = trial.suggest_categorical("b", ["u", "v", "w"])
        return (0.0 if math.isnan(a) else a) + (b == "v")

    study = optuna.create_study(sampler=make_sampler(n_startup_trials=2))
    with caplog.at_level(logging.WARNING):
        study.optimize(objective, n_trials=9)
    assert len({params_key(t.params) for t in study.trials}) == 9
    assert "changed its distribution" not in caplog.text


def test_a_name_with_another_range_in_each_branch_is_modelled_in_both(make_sampler) -> None:
    """``x`` in [0, 1] under ``k == "a"`` and in [5, 10] under ``k == "b"`` (two variants of one
    name): every model-based trial evaluates its whole proposal, in either branch."""

    def objective(trial: optuna.Trial) -> float:
        if trial.suggest_categorical("k", ["a", "b"]) == "a":
            return (trial.suggest_float("x", 0, 1) - 0.3) ** 2
        return 0.5 + (trial.suggest_float("x", 5, 10) - 7) ** 2 / 25

    study = optuna.create_study(sampler=make_sampler(n_startup_trials=4))
    study.optimize(objective, n_trials=12)
    for trial in study.trials[4:]:
        proposal = read_proposal(trial)
        assert proposal is not None and proposal.params == trial.params
    assert {t.params["k"] for t in study.trials[4:]} >= {"a"}


def _b_is_better(trial: optuna.Trial) -> float:
    if trial.suggest_categorical("k", ["a", "b"]) == "a":
        return 0.5 + (trial.suggest_float("x", 0, 1) - 0.3) ** 2
    return (trial.suggest_int("n", 1, 10) - 4) ** 2 / 100


@pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")
@pytest.mark.parametrize("how", ["enqueue_trial", "PartialFixedSampler"])
def test_parameters_fixed_from_outside_condition_the_proposal(make_sampler, how: str) -> None:
    """With ``k`` fixed to the branch the model does not favour (a partial ``enqueue_trial``,
    or ``PartialFixedSampler``), the model still proposes the branch's own parameters, given
    ``k``: each trial evaluates a recorded proposal, none is sampled at random."""
    study = optuna.create_study(sampler=make_sampler(n_startup_trials=4))
    study.optimize(_b_is_better, n_trials=6)
    if how == "enqueue_trial":
        for _ in range(4):
            study.enqueue_trial({"k": "a"})
    else:
        study.sampler = optuna.samplers.PartialFixedSampler({"k": "a"}, study.sampler)
    study.optimize(_b_is_better, n_trials=4)
    for trial in study.trials[6:]:
        assert trial.params["k"] == "a"
        proposal = read_proposal(trial)
        assert proposal is not None and proposal.params == trial.params


class _RecordingRandomSampler(optuna.samplers.RandomSampler):
    """A random sampler that records the parameters it is asked for."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed=seed)
        self.asked: list[str] = []

    def sample_independent(self, study, trial, param_name, param_distribution):  # type: ignore[no-untyped-def]
        self.asked.append(param_name)
        return super().sample_independent(study, trial, param_name, param_distribution)


def test_a_parameter_the_proposal_lacks_is_proposed_clear_of_running_trials(
    make_sampler,
) -> None:
    """A trial's recorded proposal lacks ``n``, which the tree knows (in threads the tree can
    grow between a proposal and the trial's asking), and RUNNING trials hold every value of
    ``n`` but 5 on the trial's branch: the model proposes ``n`` given the trial's values and
    takes 5, the one value that duplicates no trial. A random draw would duplicate a RUNNING
    trial with a chance of 7 in 10."""
    independent = _RecordingRandomSampler(seed=0)
    study = optuna.create_study(
        sampler=make_sampler(n_startup_trials=4, independent_sampler=independent)
    )
    for params in (
        {"k": "a", "x": 0.2},
        {"k": "a", "x": 0.8},
        {"k": "b", "n": 2},
        {"k": "b", "n": 8},
    ):
        study.enqueue_trial(params)
    study.optimize(_b_is_better, n_trials=4)
    for n in (1, 3, 4, 6, 7, 9, 10):  # other workers' RUNNING trials
        study.enqueue_trial({"k": "b", "n": n})
        _b_is_better(study.ask())
    study.enqueue_trial({"k": "b"})
    trial = study.ask()
    assert trial.suggest_categorical("k", ["a", "b"]) == "b"
    frozen = next(t for t in study.get_trials(deepcopy=False) if t.number == trial.number)
    k_distribution = frozen.distributions["k"]
    record_proposal(study, frozen, Configuration({"k": "b"}, {"k": k_distribution}))
    asked_before = len(independent.asked)
    frozen = next(t for t in study.get_trials(deepcopy=False) if t.number == trial.number)
    n = study.sampler.sample_independent(study, frozen, "n", IntDistribution(1, 10))
    assert n == 5
    assert independent.asked[asked_before:] == []
    frozen = next(t for t in study.get_trials(deepcopy=False) if t.number == trial.number)
    assert read_proposal(frozen).params == {"k": "b", "n": 5}


def test_running_trials_are_not_proposed_again(make_sampler) -> None:
    study = optuna.create_study(sampler=make_sampler())
    study.optimize(_tree, n_trials=8)
    asked = [study.ask() for _ in range(3)]
    params = []
    for trial in asked:
        _tree(trial)
        params.append(trial.params)
    assert params[0] != params[1] and params[1] != params[2] and params[0] != params[2]


def test_one_sampler_shared_by_two_threads(make_sampler) -> None:
    study = optuna.create_study(sampler=make_sampler())
    study.optimize(_tree, n_trials=16, n_jobs=2)
    assert len(study.trials) == 16
    assert all(t.state == TrialState.COMPLETE for t in study.trials)


def test_one_sampler_shared_by_two_studies_in_turns_models_each_on_its_own(make_sampler) -> None:
    """Optuna lets one sampler serve several studies; each step must use its own study's
    trials (tree, fit), not those of the study stepped last."""
    sampler = make_sampler(n_startup_trials=3)
    first, second = (optuna.create_study(sampler=sampler) for _ in range(2))
    for _ in range(7):
        first.optimize(lambda t: (t.suggest_float("a", 0, 1) - 0.3) ** 2, n_trials=1)
        assert [n.name for n in sampler.conditional_space(second).nodes] in ([], ["x"])
        second.optimize(lambda t: (t.suggest_float("x", 0, 100) - 70) ** 2, n_trials=1)
    for trial in second.trials[3:]:  # model-based: the proposal recorded is what ran
        proposal = read_proposal(trial)
        assert proposal is not None and proposal.params == trial.params


def test_deep_copies_and_pickles_suggest_like_the_original(make_sampler) -> None:
    """A copy (``sklearn.clone``, ``CondBayesSearchCV``'s per-fit copy) and a pickle (a study,
    a fitted search) carry the sampler's state and get a lock of their own."""
    runs = []
    for copy_of in (lambda s: s, copy.deepcopy, lambda s: pickle.loads(pickle.dumps(s))):
        sampler = copy_of(make_sampler())
        assert sampler._lock.acquire(blocking=False)
        sampler._lock.release()
        study = optuna.create_study(sampler=sampler)
        study.optimize(_tree, n_trials=8)
        runs.append([t.params for t in study.trials])
    assert runs[0] == runs[1] == runs[2]
    assert len(pickle.loads(pickle.dumps(study)).trials) == 8


def test_changed_distribution_mid_study_keeps_sampling_inside_the_new_range(make_sampler) -> None:
    study = optuna.create_study(sampler=make_sampler())
    study.optimize(lambda t: t.suggest_float("x", 0, 10), n_trials=8)
    study.optimize(lambda t: (t.suggest_float("x", 20, 30) - 21) ** 2, n_trials=6)
    assert all(20 <= t.params["x"] <= 30 for t in study.trials[8:])


def test_reseed_rng_changes_the_stream(make_sampler) -> None:
    sampler = make_sampler()
    sampler.reseed_rng()
    study = optuna.create_study(sampler=sampler)
    study.optimize(_tree, n_trials=3)
    assert len(study.trials) == 3


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"n_startup_trials": -1}, "n_startup_trials"),
        ({"n_candidates": 0}, "n_candidates"),
        ({"n_local_search": 1.5}, "n_local_search"),
        ({"n_restarts": -2}, "n_restarts"),
        ({"objective_bound": float("nan")}, "objective_bound"),
        ({"objective_bound": "1.0"}, "objective_bound"),
        ({"seed": -1}, "seed"),
        ({"seed": 1.5}, "seed"),
        ({"independent_sampler": "random"}, "independent_sampler"),
        ({"n_fantasies": -1}, "n_fantasies"),
        ({"output_warping": "log"}, "output_warping"),
        ({"constraints_func": 3}, "constraints_func"),
        ({"max_model_trials": 1}, "max_model_trials"),
        ({"max_model_trials": 2.5}, "max_model_trials"),
        ({"local_search_radius": 0.0}, "local_search_radius"),
        ({"local_search_radius": 1.5}, "local_search_radius"),
        ({"local_search_radius": "0.1"}, "local_search_radius"),
    ],
)
def test_bad_arguments_name_the_parameter(sampler_class, kwargs, name) -> None:
    if sampler_class is BOHAMIANNSampler and name == "n_restarts":
        # BOHAMIANNSampler has no hyperparameter search, hence no n_restarts.
        with pytest.raises(TypeError, match=name):
            sampler_class(**kwargs)
        return
    with pytest.raises(ValueError, match=name):
        sampler_class(**kwargs)


def test_an_unknown_argument_is_a_type_error_naming_it(sampler_class) -> None:
    with pytest.raises(TypeError, match="n_startup"):
        sampler_class(n_startup=5)


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda: DNGOSampler(hidden_sizes=()), "hidden_sizes"),
        (lambda: DNGOSampler(n_epochs_warm=0), "n_epochs_warm"),
        (lambda: DNGOSampler(device="gpu"), "device"),
        (lambda: BOHAMIANNSampler(step_size=-1.0), "step_size"),
        (lambda: BOHAMIANNSampler(n_samples=0), "n_samples"),
    ],
)
def test_bad_model_options_of_the_neural_samplers_name_the_parameter(make, name) -> None:
    with pytest.raises(ValueError, match=name):
        make()


def test_new_branch_parameters_are_sampled_independently(make_sampler) -> None:
    study = optuna.create_study(sampler=make_sampler())

    def objective(trial: optuna.Trial) -> float:
        kind = trial.suggest_categorical("kind", ["a", "b", "c"])
        if kind == "c" and trial.number >= 6:
            return trial.suggest_float("new", 0, 1)
        return trial.suggest_float("x", 0, 1) + (0.5 if kind == "a" else 1.0)

    study.optimize(objective, n_trials=14)
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    values = np.array([t.value for t in study.trials])
    assert np.isfinite(values).all()


@pytest.mark.parametrize("perfect", [1.0, 1.0000000000000002])
@pytest.mark.parametrize("direction, bound", [("maximize", 1.0), ("minimize", -1.0)])
def test_objective_bound_reached_exactly_in_either_direction(
    make_sampler, direction, bound, perfect
) -> None:
    """A value at the bound (a perfect score) is floored, not log(0); one beyond it by rounding
    only (scikit-learn's average precision of a perfect ranking) counts as at the bound."""
    sign = 1.0 if direction == "maximize" else -1.0

    def accuracy(trial: optuna.Trial) -> float:
        value = 1.0 - min(_tree(trial), 1.0) if trial.number != 2 else perfect
        return sign * value

    study = optuna.create_study(direction=direction, sampler=make_sampler(objective_bound=bound))
    study.optimize(accuracy, n_trials=12)
    assert study.sampler.objective_bound == bound
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    assert len({tuple(sorted(t.params.items())) for t in study.trials}) == 12


def test_a_value_beyond_the_objective_bound_is_an_error_naming_the_trial(make_sampler) -> None:
    study = optuna.create_study(sampler=make_sampler(n_startup_trials=2, objective_bound=0.0))
    study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=2)
    study.enqueue_trial({"x": 0.5})
    study.optimize(lambda t: t.suggest_float("x", 0, 1) - 1.0, n_trials=1)
    with pytest.raises(ValueError, match=r"objective_bound=0.0, but trial 2 has the value -0.5"):
        study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=1)


def test_log_regret_keeps_the_order_and_floors_a_zero_gap() -> None:
    y = np.array([0.5, 0.0, 0.1, 0.9])  # losses; 0.0 reaches the bound
    z = log_regret(y, 0.0)
    np.testing.assert_allclose(z[[0, 2, 3]], np.log([0.5, 0.1, 0.9]))
    assert z[1] == pytest.approx(np.log(0.05))  # half the smallest positive gap
    assert np.array_equal(np.argsort(z), np.argsort(y))
    assert np.array_equal(log_regret(np.zeros(3), 0.0), np.zeros(3))
    with pytest.raises(ValueError, match="below the bound"):
        log_regret(np.array([0.2, -0.1]), 0.0)


def _beyond_a_float_threshold(trial: optuna.Trial) -> float:
    """``y`` is asked only when ``x > 0.5``: no categorical or small-int parent explains it."""
    x = trial.suggest_float("x", 0, 1)
    if x > 0.5:
        return 1.0 + trial.suggest_float("y", 0, 1)
    return (x - 0.2) ** 2


def _repeated(study: optuna.Study) -> list[dict]:
    keys = [params_key(t.params) for t in study.trials]
    return [dict(k) for k in set(keys) if keys.count(k) > 1]


def test_a_parameter_asked_beyond_a_float_threshold_neither_repeats_nor_traps(
    make_sampler, sampler_name: str
) -> None:
    study = optuna.create_study(sampler=make_sampler())
    study.optimize(_beyond_a_float_threshold, n_trials=15)
    assert _repeated(study) == []
    if sampler_name.endswith("gp"):  # the GP samplers then refine the optimum x = 0.2
        assert study.best_value < 1e-3


def test_a_parameter_the_objective_no_longer_asks_is_not_evaluated_again(make_sampler) -> None:
    study = optuna.create_study(sampler=make_sampler(n_startup_trials=3))
    for i in range(4):  # trials of an earlier objective, which also asked "old"
        study.add_trial(
            optuna.trial.create_trial(
                params={"x": 0.1 * i + 0.05, "old": "z"},
                distributions={
                    "x": FloatDistribution(0, 1),
                    "old": optuna.distributions.CategoricalDistribution(["z", "w"]),
                },
                value=0.1 * i + 0.05,
            )
        )
    study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=6)
    assert _repeated(study) == []


def test_library_messages_follow_optunas_verbosity(make_sampler, caplog) -> None:
    """A tiny space is exhausted, so trials go to the independent sampler, which the sampler
    says at INFO level: shown at Optuna's INFO verbosity, not at WARNING."""
    said = {}
    for level in (optuna.logging.INFO, optuna.logging.WARNING):
        caplog.clear()
        optuna.logging.set_verbosity(level)
        try:
            study = optuna.create_study(sampler=make_sampler(n_startup_trials=2))
            study.optimize(lambda t: float(t.suggest_int("k", 0, 2)), n_trials=5)
        finally:
            optuna.logging.set_verbosity(optuna.logging.WARNING)
        said[level] = "is sampled by RandomSampler" in caplog.text
    assert said == {optuna.logging.INFO: True, optuna.logging.WARNING: False}


def test_a_resumed_study_goes_on_model_based_and_repeats_from_its_seed(
    make_sampler, tmp_path
) -> None:
    """A fresh process resumes a stored study with a fresh sampler: every finished trial is
    used (no second random startup phase: the next trial is a recorded model-based proposal),
    and the same seed on the same history gives the same suggestion."""
    import shutil

    first = tmp_path / "first.db"
    study = optuna.create_study(
        storage=f"sqlite:///{first}", study_name="resumed", sampler=make_sampler()
    )
    study.optimize(_tree, n_trials=7)  # 5 startup trials, then model-based ones
    shutil.copy(first, tmp_path / "second.db")
    suggestions = []
    for path in (first, tmp_path / "second.db"):
        resumed = optuna.load_study(
            study_name="resumed", storage=f"sqlite:///{path}", sampler=make_sampler()
        )
        trial = resumed.ask()
        _tree(trial)
        proposal = read_proposal(resumed.trials[-1])
        assert proposal is not None and proposal.params == trial.params  # model-based
        suggestions.append(trial.params)
    assert suggestions[0] == suggestions[1]


@pytest.mark.filterwarnings("ignore:Heartbeat of storage is supposed to be used")
def test_a_dead_workers_trial_stops_being_pending_after_the_heartbeat_grace_period(
    make_sampler, tmp_path
) -> None:
    """A worker killed mid-trial leaves its trial RUNNING, its recorded proposal a pending
    point of every later step. With a heartbeat on the storage, the next trial asked (by
    ``ask`` too, which does not check heartbeats itself) fails it once its grace period is
    over, as ``study.optimize`` does."""
    import time
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        storage = optuna.storages.RDBStorage(
            f"sqlite:///{tmp_path / 'heartbeat.db'}", heartbeat_interval=1, grace_period=1
        )
    study = optuna.create_study(storage=storage, sampler=make_sampler())
    study.optimize(_tree, n_trials=6)
    dead = study.ask()
    _tree(dead)
    storage.record_heartbeat(dead._trial_id)  # its worker's last beat
    alive = study.ask()
    assert study.trials[dead.number].state == TrialState.RUNNING  # within the grace period
    study.tell(alive, _tree(alive))
    time.sleep(2.5)
    study.ask()
    assert study.trials[dead.number].state == TrialState.FAIL


class _FlakyStorage(optuna.storages.InMemoryStorage):
    """Raises a locked-database error when a proposal is recorded, ``failures`` times."""

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures

    def set_trial_system_attr(self, trial_id: int, key: str, value) -> None:
        if key == PROPOSAL_ATTR and self.failures > 0:
            import sqlalchemy.exc

            self.failures -= 1
            raise sqlalchemy.exc.OperationalError("UPDATE", {}, Exception("database is locked"))
        super().set_trial_system_attr(trial_id, key, value)


def test_a_transient_storage_error_is_retried(make_sampler, monkeypatch) -> None:
    from condsamplers.samplers import optuna_storage

    monkeypatch.setattr(optuna_storage, "RETRY_DELAYS", (0.0, 0.0, 0.0))
    study = optuna.create_study(storage=_FlakyStorage(failures=2), sampler=make_sampler())
    study.optimize(_tree, n_trials=8)
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    assert all(read_proposal(t) is not None for t in study.trials[5:])  # model-based still


def test_a_lasting_storage_error_falls_back_with_a_logged_reason(
    make_sampler, monkeypatch, caplog
) -> None:
    from condsamplers.samplers import optuna_storage

    monkeypatch.setattr(optuna_storage, "RETRY_DELAYS", (0.0, 0.0, 0.0))
    study = optuna.create_study(storage=_FlakyStorage(failures=4), sampler=make_sampler())
    optuna.logging.enable_propagation()
    try:
        with caplog.at_level(logging.WARNING):
            study.optimize(_tree, n_trials=7)
    finally:
        optuna.logging.disable_propagation()
    assert all(t.state == TrialState.COMPLETE for t in study.trials)  # no trial lost
    assert read_proposal(study.trials[5]) is None  # the fallback
    assert "failed on a storage error after 3 retries" in caplog.text


def test_a_long_study_is_modelled_on_a_capped_subsample_keeping_the_best(
    make_sampler, monkeypatch, caplog
) -> None:
    """Beyond ``max_model_trials`` the model is fitted to the best half of that number and a
    random sample of the others (logged once per study); the incumbent is among them."""
    from condsamplers.samplers import base

    fitted_sizes: list[int] = []
    original = base.propose

    def recording(space, data, *args, **kwargs):
        fitted_sizes.append(len(data.y))
        assert data.y.min() == best_so_far[0]  # the best trial is always kept
        return original(space, data, *args, **kwargs)

    best_so_far = [math.inf]
    monkeypatch.setattr(base, "propose", recording)
    study = optuna.create_study(sampler=make_sampler(max_model_trials=8))

    def objective(trial: optuna.Trial) -> float:
        value = _tree(trial)
        best_so_far[0] = min(best_so_far[0], value)
        return value

    optuna.logging.enable_propagation()
    optuna.logging.set_verbosity(optuna.logging.INFO)
    try:
        with caplog.at_level(logging.INFO):
            study.optimize(objective, n_trials=12)
    finally:
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        optuna.logging.disable_propagation()
    assert fitted_sizes and max(fitted_sizes) == 8
    assert caplog.text.count("the model is fitted to 8 of them") == 1
