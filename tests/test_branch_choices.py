"""What both branch choices before the path EI keep (condsamplers.branch_draw's Thompson draw,
condsamplers.branch_tpe's TPE rule): two-branch spaces untouched, a binary root's other path
kept, nothing done without trials."""

from __future__ import annotations

import numpy as np
import pytest
from branch_spaces import Chooser, drawn, encoded, nested_kinds, three_kinds, two_kinds

from condsamplers.branch_draw import draw_branches
from condsamplers.branch_tpe import choose_branches

CHOOSERS = pytest.mark.parametrize("choose", [draw_branches, choose_branches])


@CHOOSERS
def test_two_branches_are_left_to_the_path_ei_and_the_generator_untouched(
    choose: Chooser,
) -> None:
    space, X, active, y = encoded(two_kinds, 20)
    paths = space.paths()
    assert paths is not None and len(paths) == 2
    rng = np.random.default_rng(0)
    assert choose(space, X, active, y, paths, rng) == paths
    assert rng.random() == np.random.default_rng(0).random()


@CHOOSERS
def test_a_nested_parameter_counts_its_own_trials_and_keeps_the_other_root_branch(
    choose: Chooser,
) -> None:
    space, X, active, y = encoded(nested_kinds, 40)
    paths = space.paths()
    assert paths is not None and len(paths) == 4  # plain, tree/a, tree/b, tree/c
    kept = choose(space, X, active, y, paths, np.random.default_rng(0))
    assert len(kept) == 2
    assert len(drawn(space, kept, "kind")) == 1
    plain = [p for p in kept if "kind" not in dict(p.branch_values)]
    assert len(plain) == 1  # the binary root is not drawn: its "plain" path stays


@CHOOSERS
def test_no_trials_leave_the_paths_as_they_are(choose: Chooser) -> None:
    space, X, active, y = encoded(three_kinds, 10)
    paths = space.paths()
    assert paths is not None
    rng = np.random.default_rng(0)
    assert choose(space, X[:0], active[:0], y[:0], paths, rng) == paths
