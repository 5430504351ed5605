"""``plot_conditional_space`` draws the tree inferred from a study: every parameter as a box,
each condition on its edge, and a table of the paths whose trial counts and best values are
those of the study's COMPLETE trials."""

from __future__ import annotations

import math

import optuna
import pytest

pytest.importorskip("matplotlib")
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from condsamplers import infer_space  # noqa: E402
from condsamplers.visualization import plot_conditional_space  # noqa: E402

PARAMS = {
    "classifier",
    "svc_C",
    "svc_kernel",
    "svc_gamma",
    "svc_degree",
    "rf_max_depth",
    "mlp_alpha",
    "mlp_solver",
    "mlp_momentum",
}
#: The branching parameters, whose values split the trials into paths.
BRANCHES = ("classifier", "svc_kernel", "mlp_solver")


def objective(trial: optuna.Trial) -> float:
    """Three branches; the SVC and MLP ones nest a second branching choice."""
    kind = trial.suggest_categorical("classifier", ["svc", "forest", "mlp"])
    if kind == "svc":
        c = trial.suggest_float("svc_C", 1e-2, 1e3, log=True)
        if trial.suggest_categorical("svc_kernel", ["rbf", "poly"]) == "rbf":
            return abs(math.log10(c)) + abs(
                math.log10(trial.suggest_float("svc_gamma", 1e-5, 1e-1, log=True)) + 3
            )
        return abs(math.log10(c)) + trial.suggest_int("svc_degree", 2, 5)
    if kind == "forest":
        return 10.0 / trial.suggest_int("rf_max_depth", 2, 24, log=True)
    alpha = trial.suggest_float("mlp_alpha", 1e-6, 1e-1, log=True)
    if trial.suggest_categorical("mlp_solver", ["adam", "sgd"]) == "sgd":
        return 1.0 + trial.suggest_float("mlp_momentum", 0.0, 0.99)
    return 2.0 + math.log10(alpha) / 6.0


def make_study(n_trials: int = 30, **kwargs) -> optuna.Study:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0), **kwargs)
    study.optimize(objective, n_trials=n_trials)
    return study


@pytest.fixture(scope="module")
def study() -> optuna.Study:
    return make_study()


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def box_names(ax) -> set[str]:
    """The first line of each text drawn on the Axes: a box's parameter name, or an edge
    label."""
    return {text.get_text().split("\n")[0] for text in ax.texts}


def table_rows(ax) -> list[list[str]]:
    """The path table's rows (header first) as text."""
    cells = ax.tables[0].get_celld()
    n_rows = 1 + max(row for row, _ in cells)
    n_cols = 1 + max(column for _, column in cells)
    return [[cells[r, c].get_text().get_text() for c in range(n_cols)] for r in range(n_rows)]


def path_label(params: dict) -> str:
    """The table's label of a trial's path: its branch choices, ancestors first."""
    return ", ".join(f"{name} = {params[name]}" for name in BRANCHES if name in params)


def expected_paths(study: optuna.Study, best=min) -> dict[str, tuple[int, float]]:
    """``label -> (number of COMPLETE trials, best value)`` computed from the trials."""
    values: dict[str, list[float]] = {}
    for trial in study.get_trials(states=(optuna.trial.TrialState.COMPLETE,)):
        values.setdefault(path_label(trial.params), []).append(trial.value)
    return {label: (len(v), best(v)) for label, v in values.items()}


def test_every_parameter_is_a_box_and_every_branch_labels_its_edge(study) -> None:
    ax = plot_conditional_space(study)
    ax.figure.canvas.draw()  # renders (the table lays out its cells at drawing time)
    drawn = box_names(ax)
    assert PARAMS <= drawn
    assert {"= svc", "= forest", "= mlp", "= rbf", "= poly", "= sgd"} <= drawn
    assert any("float [0.01, 1e3] log" in text.get_text() for text in ax.texts)
    assert any("categorical (3)" in text.get_text() for text in ax.texts)


def test_root_at_the_top_and_nested_parameters_below_their_parent(study) -> None:
    ax = plot_conditional_space(study)
    height = {text.get_text().split("\n")[0]: text.get_position()[1] for text in ax.texts}
    assert height["classifier"] > height["svc_kernel"] > height["svc_gamma"]
    assert height["classifier"] > height["mlp_solver"] > height["mlp_momentum"]
    assert height["svc_kernel"] == height["rf_max_depth"] == height["mlp_alpha"]


