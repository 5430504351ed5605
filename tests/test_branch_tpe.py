"""The branches chosen by TPE's rule at parameters with three or more branches and below them
(condsamplers.branch_tpe, ``TreeGPSampler(branch_draw="tpe")``), before the two-step search's
path EI."""

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
from condsamplers.branch_draw import draw_order
from condsamplers.branch_tpe import N_CANDIDATES, choose_branches, tpe_candidates

optuna.logging.set_verbosity(optuna.logging.WARNING)


def test_the_draw_keeps_the_paths_of_one_branch_mostly_the_one_with_the_good_trials() -> None:
    counts = kinds_kept(choose_branches)
    # "a" (level 0) holds every good trial; "b" and "c", ten poor trials each, have a lower
    # l/g than "a" whichever candidates are drawn (an untried branch is, below).
    assert counts["a"] == 200


def test_an_untried_branch_is_tried_first() -> None:
    drawn_c = untried_c_chosen(choose_branches)
    # Only the prior kernel puts mass on "c" in l and in g, so its l/g is the ratio of the
    # prior's weights, (|B| + 1) / (|G| + 1), above that of "a", whose many trials outside the
    # good set raise g: once a candidate is "c" (the prior kernel drawn), "c" is chosen.
    assert drawn_c > 180


def test_the_sampler_takes_tpe_s_rule_and_the_same_seed_gives_the_same_suggestions() -> None:
    options = dict(seed=3, n_startup_trials=8, n_candidates=64, n_local_search=1, n_restarts=0)
    first = suggestions(TreeGPSampler(branch_draw="tpe", **options))
    assert first == suggestions(TreeGPSampler(branch_draw="tpe", **options))
    assert first != suggestions(TreeGPSampler(**options))  # the Thompson draw


@pytest.mark.parametrize("value", ["yes", "thompson", "TPE", 1])
def test_branch_draw_must_be_true_false_or_tpe(value: object) -> None:
    with pytest.raises(ValueError, match="branch_draw=.* must be True .*'tpe'"):
        TreeGPSampler(branch_draw=value)  # type: ignore[arg-type]


def test_a_pairing_of_root_branches_is_kept_whole() -> None:
    # The good trials are k-NN after "q" and svc after "p"; k-NN after "p" and svc after "q"
    # are poor. Each family and each preprocessing on its own holds half of the good trials,
    # so a choice of each on its own would take a poor pairing half of the time.
    rows = [(prep("knn", "q", i / 10), i / 100) for i in range(2)]
    rows += [(prep("svc", "p", i / 10), 0.005 + i / 100) for i in range(2)]
    rows += [(prep("knn", "p", i / 10), 2.0 + i / 100) for i in range(8)]
    rows += [(prep("svc", "q", i / 10), 2.0 + i / 100) for i in range(8)]
    rows += [(prep(f, p, 0.0), 3.0) for f in ("lr", "tree") for p in "pqr"]
    choices = {"family": ("knn", "svc", "lr", "tree"), "prep": ("p", "q", "r")}
    trials = designed(rows, choices)
    space = trials[0]
    assert [node.name for node in draw_order(space)[:2]] == ["family", "prep"]
    pairs = [
        (*drawn(space, kept, "family"), *drawn(space, kept, "prep"))
        for kept in draws(choose_branches, trials)
    ]
    assert all(len(pair) == 2 for pair in pairs)  # one family and one preprocessing
    good_pairs = pairs.count(("knn", "q")) + pairs.count(("svc", "p"))
    poor_pairs = pairs.count(("knn", "p")) + pairs.count(("svc", "q"))
    assert good_pairs > 150
    assert poor_pairs < 10


def test_a_two_branch_parameter_below_a_drawn_root_is_chosen_by_its_good_trials() -> None:
    # svc's kernel has two branches (left to the path EI elsewhere); below the drawn family it
    # is chosen too: kernel "a" holds svc's good trials, "b" only poor ones.
    rows = [({"family": "svc", **kernel("a", i)}, 0.1 * (i + 1)) for i in range(3)]
    rows += [({"family": "svc", **kernel("b", i)}, 5.0 + i / 100) for i in range(6)]
    rows += [({"family": "knn", "x_knn": i / 10}, 1.0 + i / 100) for i in range(10)]
    rows += [({"family": "lr", "x_lr": i / 8}, 2.0 + i / 100) for i in range(8)]
    trials = designed(rows, {"family": ("knn", "svc", "lr"), "kernel": ("a", "b")})
    space = trials[0]
    kernels = [
        drawn(space, kept, "kernel")
        for kept in draws(choose_branches, trials)
        if drawn(space, kept, "family") == {"svc"}
    ]
    assert len(kernels) > 100
    assert all(len(k) == 1 for k in kernels)
    assert kernels.count({"a"}) > 0.9 * len(kernels)


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
