"""Pruned trials and intermediate values as low-fidelity observations: the rows the
model sees, the fidelity column, the whole study behind Hyperband's bracket views, and that a
study without pruned trials is modelled as before."""

from __future__ import annotations

import dataclasses
import datetime

import numpy as np
import optuna
import pytest
import torch
from optuna.trial import TrialState

from condsamplers import BNGPSampler, DNGOSampler, TreeGPSampler
from condsamplers.models.gp import ExactGP
from condsamplers.optimize import OptimizerSettings
from condsamplers.pipeline import Observations, propose
from condsamplers.samplers.observations import (
    MAX_ROWS_PER_TRIAL,
    evaluated_trials,
    observation_rows,
)
from condsamplers.samplers.proposals import read_proposal
from condsamplers.space import (
    FIDELITY_NAME,
    Condition,
    ConditionalSpace,
    ParamNode,
    at_highest_fidelity,
    step_fidelity,
    with_fidelity,
)

optuna.logging.set_verbosity(optuna.logging.WARNING)

MAX_STEP = 27


def _curve_objective(trial: optuna.Trial) -> float:
    """Two branches; each reported value is the final one plus ``2 / step``."""
    kind = trial.suggest_categorical("kind", ["a", "b"])
    x = trial.suggest_float("x", -2, 2)
    if kind == "a":
        final = (x - 0.5) ** 2 + trial.suggest_float("za", 0, 1)
    else:
        final = (x + 0.3) ** 2 + 0.1 * trial.suggest_int("zb", 1, 5) - 0.2
    for step in range(1, MAX_STEP + 1):
        trial.report(final + 2.0 / step, step)
        if trial.should_prune():
            raise optuna.TrialPruned()
    return final + 2.0 / MAX_STEP


def _hyperband_study(sampler: optuna.samplers.BaseSampler, n_trials: int) -> optuna.Study:
    study = optuna.create_study(
        study_name="hyperband",
        sampler=sampler,
        pruner=optuna.pruners.HyperbandPruner(
            min_resource=1, max_resource=MAX_STEP, reduction_factor=3
        ),
    )
    study.optimize(_curve_objective, n_trials=n_trials)
    return study


def test_step_fidelity_is_log_scaled_to_the_highest_step() -> None:
    fidelity = step_fidelity(np.array([0, 1, 3, 9, 27]), 27)
    np.testing.assert_allclose(fidelity, np.log1p([0, 1, 3, 9, 27]) / np.log1p(27))
    assert fidelity[-1] == 1.0
    np.testing.assert_array_equal(step_fidelity(np.array([0, 5]), 0), [1.0, 1.0])


def test_with_fidelity_appends_a_root_column_on_every_path() -> None:
    space = ConditionalSpace(
        [
            ParamNode("kind", "kind", optuna.distributions.CategoricalDistribution(["a", "b"])),
            ParamNode("x", "x", optuna.distributions.FloatDistribution(0, 1)),
        ]
    )
    wide = with_fidelity(space)
    assert wide.n_features == space.n_features + 1
    assert wide.index[FIDELITY_NAME] == space.n_features
    assert [n.key for n in wide.nodes[:-1]] == [n.key for n in space.nodes]
    assert all(FIDELITY_NAME in path.active for path in wide.paths() or [])
    fixed = at_highest_fidelity(wide)
    X, active = wide.sample(5, np.random.default_rng(0))
    kept, _ = fixed.keep(X, active)
    np.testing.assert_array_equal(kept[:, -1], 1.0)
    with pytest.raises(ValueError, match="already has a column"):
        with_fidelity(wide)


def _trial(
    state: TrialState, value: float | None, curve: dict[int, float]
) -> optuna.trial.FrozenTrial:
    return optuna.trial.create_trial(
        state=state,
        value=value,
        params={"x": 0.5},
        distributions={"x": optuna.distributions.FloatDistribution(0, 1)},
        intermediate_values=curve,
    )


def test_rows_of_complete_and_pruned_trials() -> None:
    curve = {s: 1.0 / s for s in range(1, 28)}
    complete = _trial(TrialState.COMPLETE, 0.01, curve)
    pruned = _trial(TrialState.PRUNED, None, {1: 1.0, 2: 0.5, 3: 0.3})
    positions, values, fidelity, shares = observation_rows([complete, pruned])
    assert fidelity is not None
    assert positions.count(0) == MAX_ROWS_PER_TRIAL
    # the complete trial's last row: its final value at the highest fidelity
    last = max(i for i, p in enumerate(positions) if p == 0)
    assert values[last] == 0.01 and fidelity[last] == 1.0
    # the pruned trial: its last reported value, at step 3's fidelity
    rows = [i for i, p in enumerate(positions) if p == 1]
    np.testing.assert_allclose(values[rows], [0.3])
    np.testing.assert_allclose(fidelity[rows], step_fidelity(np.array([3]), 27))


