"""Structure inference from define-by-run trials, and the encoding."""

from __future__ import annotations

import logging

import numpy as np
import optuna
import pytest
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

from condsamplers import infer_space
from condsamplers.space import ConditionalSpace, ParamNode, covering_distribution
from condsamplers.space.encoding import contains

optuna.logging.set_verbosity(optuna.logging.WARNING)


def _random_study(objective, n_trials: int, seed: int = 0) -> optuna.Study:
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=seed))
    study.optimize(objective, n_trials=n_trials)
    return study


def _svm_or_forest(trial: optuna.Trial) -> float:
    model = trial.suggest_categorical("model", ["svc", "forest", "knn"])
    if model == "svc":
        c = trial.suggest_float("C", 1e-3, 1e3, log=True)
        kernel = trial.suggest_categorical("kernel", ["rbf", "poly"])
        if kernel == "poly":
            trial.suggest_int("degree", 2, 5)
        return np.log(c) ** 2
    if model == "forest":
        return trial.suggest_int("n_estimators", 10, 500, log=True) / 100.0
    return trial.suggest_int("k", 1, 30) / 10.0


def test_describe_shows_exact_tree_of_a_model_selection_space() -> None:
    space = infer_space(_random_study(_svm_or_forest, 40).trials)
    assert space.describe() == "\n".join(
        [
            "model: categorical ('svc', 'forest', 'knn')",
            "  C: float [0.001, 1000.0] log  [if model == 'svc']  (shared by 2 paths)",
            "  kernel: categorical ('rbf', 'poly')  [if model == 'svc']",
            "    degree: int [2, 5]  [if kernel == 'poly']",
            "  n_estimators: int [10, 500] log  [if model == 'forest']",
            "  k: int [1, 30]  [if model == 'knn']",
            "(6 parameters, 4 paths)",
        ]
    )


def test_implies_active_follows_the_conditions_down_from_the_root() -> None:
    space = infer_space(_random_study(_svm_or_forest, 40).trials)
    assert space.implies_active({}, "model")  # a root parameter
    assert space.implies_active({"model": "svc", "kernel": "poly"}, "degree")
    assert not space.implies_active({"model": "svc", "kernel": "rbf"}, "degree")
    assert not space.implies_active({"model": "forest", "kernel": "poly"}, "degree")  # ancestor
    assert not space.implies_active({"model": "svc"}, "degree")  # its parent's value unknown
    assert not space.implies_active({"model": "svc"}, "unknown")


def _net(trial: optuna.Trial) -> float:
    depth = trial.suggest_int("depth", 0, 4)
    for i in range(1, depth + 1):
        trial.suggest_int(f"units_{i}", 16, 512, log=True)
    return trial.suggest_float("lr", 1e-4, 1e-1, log=True) + depth


def test_integer_parent_gets_threshold_conditions_that_extrapolate() -> None:
    study = _random_study(_net, 40, seed=3)
    space = infer_space(study.trials)
    conditions = {n.name: n.condition for n in space.nodes}
    for i in range(1, 5):
        cond = conditions[f"units_{i}"]
        assert cond is not None and cond.parent == "depth" and cond.lower == i
    assert conditions["lr"] is None and conditions["depth"] is None
    # units_2 (int, log, many values) is never taken as the parent of units_3.
    depth_col = space.index["depth"]
    X = np.zeros((5, space.n_features))
    X[:, depth_col] = space.nodes[depth_col].to_unit(np.arange(5.0))
    active = space.active_mask(X)
    assert active[:, space.index["units_3"]].tolist() == [False, False, False, True, True]


def test_untried_branch_value_is_a_path_of_its_own() -> None:
    study = optuna.create_study()
    dist = {"model": CategoricalDistribution(["a", "b", "c"]), "x": FloatDistribution(0, 1)}
    for value in (0.1, 0.5, 0.9):
        study.add_trial(
            optuna.create_trial(params={"model": "a", "x": value}, distributions=dist, value=value)
        )
        study.add_trial(
            optuna.create_trial(
                params={"model": "b"}, distributions={"model": dist["model"]}, value=1.0
            )
        )
    space = infer_space(study.trials)
    paths = space.paths()
    assert paths is not None
    branch_values = sorted(dict(p.branch_values)["model"] for p in paths)
    # 'a' opens x; 'b' (tried, no children) and 'c' (never tried) lead to no known child.
    assert branch_values == [(0.0,), (1.0, 2.0)]


