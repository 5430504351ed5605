"""The Thompson draw of the branch at parameters with three or more branches
(condsamplers.branch_draw), before the two-step search's path EI."""

from __future__ import annotations

import numpy as np
import optuna
import pytest

from condsamplers import TreeGPSampler, infer_space
from condsamplers.branch_draw import draw_branches, draw_order, good_trials
from condsamplers.space import ConditionalSpace

optuna.logging.set_verbosity(optuna.logging.WARNING)


def _three_kinds(trial: optuna.Trial) -> float:
    kind = trial.suggest_categorical("kind", ["a", "b", "c"])
    x = trial.suggest_float(f"x_{kind}", -1, 1)
    return {"a": 0.0, "b": 1.0, "c": 2.0}[kind] + x**2


def _two_kinds(trial: optuna.Trial) -> float:
    kind = trial.suggest_categorical("kind", ["a", "b"])
    x = trial.suggest_float(f"x_{kind}", -1, 1)
    return {"a": 0.0, "b": 1.0}[kind] + x**2


def _nested_kinds(trial: optuna.Trial) -> float:
    model = trial.suggest_categorical("model", ["plain", "tree"])
    if model == "plain":
        return 3.0 + trial.suggest_float("x_plain", -1, 1) ** 2
    kind = trial.suggest_categorical("kind", ["a", "b", "c"])
    x = trial.suggest_float(f"x_{kind}", -1, 1)
    return {"a": 0.0, "b": 1.0, "c": 2.0}[kind] + x**2


def _encoded(objective, n: int) -> tuple[ConditionalSpace, np.ndarray, np.ndarray, np.ndarray]:
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=1))
    study.optimize(objective, n_trials=n)
    return _encode(study.trials)


def _encode(trials: list) -> tuple[ConditionalSpace, np.ndarray, np.ndarray, np.ndarray]:
    """The inferred space and the encoded trials: ``X``, ``active`` and the values."""
    space = infer_space(trials)
    rows = [space.encode_trial(t.params, t.distributions) for t in trials]
    X = np.array([r[0] for r in rows])
    active = np.array([r[1] for r in rows])
    return space, X, active, np.array([t.value for t in trials])


def _kinds(space: ConditionalSpace, paths: list) -> set[str]:
    return _drawn(space, paths, "kind")


@pytest.mark.parametrize(("n", "n_good"), [(1, 1), (5, 1), (30, 3), (31, 4), (500, 25)])
def test_good_trials_are_the_best_tenth_at_least_one_at_most_25(n: int, n_good: int) -> None:
    y = np.random.default_rng(0).normal(size=n)
    good = good_trials(y)
    assert good.sum() == n_good
    assert y[good].max() <= y[~good].min() if n > n_good else True


def test_the_draw_keeps_the_paths_of_one_branch_mostly_the_one_with_the_good_trials() -> None:
    space, X, active, y = _encoded(_three_kinds, 30)
    paths = space.paths()
    assert paths is not None and len(paths) == 3
    counts = {"a": 0, "b": 0, "c": 0}
    for seed in range(200):
        kept = draw_branches(space, X, active, y, paths, np.random.default_rng(seed))
        kinds = _kinds(space, kept)
        assert len(kinds) == 1  # one branch's paths, every other parameter as it was
        counts[kinds.pop()] += 1
    # "a" (level 0) holds the good trials; the others are still drawn now and then.
    assert counts["a"] > 150
    assert counts["b"] + counts["c"] > 0


def test_an_untried_branch_keeps_a_wide_draw() -> None:
    space, X, active, y = _encoded(_three_kinds, 30)
    paths = space.paths()
    assert paths is not None
    kind = space.index["kind"]
    c_code = space.nodes[kind].to_unit(np.array([2.0]))[0]
    tried = ~np.isclose(X[:, kind], c_code)  # forget the trials of "c"
    drawn_c = sum(
        _kinds(
            space,
            draw_branches(
                space, X[tried], active[tried], y[tried], paths, np.random.default_rng(seed)
            ),
        )
        == {"c"}
        for seed in range(200)
    )
    # Beta(1, 1) for the untried branch against Beta(1 + good, 1 + other) for the tried ones.
    assert 10 < drawn_c < 150


def test_two_branches_are_left_to_the_path_ei_and_the_generator_untouched() -> None:
    space, X, active, y = _encoded(_two_kinds, 20)
    paths = space.paths()
    assert paths is not None and len(paths) == 2
    rng = np.random.default_rng(0)
    assert draw_branches(space, X, active, y, paths, rng) == paths
    assert rng.random() == np.random.default_rng(0).random()


def test_a_nested_parameter_counts_its_own_trials_and_keeps_the_other_root_branch() -> None:
    space, X, active, y = _encoded(_nested_kinds, 40)
    paths = space.paths()
    assert paths is not None and len(paths) == 4  # plain, tree/a, tree/b, tree/c
    kept = draw_branches(space, X, active, y, paths, np.random.default_rng(0))
    assert len(kept) == 2
    assert len(_kinds(space, kept)) == 1
    plain = [p for p in kept if "kind" not in dict(p.branch_values)]
    assert len(plain) == 1  # the binary root is not drawn: its "plain" path stays


def test_no_trials_leave_the_paths_as_they_are() -> None:
    space, X, active, y = _encoded(_three_kinds, 10)
    paths = space.paths()
    assert paths is not None
    rng = np.random.default_rng(0)
    assert draw_branches(space, X[:0], active[:0], y[:0], paths, rng) == paths