def test_rows_without_pruned_trials_are_one_per_trial() -> None:
    trials = [_trial(TrialState.COMPLETE, v, {1: 2 * v}) for v in (0.1, 0.2)]
    positions, values, fidelity, shares = observation_rows(trials)
    assert positions == [0, 1] and fidelity is None
    np.testing.assert_array_equal(values, [0.1, 0.2])


def test_evaluated_trials_skip_pruned_trials_without_reports() -> None:
    study = optuna.create_study()
    study.add_trial(_trial(TrialState.COMPLETE, 0.1, {}))
    study.add_trial(_trial(TrialState.PRUNED, None, {}))
    study.add_trial(_trial(TrialState.PRUNED, None, {2: 0.4}))
    assert [t.number for t in evaluated_trials(study)] == [0, 2]
    assert [t.number for t in evaluated_trials(study, intermediate_values=False)] == [0]


def test_propose_holds_the_fidelity_at_one_and_returns_the_space_columns() -> None:
    space = ConditionalSpace([ParamNode("x", "x", optuna.distributions.FloatDistribution(0, 1))])
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(12, 1))
    fidelity = np.repeat([0.3, 1.0], 6)
    # low fidelity: best near 0.8; high fidelity (the target): best near 0.2
    y = np.where(fidelity < 1, (x[:, 0] - 0.8) ** 2, (x[:, 0] - 0.2) ** 2)
    data = Observations(
        X=x,
        active=np.ones_like(x, dtype=bool),
        y=y,
        X_pending=np.empty((0, 1)),
        active_pending=np.empty((0, 1), dtype=bool),
        fidelity=fidelity,
    )
    proposal = propose(space, data, ExactGP(seed=0), rng, OptimizerSettings())
    assert proposal.X.shape[1] == 1 and proposal.active.shape[1] == 1
    assert abs(proposal.X[0, 0] - 0.2) < 0.15


def test_observations_check_the_fidelity() -> None:
    base = {
        "X": np.zeros((2, 1)),
        "active": np.ones((2, 1), dtype=bool),
        "y": np.zeros(2),
        "X_pending": np.empty((0, 1)),
        "active_pending": np.empty((0, 1), dtype=bool),
    }
    with pytest.raises(ValueError, match="fidelity must lie in"):
        Observations(**base, fidelity=np.array([0.5, 1.5]))
    with pytest.raises(ValueError, match="fidelity must have shape"):
        Observations(**base, fidelity=np.array([0.5]))
    with pytest.raises(ValueError, match="log_cost must be finite"):
        Observations(**base, log_cost=np.array([0.0, np.inf]))
    with pytest.raises(ValueError, match="log_cost must be finite, of shape"):
        Observations(**base, log_cost=np.array([0.0]))


@pytest.mark.parametrize(
    "sampler",
    [TreeGPSampler(seed=0), BNGPSampler(seed=0), DNGOSampler(seed=0, n_epochs=50)],
    ids=["treegp", "bngp", "dngo"],
)
def test_hyperband_study_is_model_based_on_every_bracket(
    sampler: optuna.samplers.BaseSampler,
) -> None:
    """Under Hyperband, each trial after the startup ones gets a model-based proposal, though
    Optuna shows the sampler one bracket only."""
    study = _hyperband_study(sampler, 20)
    states = [t.state for t in study.trials]
    assert states.count(TrialState.PRUNED) >= 5
    model_based = [read_proposal(t) is not None for t in study.trials[10:]]
    assert all(model_based)


def test_tree_gp_under_hyperband_finds_the_optimum() -> None:
    """The optimum is on branch b (x = -0.3, zb = 1: -0.1 + 2/27); trials stopped at low
    fidelity guide the search there."""
    study = _hyperband_study(TreeGPSampler(seed=0), 40)
    assert study.best_params["kind"] == "b"
    assert study.best_value < -0.1 + 2 / MAX_STEP + 0.01


def test_hyperband_suggestions_are_deterministic() -> None:
    first = _hyperband_study(TreeGPSampler(seed=3), 20)
    second = _hyperband_study(TreeGPSampler(seed=3), 20)
    assert [t.params for t in first.trials] == [t.params for t in second.trials]


def test_intermediate_values_false_models_complete_trials_only() -> None:
    study = _hyperband_study(TreeGPSampler(seed=0, intermediate_values=False), 25)
    n_complete = len(study.get_trials(states=(TrialState.COMPLETE,)))
    with_proposal = sum(read_proposal(t) is not None for t in study.trials)
    assert n_complete < 25
    # the startup counts COMPLETE trials only: fewer trials are model-based
    assert with_proposal <= 25 - 10