def test_inference_does_not_depend_on_suggestion_order() -> None:
    def forward(trial: optuna.Trial) -> float:
        use = trial.suggest_categorical("use", [True, False])
        a = trial.suggest_float("a", 0, 1)
        return a + (trial.suggest_float("b", 0, 1) if use else 0.0)

    def backward(trial: optuna.Trial) -> float:
        a = trial.suggest_float("a", 0, 1)
        use = trial.suggest_categorical("use", [True, False])
        return a + (trial.suggest_float("b", 0, 1) if use else 0.0)

    study = _random_study(forward, 10)
    study.optimize(backward, n_trials=10)
    mixed = infer_space(study.trials)
    alone = infer_space(_random_study(forward, 20, seed=1).trials)
    assert (
        _conditions(mixed)
        == _conditions(alone)
        == {
            "use": None,
            "a": None,
            "b": ("use", frozenset({0.0})),
        }
    )


def test_a_chance_fit_with_another_branch_loses_to_the_parent_asked_just_before() -> None:
    """Preprocessing then estimator (a CASH space): in these trials ``k`` happens to be active
    exactly when ``norm`` is ``"l1"`` as well as when ``model`` is ``"knn"``; ``norm`` is
    active in fewer trials, but ``model`` is the one asked right before ``k``."""
    pre = CategoricalDistribution(["scale", "normalize"])
    norm = CategoricalDistribution(["l1", "l2"])
    model = CategoricalDistribution(["knn", "svc"])
    k, c = IntDistribution(1, 50), FloatDistribution(0.1, 10.0)
    rows = [
        ("normalize", "l1", "knn"),
        ("normalize", "l1", "knn"),
        ("normalize", "l2", "svc"),
        ("scale", None, "svc"),
        ("scale", None, "svc"),
    ]
    trials = []
    for i, (p, n, m) in enumerate(rows):
        params: dict[str, object] = {"pre": p}
        dists: dict[str, optuna.distributions.BaseDistribution] = {"pre": pre}
        if n is not None:
            params["norm"], dists["norm"] = n, norm
        params["model"], dists["model"] = m, model
        if m == "knn":
            params["k"], dists["k"] = 5 + i, k
        else:
            params["C"], dists["C"] = 1.0 + i, c
        trials.append(optuna.create_trial(params=params, distributions=dists, value=float(i)))
    conditions = _conditions(infer_space(trials))
    assert conditions["k"] == ("model", frozenset({0.0}))
    assert conditions["C"] == ("model", frozenset({1.0}))
    assert conditions["norm"] == ("pre", frozenset({1.0}))


def _conditions(space: ConditionalSpace) -> dict[str, tuple[str, frozenset[float]] | None]:
    return {
        n.name: None if n.condition is None else (n.condition.parent, n.condition.values)
        for n in space.nodes
    }


def test_same_name_with_different_ranges_in_branches_gives_variants() -> None:
    def objective(trial: optuna.Trial) -> float:
        z = trial.suggest_int("z", 1, 2)
        return trial.suggest_int("v", 1, 3 if z == 1 else 2) + z

    space = infer_space(_random_study(objective, 30).trials)
    variants = [n for n in space.nodes if n.name == "v"]
    assert sorted(v.distribution.high for v in variants) == [2, 3]
    for v in variants:
        assert v.condition is not None and v.condition.parent == "z"
    trial = next(t for t in _random_study(objective, 30).trials if t.params["z"] == 2)
    x, active = space.encode_trial(trial.params, trial.distributions)
    assert space.decode(x, active) == trial.params
    assert space.search_space()["v"] == IntDistribution(1, 3)  # covers both variants


@pytest.mark.parametrize(
    "variants, covering",
    [
        ([FloatDistribution(0, 1), FloatDistribution(5, 10)], FloatDistribution(0, 10)),
        (
            [FloatDistribution(1e-3, 1, log=True), FloatDistribution(1e-5, 1e-2, log=True)],
            FloatDistribution(1e-5, 1, log=True),
        ),
        (
            [FloatDistribution(0, 1, step=0.25), FloatDistribution(0.5, 2, step=0.25)],
            FloatDistribution(0, 2, step=0.25),
        ),
        (
            [FloatDistribution(0, 1, step=0.25), FloatDistribution(0.1, 1.85, step=0.25)],
            FloatDistribution(0, 1.85),
        ),
        (
            [IntDistribution(0, 4, step=2), IntDistribution(2, 10, step=2)],
            IntDistribution(0, 10, step=2),
        ),
        ([IntDistribution(0, 4, step=2), IntDistribution(1, 9, step=2)], IntDistribution(0, 9)),
        ([CategoricalDistribution(["a", "b"])], CategoricalDistribution(["a", "b"])),
    ],
)
def test_covering_distribution_contains_every_variant(variants, covering) -> None:
    assert covering_distribution(variants) == covering
    for variant in variants:
        for value in (variant.low, variant.high) if hasattr(variant, "low") else variant.choices:
            assert contains(covering, covering.to_internal_repr(value))