def test_path_table_counts_every_complete_trial_with_its_paths_best_value(study) -> None:
    header, *rows = table_rows(plot_conditional_space(study))
    assert header == ["path (branch choices)", "trials", "best (min)"]
    shown = {label: (int(n), float(best)) for label, n, best in rows}
    expected = expected_paths(study)
    assert set(shown) == set(expected)
    n_complete = len(study.get_trials(states=(optuna.trial.TrialState.COMPLETE,)))
    assert sum(n for n, _ in shown.values()) == n_complete == 30
    for label, (n, best) in expected.items():
        assert shown[label][0] == n
        assert shown[label][1] == pytest.approx(best, rel=1e-3)


def test_a_maximised_study_shows_the_largest_value_of_each_path() -> None:
    study = make_study(direction="maximize")
    header, *rows = table_rows(plot_conditional_space(study))
    assert header[-1] == "best (max)"
    expected = expected_paths(study, best=max)
    for label, _, best in rows:
        assert float(best) == pytest.approx(expected[label][1], rel=1e-3)


def test_failed_trials_are_not_counted() -> None:
    study = make_study(20)
    study.add_trial(
        optuna.trial.create_trial(
            params={"classifier": "forest", "rf_max_depth": 3},
            distributions={
                "classifier": optuna.distributions.CategoricalDistribution(
                    ["svc", "forest", "mlp"]
                ),
                "rf_max_depth": optuna.distributions.IntDistribution(2, 24, log=True),
            },
            state=optuna.trial.TrialState.FAIL,
        )
    )
    _, *rows = table_rows(plot_conditional_space(study))
    assert sum(int(n) for _, n, _ in rows) == 20


def test_a_multi_objective_study_shows_counts_only() -> None:
    def two(trial: optuna.Trial) -> tuple[float, float]:
        value = objective(trial)
        return value, -value

    study = optuna.create_study(
        directions=["minimize", "maximize"], sampler=optuna.samplers.RandomSampler(seed=0)
    )
    study.optimize(two, n_trials=20)
    header, *rows = table_rows(plot_conditional_space(study))
    assert header == ["path (branch choices)", "trials"]
    assert sum(int(n) for _, n in rows) == 20


def test_a_space_draws_its_paths_without_counts(study) -> None:
    space = infer_space(study.trials)
    fig, ax = plt.subplots()
    assert plot_conditional_space(space, ax=ax) is ax
    assert PARAMS <= box_names(ax)
    header, *rows = table_rows(ax)
    assert header == ["path (branch choices)"]
    assert {label for (label,) in rows} == set(expected_paths(study))
    assert "complete trials" not in ax.get_title()


def test_integer_thresholds_label_their_edges() -> None:
    def layers(trial: optuna.Trial) -> float:
        n = trial.suggest_int("n_layers", 1, 3)
        return sum(trial.suggest_int(f"width_{i}", 8, 64) for i in range(1, n + 1)) / n

    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(layers, n_trials=30)
    ax = plot_conditional_space(study)
    assert {">= 2", ">= 3", "width_1", "width_3"} <= box_names(ax)
    _, *rows = table_rows(ax)
    assert [label for label, _, _ in rows] == [f"n_layers = {n}" for n in (1, 2, 3)]


def test_a_study_without_complete_trials_is_refused() -> None:
    study = optuna.create_study()
    with pytest.raises(ValueError, match="study_or_space.*no COMPLETE trial"):
        plot_conditional_space(study)
    study.add_trial(
        optuna.trial.create_trial(
            params={"x": 1.0},
            distributions={"x": optuna.distributions.FloatDistribution(0, 2)},
            state=optuna.trial.TrialState.FAIL,
        )
    )
    with pytest.raises(ValueError, match="study_or_space.*no COMPLETE trial"):
        plot_conditional_space(study)


def test_a_study_without_parameters_is_refused() -> None:
    study = optuna.create_study()
    study.optimize(lambda trial: 1.0, n_trials=2)
    with pytest.raises(ValueError, match="study_or_space.*no parameter"):
        plot_conditional_space(study)


def test_wrong_argument_types_are_refused(study) -> None:
    with pytest.raises(TypeError, match="study_or_space.*list.*infer_space"):
        plot_conditional_space(study.trials)
    with pytest.raises(TypeError, match="ax must be a matplotlib Axes"):
        plot_conditional_space(study, ax="left")