def test_intermediate_values_is_checked() -> None:
    with pytest.raises(ValueError, match="intermediate_values='yes' must be True or False"):
        TreeGPSampler(intermediate_values="yes")  # type: ignore[arg-type]


def test_no_pruned_trials_means_no_fidelity_column() -> None:
    """A study whose trials report values but are never pruned is modelled as one without
    reports: the same suggestions."""

    def objective(trial: optuna.Trial, report: bool) -> float:
        x = trial.suggest_float("x", -1, 1)
        if report:
            trial.report(x**2 + 1, 1)
        return x**2

    runs = []
    for report in (False, True):
        study = optuna.create_study(sampler=TreeGPSampler(seed=1, n_startup_trials=4))
        study.optimize(lambda t, r=report: objective(t, r), n_trials=8)
        runs.append([t.params for t in study.trials])
    assert runs[0] == runs[1]


@pytest.mark.parametrize("joint_with_fidelity", [False, True])
def test_two_step_search_turns_joint_at_several_fidelities(joint_with_fidelity: bool) -> None:
    """TreeGPSampler's ``acquisition="auto"``: the two-step search (a path chosen first) while
    all observations are complete trainings, every path at once with pruned trials."""
    from condsamplers.models.tree_gp import TreeGP

    kind = optuna.distributions.CategoricalDistribution(["a", "b"])
    space = ConditionalSpace(
        [
            ParamNode("kind", "kind", kind),
            ParamNode(
                "xa",
                "xa",
                optuna.distributions.FloatDistribution(0, 1),
                condition=Condition("kind", frozenset({0.0})),
            ),
            ParamNode(
                "xb",
                "xb",
                optuna.distributions.FloatDistribution(0, 1),
                condition=Condition("kind", frozenset({1.0})),
            ),
        ]
    )
    rng = np.random.default_rng(0)
    X, active = space.sample(12, rng)
    y = rng.normal(size=12)
    settings = OptimizerSettings(
        n_candidates=128, two_step=True, joint_with_fidelity=joint_with_fidelity
    )
    pending = {"X_pending": np.empty((0, 3)), "active_pending": np.empty((0, 3), dtype=bool)}
    complete = Observations(X=X, active=active, y=y, **pending)
    assert propose(space, complete, TreeGP(seed=0), rng, settings).path is not None
    pruned = Observations(X=X, active=active, y=y, fidelity=np.linspace(0.2, 1, 12), **pending)
    path = propose(space, pruned, TreeGP(seed=0), rng, settings).path
    assert (path is None) == joint_with_fidelity


def test_per_second_divides_ei_by_the_predicted_duration() -> None:
    from condsamplers.acquisition import Cost, per_second

    class LogSeconds:
        def posterior(self, X: torch.Tensor, active: torch.Tensor) -> tuple:
            return 3.0 * X[:, 0], torch.ones(len(X))

    def log_ei(X: torch.Tensor, active: torch.Tensor) -> torch.Tensor:
        return -X[:, 0]

    X = torch.tensor([[0.0], [1.0]], dtype=torch.float64)
    active = torch.ones_like(X, dtype=torch.bool)
    assert per_second(log_ei, None) is log_ei
    weighted = per_second(log_ei, Cost(LogSeconds()))  # type: ignore[arg-type]
    torch.testing.assert_close(weighted(X, active), torch.tensor([0.0, -4.0], dtype=torch.float64))


def _timed_trial(branch: str, x: float, seconds: float) -> optuna.trial.FrozenTrial:
    start = datetime.datetime(2026, 1, 1)
    return optuna.trial.FrozenTrial(
        number=0,
        state=TrialState.COMPLETE,
        value=(x - 0.5) ** 2,
        values=None,
        datetime_start=start,
        datetime_complete=start + datetime.timedelta(seconds=seconds),
        params={"branch": branch, f"x_{branch}": x},
        distributions={
            "branch": optuna.distributions.CategoricalDistribution(["slow", "fast"]),
            f"x_{branch}": optuna.distributions.FloatDistribution(0, 1),
        },
        user_attrs={},
        system_attrs={},
        intermediate_values={},
        trial_id=0,
    )