def _suggestions(sampler: TreeGPSampler) -> list[dict]:
    study = optuna.create_study(sampler=sampler)
    study.optimize(_three_kinds, n_trials=14)
    return [t.params for t in study.trials]


def test_the_sampler_draws_by_default_and_the_same_seed_gives_the_same_suggestions() -> None:
    options = dict(seed=3, n_startup_trials=8, n_candidates=64, n_local_search=1, n_restarts=0)
    first = _suggestions(TreeGPSampler(**options))
    assert first == _suggestions(TreeGPSampler(**options))
    assert first != _suggestions(TreeGPSampler(branch_draw=False, **options))


def test_branch_draw_must_be_a_bool() -> None:
    with pytest.raises(ValueError, match="branch_draw"):
        TreeGPSampler(branch_draw="yes")  # type: ignore[arg-type]


def _designed(
    rows: list[tuple[dict, float]], choices: dict[str, tuple[str, ...]]
) -> tuple[ConditionalSpace, np.ndarray, np.ndarray, np.ndarray]:
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
    return _encode(trials)


def _drawn(space: ConditionalSpace, paths: list, name: str) -> set[str]:
    node = space.nodes[space.index[name]]
    return {
        node.distribution.choices[int(v)]
        for p in paths
        for key, values in p.branch_values
        if key == name
        for v in values
    }


def _draws(
    designed: tuple[ConditionalSpace, np.ndarray, np.ndarray, np.ndarray], seeds: int = 200
) -> list[list]:
    space, X, active, y = designed
    paths = space.paths()
    assert paths is not None
    return [
        draw_branches(space, X, active, y, paths, np.random.default_rng(seed))
        for seed in range(seeds)
    ]


def _kernel(kernel: str, i: int) -> dict:
    return {"kernel": kernel, f"x_{kernel}": i / 10}


def test_a_nested_parameter_finds_its_best_branch_among_its_own_trials() -> None:
    # The "plain" root branch holds every globally good trial; among the "tree" trials kernel
    # "a" is best. Counted against the global good set each kernel would hold none of them
    # (and each was drawn about a third of the time).
    rows = [({"model": "plain", "x_plain": i / 20}, 0.01 * i) for i in range(12)]
    for kernel, level in (("a", 1.0), ("b", 3.0), ("c", 3.0)):
        rows += [({"model": "tree", **_kernel(kernel, i)}, level + i / 100) for i in range(6)]
    designed = _designed(rows, {"model": ("plain", "tree"), "kernel": ("a", "b", "c")})
    kernels = [_drawn(designed[0], kept, "kernel") for kept in _draws(designed)]
    assert kernels.count({"a"}) > 150


def test_a_family_is_judged_at_its_best_nested_branch() -> None:
    # svc's kernel "a" holds two of the three good trials, its other kernels are poor; k-NN is
    # steady and holds the third. On its own counts svc (2 good, 10 other) is barely ahead of
    # k-NN (1 good, 9 other); at its best kernel (2 good, 0 other) it is drawn nearly always.
    rows = [({"family": "knn", "x_knn": i / 10}, 0.5 + i / 100) for i in range(10)]
    rows += [({"family": "svc", **_kernel("a", i)}, 0.1 * (i + 1)) for i in range(2)]
    rows += [({"family": "svc", **_kernel(k, i)}, 5.0 + i / 100) for k in "bc" for i in range(5)]
    rows += [({"family": "lr", "x_lr": i / 8}, 2.0 + i / 100) for i in range(8)]
    designed = _designed(rows, {"family": ("knn", "svc", "lr"), "kernel": ("a", "b", "c")})
    families = [_drawn(designed[0], kept, "family") for kept in _draws(designed)]
    assert families.count({"svc"}) > 180


def _prep(family: str, prep: str, x: float) -> dict:
    return {"family": family, "prep": prep, f"x_{family}": x, f"z_{prep}": 0.0}


def test_the_second_root_parameter_is_judged_on_the_drawn_family_s_trials() -> None:
    # "prep" (3 branches) is drawn after "family" (4 branches): among svc's trials "p" is the
    # best preprocessing, though "q" holds two of the three globally good trials (k-NN's).
    rows = [(_prep("knn", "q", i / 10), i / 100) for i in range(8)]
    rows += [(_prep("knn", p, 0.0), 1.0) for p in "pr"]
    rows += [(_prep("svc", "p", i / 6), 0.015 + i / 100) for i in range(6)]
    rows += [(_prep("svc", p, i / 4), 2.0) for p in "qr" for i in range(3)]
    rows += [(_prep(f, p, 0.0), 3.0) for f in ("lr", "tree") for p in "pqr"]
    choices = {"family": ("knn", "svc", "lr", "tree"), "prep": ("p", "q", "r")}
    designed = _designed(rows, choices)
    space = designed[0]
    assert [node.name for node in draw_order(space)[:2]] == ["family", "prep"]
    preps = [
        _drawn(space, kept, "prep")
        for kept in _draws(designed, seeds=1000)
        if _drawn(space, kept, "family") == {"svc"}
    ]
    # Counted over every family's trials "q" would lead; "p" was drawn 36% of the time so.
    assert len(preps) > 50
    assert preps.count({"p"}) > 0.5 * len(preps)
