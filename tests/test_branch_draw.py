"""The Thompson draw of the branch at parameters with three or more branches
(condsamplers.branch_draw), before the two-step search's path EI."""

from __future__ import annotations

import numpy as np
import optuna
import pytest
from branch_spaces import (
    designed,
    drawn,
    draws,
    kernel,
    kinds_kept,
    prep,
    suggestions,
    untried_c_chosen,
)

from condsamplers import TreeGPSampler
from condsamplers.branch_draw import draw_branches, draw_order, good_trials

optuna.logging.set_verbosity(optuna.logging.WARNING)


@pytest.mark.parametrize(("n", "n_good"), [(1, 1), (5, 1), (30, 3), (31, 4), (500, 25)])
def test_good_trials_are_the_best_tenth_at_least_one_at_most_25(n: int, n_good: int) -> None:
    y = np.random.default_rng(0).normal(size=n)
    good = good_trials(y)
    assert good.sum() == n_good
    assert y[good].max() <= y[~good].min() if n > n_good else True


def test_the_draw_keeps_the_paths_of_one_branch_mostly_the_one_with_the_good_trials() -> None:
    counts = kinds_kept(draw_branches)
    # "a" (level 0) holds the good trials; the others are still drawn now and then.
    assert counts["a"] > 150
    assert counts["b"] + counts["c"] > 0


def test_an_untried_branch_keeps_a_wide_draw() -> None:
    drawn_c = untried_c_chosen(draw_branches)
    # Beta(1, 1) for the untried branch against Beta(1 + good, 1 + other) for the tried ones.
    assert 10 < drawn_c < 150


def test_the_sampler_draws_by_default_and_the_same_seed_gives_the_same_suggestions() -> None:
    options = dict(seed=3, n_startup_trials=8, n_candidates=64, n_local_search=1, n_restarts=0)
    first = suggestions(TreeGPSampler(**options))
    assert first == suggestions(TreeGPSampler(**options))
    assert first != suggestions(TreeGPSampler(branch_draw=False, **options))


def test_branch_draw_must_be_a_bool() -> None:
    with pytest.raises(ValueError, match="branch_draw"):
        TreeGPSampler(branch_draw="yes")  # type: ignore[arg-type]


def test_a_nested_parameter_finds_its_best_branch_among_its_own_trials() -> None:
    # The "plain" root branch holds every globally good trial; among the "tree" trials kernel
    # "a" is best. Counted against the global good set each kernel would hold none of them
    # (and each was drawn about a third of the time).
    rows = [({"model": "plain", "x_plain": i / 20}, 0.01 * i) for i in range(12)]
    for name, level in (("a", 1.0), ("b", 3.0), ("c", 3.0)):
        rows += [({"model": "tree", **kernel(name, i)}, level + i / 100) for i in range(6)]
    trials = designed(rows, {"model": ("plain", "tree"), "kernel": ("a", "b", "c")})
    kernels = [drawn(trials[0], kept, "kernel") for kept in draws(draw_branches, trials)]
    assert kernels.count({"a"}) > 150


def test_a_family_is_judged_at_its_best_nested_branch() -> None:
    # svc's kernel "a" holds two of the three good trials, its other kernels are poor; k-NN is
    # steady and holds the third. On its own counts svc (2 good, 10 other) is barely ahead of
    # k-NN (1 good, 9 other); at its best kernel (2 good, 0 other) it is drawn nearly always.
    rows = [({"family": "knn", "x_knn": i / 10}, 0.5 + i / 100) for i in range(10)]
    rows += [({"family": "svc", **kernel("a", i)}, 0.1 * (i + 1)) for i in range(2)]
    rows += [({"family": "svc", **kernel(k, i)}, 5.0 + i / 100) for k in "bc" for i in range(5)]
    rows += [({"family": "lr", "x_lr": i / 8}, 2.0 + i / 100) for i in range(8)]
    trials = designed(rows, {"family": ("knn", "svc", "lr"), "kernel": ("a", "b", "c")})
    families = [drawn(trials[0], kept, "family") for kept in draws(draw_branches, trials)]
    assert families.count({"svc"}) > 180


def test_the_second_root_parameter_is_judged_on_the_drawn_family_s_trials() -> None:
    # "prep" (3 branches) is drawn after "family" (4 branches): among svc's trials "p" is the
    # best preprocessing, though "q" holds two of the three globally good trials (k-NN's).
    rows = [(prep("knn", "q", i / 10), i / 100) for i in range(8)]
    rows += [(prep("knn", p, 0.0), 1.0) for p in "pr"]
    rows += [(prep("svc", "p", i / 6), 0.015 + i / 100) for i in range(6)]
    rows += [(prep("svc", p, i / 4), 2.0) for p in "qr" for i in range(3)]
    rows += [(prep(f, p, 0.0), 3.0) for f in ("lr", "tree") for p in "pqr"]
    choices = {"family": ("knn", "svc", "lr", "tree"), "prep": ("p", "q", "r")}
    trials = designed(rows, choices)
    space = trials[0]
    assert [node.name for node in draw_order(space)[:2]] == ["family", "prep"]
    preps = [
        drawn(space, kept, "prep")
        for kept in draws(draw_branches, trials, seeds=1000)
        if drawn(space, kept, "family") == {"svc"}
    ]
    # Counted over every family's trials "q" would lead; "p" was drawn 36% of the time so.
    assert len(preps) > 50
    assert preps.count({"p"}) > 0.5 * len(preps)