@pytest.mark.parametrize("sampler_class", [TreeGPSampler, BNGPSampler])
def test_cost_aware_sampler_proposes_the_cheap_branch(sampler_class: type) -> None:
    """Two branches with the same objective, one 100 times slower to evaluate: with
    ``cost_aware=True`` the proposals go to the cheap one."""
    study = optuna.create_study(sampler=sampler_class(seed=0, cost_aware=True))
    for i, x in enumerate(np.linspace(0.05, 0.95, 6)):
        study.add_trial(_timed_trial("slow", float(x), 100.0 + i))
        study.add_trial(_timed_trial("fast", float(1 - x), 1.0 + 0.01 * i))
    branches = []
    for _ in range(4):
        trial = study.ask()
        branch = trial.suggest_categorical("branch", ["slow", "fast"])
        x = trial.suggest_float(f"x_{branch}", 0, 1)
        study.tell(trial, (x - 0.5) ** 2)
        branches.append(branch)
    assert branches == ["fast"] * 4


def test_durations_of_rows() -> None:
    from condsamplers.samplers.observations import MIN_SECONDS, log_durations

    trials = [_timed_trial("slow", 0.5, 8.0), _timed_trial("fast", 0.5, 0.0)]
    np.testing.assert_allclose(
        log_durations(trials, np.array([0.25, 1.0])), np.log([2.0, MIN_SECONDS])
    )


def test_cost_aware_is_checked() -> None:
    with pytest.raises(ValueError, match="cost_aware=1 must be True or False"):
        TreeGPSampler(cost_aware=1)  # type: ignore[arg-type]


def test_hyperband_with_two_threads_proposes_no_duplicate() -> None:
    """Several workers (here threads of ``study.optimize(n_jobs=2)``) on a pruned study: the
    RUNNING trials are pending points at the highest fidelity; no configuration repeats."""
    study = optuna.create_study(
        study_name="hyperband-threads",
        sampler=TreeGPSampler(seed=0, n_candidates=256),
        pruner=optuna.pruners.HyperbandPruner(min_resource=1, max_resource=MAX_STEP),
    )
    study.optimize(_curve_objective, n_trials=24, n_jobs=2)
    keys = [tuple(sorted(t.params.items())) for t in study.trials]
    assert len(set(keys)) == len(keys)
    assert sum(read_proposal(t) is not None for t in study.trials) >= 10


def test_incumbent_is_taken_over_the_complete_trainings(monkeypatch: pytest.MonkeyPatch) -> None:
    """With pruned trials the plug-in incumbent is the best prediction at the configurations
    observed at the highest fidelity, not the lowest extrapolation from early steps."""
    import condsamplers.pipeline as pipeline

    seen = []
    original = pipeline.step_fantasies

    def spy(model, data, rows, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(rows.copy())
        return original(model, data, rows, *args, **kwargs)

    monkeypatch.setattr(pipeline, "step_fantasies", spy)
    space = ConditionalSpace([ParamNode("x", "x", optuna.distributions.FloatDistribution(0, 1))])
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(10, 1))
    fidelity = np.array([0.2, 0.5, 1.0] * 3 + [0.5])
    data = Observations(
        X=x,
        active=np.ones_like(x, dtype=bool),
        y=(x[:, 0] - 0.3) ** 2 + (1 - fidelity),
        X_pending=np.empty((0, 1)),
        active_pending=np.empty((0, 1), dtype=bool),
        fidelity=fidelity,
    )
    propose(space, data, ExactGP(seed=0), rng, OptimizerSettings(n_candidates=64))
    np.testing.assert_array_equal(seen[-1], fidelity == 1.0)
    # no complete training yet: every observation
    low = dataclasses.replace(data, fidelity=np.full(10, 0.5))
    propose(space, low, ExactGP(seed=0), rng, OptimizerSettings(n_candidates=64))
    assert seen[-1].all()


@pytest.mark.parametrize(
    "pruner",
    [
        optuna.pruners.MedianPruner(n_startup_trials=3),
        optuna.pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=3),
    ],
    ids=["median", "successive-halving"],
)
def test_other_pruners_give_model_based_proposals_from_pruned_trials(
    pruner: optuna.pruners.BasePruner,
) -> None:
    study = optuna.create_study(sampler=TreeGPSampler(seed=0, n_candidates=256), pruner=pruner)
    study.optimize(_curve_objective, n_trials=20)
    assert any(t.state == TrialState.PRUNED for t in study.trials)
    assert all(read_proposal(t) is not None for t in study.trials[10:])


def test_tree_gp_uses_plain_ei_once_the_study_has_pruned_trials(
    ei_noises: list[float | None],
) -> None:
    """With observations at several fidelities the tree GP's fitted noise is mostly its misfit
    of partial curves: its EI then carries no augmented-EI factor."""
    study = _hyperband_study(TreeGPSampler(seed=0), 14)
    assert any(t.state == TrialState.PRUNED for t in study.trials)
    assert ei_noises and all(noise is None for noise in ei_noises)
