"""The branches chosen by TPE's rule at parameters with three or more branches and below them
(condsamplers.branch_tpe, ``TreeGPSampler(branch_draw="tpe")``), before the two-step search's
path EI."""

from __future__ import annotations

import numpy as np
import optuna
import pytest

from condsamplers import TreeGPSampler, infer_space
from condsamplers.branch_draw import draw_order
from condsamplers.branch_tpe import N_CANDIDATES, choose_branches, tpe_candidates
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


def test_the_draw_keeps_the_paths_of_one_branch_mostly_the_one_with_the_good_trials() -> None:
    space, X, active, y = _encoded(_three_kinds, 30)
    paths = space.paths()
    assert paths is not None and len(paths) == 3
    counts = {"a": 0, "b": 0, "c": 0}
    for seed in range(200):
        kept = choose_branches(space, X, active, y, paths, np.random.default_rng(seed))
        kinds = _kinds(space, kept)
        assert len(kinds) == 1  # one branch's paths, every other parameter as it was
        counts[kinds.pop()] += 1
    # "a" (level 0) holds every good trial; "b" and "c", ten poor trials each, have a lower
    # l/g than "a" whichever candidates are drawn (an untried branch is, below).
    assert counts["a"] == 200


def test_an_untried_branch_is_tried_first() -> None:
    space, X, active, y = _encoded(_three_kinds, 30)
    paths = space.paths()
    assert paths is not None
    kind = space.index["kind"]
    c_code = space.nodes[kind].to_unit(np.array([2.0]))[0]
    tried = ~np.isclose(X[:, kind], c_code)  # forget the trials of "c"
    drawn_c = sum(
        _kinds(
            space,
            choose_branches(
                space, X[tried], active[tried], y[tried], paths, np.random.default_rng(seed)
            ),
        )
        == {"c"}
        for seed in range(200)
    )
    # Only the prior kernel puts mass on "c" in l and in g, so its l/g is the ratio of the
    # prior's weights, (|B| + 1) / (|G| + 1), above that of "a", whose many trials outside the
    # good set raise g: once a candidate is "c" (the prior kernel drawn), "c" is chosen.
    assert drawn_c > 180


def test_two_branches_are_left_to_the_path_ei_and_the_generator_untouched() -> None:
    space, X, active, y = _encoded(_two_kinds, 20)
    paths = space.paths()
    assert paths is not None and len(paths) == 2
    rng = np.random.default_rng(0)
    assert choose_branches(space, X, active, y, paths, rng) == paths
    assert rng.random() == np.random.default_rng(0).random()


def test_a_nested_parameter_counts_its_own_trials_and_keeps_the_other_root_branch() -> None:
    space, X, active, y = _encoded(_nested_kinds, 40)
    paths = space.paths()
    assert paths is not None and len(paths) == 4  # plain, tree/a, tree/b, tree/c
    kept = choose_branches(space, X, active, y, paths, np.random.default_rng(0))
    assert len(kept) == 2
    assert len(_kinds(space, kept)) == 1
    plain = [p for p in kept if "kind" not in dict(p.branch_values)]
    assert len(plain) == 1  # the binary root is not drawn: its "plain" path stays


def test_no_trials_leave_the_paths_as_they_are() -> None:
    space, X, active, y = _encoded(_three_kinds, 10)
    paths = space.paths()
    assert paths is not None
    rng = np.random.default_rng(0)
    assert choose_branches(space, X[:0], active[:0], y[:0], paths, rng) == paths


def _suggestions(sampler: TreeGPSampler) -> list[dict]:
    study = optuna.create_study(sampler=sampler)
    study.optimize(_three_kinds, n_trials=14)
    return [t.params for t in study.trials]


def test_the_sampler_takes_tpe_s_rule_and_the_same_seed_gives_the_same_suggestions() -> None:
    options = dict(seed=3, n_startup_trials=8, n_candidates=64, n_local_search=1, n_restarts=0)
    first = _suggestions(TreeGPSampler(branch_draw="tpe", **options))
    assert first == _suggestions(TreeGPSampler(branch_draw="tpe", **options))
    assert first != _suggestions(TreeGPSampler(**options))  # the Thompson draw