@pytest.mark.parametrize(
    ("distribution", "inside", "outside"),
    [
        (FloatDistribution(0.0, 1.0), [0.0, 0.3, 1.0], [-1e-9, 1.0 + 1e-9]),
        (FloatDistribution(1e-3, 1.0, log=True), [1e-3, 1.0], [0.0, 2.0]),
        (FloatDistribution(0.1, 1.85, step=0.25), [0.1, 0.35, 1.85, 0.35 + 1e-10], [0.2, 2.1]),
        (IntDistribution(2, 10, step=2), [2, 4, 10], [3, 0, 12]),
        (IntDistribution(1, 100, log=True), [1, 57, 100], [0, 101]),
        (CategoricalDistribution(["a", None, 3]), [0, 1, 2], [-1, 3]),
    ],
)
def test_contains_follows_the_bounds_and_the_step_grid(distribution, inside, outside) -> None:
    assert all(contains(distribution, float(v)) for v in inside)
    assert not any(contains(distribution, float(v)) for v in outside)


def test_changed_distribution_is_merged_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    study = _random_study(lambda t: t.suggest_float("x", 0, 10), 10)
    study.optimize(lambda t: t.suggest_float("x", 0, 5), n_trials=10)
    with caplog.at_level(logging.WARNING, logger="optuna.condsamplers"):
        space = infer_space(study.trials)
    assert "changed its distribution" in caplog.text
    assert [n.distribution for n in space.nodes] == [FloatDistribution(0, 5)]
    outside = {t.number for t in study.trials if t.params["x"] > 5}
    assert space.excluded_trials == outside
    for t in study.trials:
        encoded = space.encode_trial(t.params, t.distributions)
        assert (encoded is None) == (t.number in outside)


def test_failed_pruned_and_running_trials_do_not_shape_the_tree() -> None:
    study = _random_study(_svm_or_forest, 30)
    truth = infer_space(study.trials).describe()
    running = study.ask()
    running.suggest_categorical("model", ["svc", "forest", "knn"])  # stopped half-way
    study.add_trial(
        optuna.create_trial(
            params={"model": "svc"},
            distributions={"model": CategoricalDistribution(["svc", "forest", "knn"])},
            state=optuna.trial.TrialState.FAIL,
        )
    )
    assert infer_space(study.trials).describe() == truth


@pytest.mark.parametrize(
    "distribution, values",
    [
        (FloatDistribution(-2, 3), [-2.0, 0.25, 3.0]),
        (FloatDistribution(1e-5, 1, log=True), [1e-5, 3e-3, 1.0]),
        (FloatDistribution(0, 1, step=0.25), [0.0, 0.25, 1.0]),
        (IntDistribution(-3, 7), [-3, 0, 7]),
        (IntDistribution(0, 10, step=2), [0, 4, 10]),
        (IntDistribution(1, 1000, log=True), [1, 31, 1000]),
        (CategoricalDistribution(["a", 1, None]), ["a", 1, None]),
    ],
)
def test_encode_decode_round_trip(distribution, values) -> None:
    study = optuna.create_study()
    for v in values:
        study.add_trial(
            optuna.create_trial(params={"p": v}, distributions={"p": distribution}, value=0.0)
        )
    space: ConditionalSpace = infer_space(study.trials)
    for t in study.trials:
        x, active = space.encode_trial(t.params, t.distributions)
        assert np.all((x >= 0) & (x <= max(1, space.features.n_categories.max())))
        decoded = space.decode(x, active)
        assert (
            decoded == pytest.approx(t.params, rel=1e-12)
            if distribution.__class__ is FloatDistribution
            else decoded == t.params
        )


@pytest.mark.parametrize(
    "distribution",
    [
        FloatDistribution(1e-3, 1e3, log=True),
        FloatDistribution(0.1, 0.7),
        IntDistribution(1, 1000, log=True),
    ],
)
def test_a_value_at_a_bound_decodes_to_the_bound_itself(distribution) -> None:
    """exp(log(1000)) is 999.9999999999989: a proposal at the box's edge must give the
    distribution's own bound, which is what a user reads and compares."""
    node = ParamNode(key="x", name="x", distribution=distribution)
    low, high = node.from_unit(np.array([0.0, 1.0]))
    assert (low, high) == (distribution.low, distribution.high)