@pytest.mark.parametrize("value", ["yes", "thompson", "TPE", 1])
def test_branch_draw_must_be_true_false_or_tpe(value: object) -> None:
    with pytest.raises(ValueError, match="branch_draw=.* must be True .*'tpe'"):
        TreeGPSampler(branch_draw=value)  # type: ignore[arg-type]


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
        choose_branches(space, X, active, y, paths, np.random.default_rng(seed))
        for seed in range(seeds)
    ]


def test_a_pairing_of_root_branches_is_kept_whole() -> None:
    # The good trials are k-NN after "q" and svc after "p"; k-NN after "p" and svc after "q"
    # are poor. Each family and each preprocessing on its own holds half of the good trials,
    # so a choice of each on its own would take a poor pairing half of the time.
    rows = [(_prep("knn", "q", i / 10), i / 100) for i in range(2)]
    rows += [(_prep("svc", "p", i / 10), 0.005 + i / 100) for i in range(2)]
    rows += [(_prep("knn", "p", i / 10), 2.0 + i / 100) for i in range(8)]
    rows += [(_prep("svc", "q", i / 10), 2.0 + i / 100) for i in range(8)]
    rows += [(_prep(f, p, 0.0), 3.0) for f in ("lr", "tree") for p in "pqr"]
    choices = {"family": ("knn", "svc", "lr", "tree"), "prep": ("p", "q", "r")}
    designed = _designed(rows, choices)
    space = designed[0]
    assert [node.name for node in draw_order(space)[:2]] == ["family", "prep"]
    pairs = [
        (*_drawn(space, kept, "family"), *_drawn(space, kept, "prep")) for kept in _draws(designed)
    ]
    assert all(len(pair) == 2 for pair in pairs)  # one family and one preprocessing
    good_pairs = pairs.count(("knn", "q")) + pairs.count(("svc", "p"))
    poor_pairs = pairs.count(("knn", "p")) + pairs.count(("svc", "q"))
    assert good_pairs > 150
    assert poor_pairs < 10


def _prep(family: str, prep: str, x: float) -> dict:
    return {"family": family, "prep": prep, f"x_{family}": x, f"z_{prep}": 0.0}


def test_a_two_branch_parameter_below_a_drawn_root_is_chosen_by_its_good_trials() -> None:
    # svc's kernel has two branches (left to the path EI elsewhere); below the drawn family it
    # is chosen too: kernel "a" holds svc's good trials, "b" only poor ones.
    rows = [({"family": "svc", **_kernel("a", i)}, 0.1 * (i + 1)) for i in range(3)]
    rows += [({"family": "svc", **_kernel("b", i)}, 5.0 + i / 100) for i in range(6)]
    rows += [({"family": "knn", "x_knn": i / 10}, 1.0 + i / 100) for i in range(10)]
    rows += [({"family": "lr", "x_lr": i / 8}, 2.0 + i / 100) for i in range(8)]
    designed = _designed(rows, {"family": ("knn", "svc", "lr"), "kernel": ("a", "b")})
    space = designed[0]
    kernels = [
        _drawn(space, kept, "kernel")
        for kept in _draws(designed)
        if _drawn(space, kept, "family") == {"svc"}
    ]
    assert len(kernels) > 100
    assert all(len(k) == 1 for k in kernels)
    assert kernels.count({"a"}) > 0.9 * len(kernels)


def _kernel(kernel: str, i: int) -> dict:
    return {"kernel": kernel, f"x_{kernel}": i / 10}


def test_tpe_candidates_come_from_the_good_trials_and_are_ranked_by_l_over_g() -> None:
    # Two parameters of 3 and 4 branches; the good trials sit at (0, 1), the others at (2, 3).
    good = np.array([[0, 1], [0, 1], [0, 1]])
    other = np.array([[2, 3]] * 20 + [[0, 3]] * 5)
    candidates = tpe_candidates(good, other, [3, 4], np.random.default_rng(0))
    assert candidates.shape == (N_CANDIDATES, 2)
    assert (candidates[:, 0] < 3).all() and (candidates[:, 1] < 4).all()
    assert (candidates[0] == [0, 1]).all()  # the good pairing ranks first
    rows = {tuple(c) for c in candidates}
    assert (2, 3) not in list(rows)[:1]
    # drawn from l: most candidates are the good trials' pairing
    assert sum((c == [0, 1]).all() for c in candidates) > N_CANDIDATES / 3
