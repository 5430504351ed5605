"""``infer_space`` recovers the exact tree of every benchmark problem from random trials."""

from __future__ import annotations

import optuna
import pytest

from benchmarks.problems import PROBLEMS
from condsamplers import infer_space
from condsamplers.space import ConditionalSpace, to_external

optuna.logging.set_verbosity(optuna.logging.WARNING)

# What ``describe()`` prints after 80 random trials: the tree a user sees.
EXPECTED_DESCRIBE = {
    "jenatton_small": """\
x1: categorical (0, 1)
  x2: categorical (0, 1)  [if x1 == 0]
    x4: float [-1.0, 1.0]  [if x2 == 0]
    x5: float [-1.0, 1.0]  [if x2 == 1]
  r8: float [0.0, 1.0]  [if x1 == 0]  (shared by 2 paths)
  x3: categorical (0, 1)  [if x1 == 1]
    x6: float [-1.0, 1.0]  [if x3 == 0]
    x7: float [-1.0, 1.0]  [if x3 == 1]
  r9: float [0.0, 1.0]  [if x1 == 1]  (shared by 2 paths)
(9 parameters, 4 paths)""",
    "jenatton_large": """\
x1: categorical (0, 1)
  x2: categorical (0, 1)  [if x1 == 0]
    x4: categorical (0, 1)  [if x2 == 0]
      l1: float [-1.0, 1.0]  [if x4 == 0]
      l2: float [-1.0, 1.0]  [if x4 == 1]
    x5: categorical (0, 1)  [if x2 == 1]
      l3: float [-1.0, 1.0]  [if x5 == 0]
      l4: float [-1.0, 1.0]  [if x5 == 1]
  r_left: float [0.0, 1.0]  [if x1 == 0]  (shared by 4 paths)
  x3: categorical (0, 1)  [if x1 == 1]
    x6: categorical (0, 1)  [if x3 == 0]
      l5: float [-1.0, 1.0]  [if x6 == 0]
      l6: float [-1.0, 1.0]  [if x6 == 1]
    x7: categorical (0, 1)  [if x3 == 1]
      l7: float [-1.0, 1.0]  [if x7 == 0]
      l8: float [-1.0, 1.0]  [if x7 == 1]
  r_right: float [0.0, 1.0]  [if x1 == 1]  (shared by 4 paths)
(17 parameters, 8 paths)""",
    "branching_nested": """\
x1: float [-10.0, 10.0]  (shared by 2 paths)
x2: float [-5.0, 5.0]  (shared by 2 paths)
z: categorical (1, 2)
  v: int [1, 3]  [if z == 1]
  v: int [1, 2]  [if z == 2]
(5 parameters, 2 paths)""",
    "net_depth": """\
depth: int [0, 5]
  units_1: int [16, 512] log  [if depth >= 1]  (shared by 5 paths)
  dropout_1: float [0.0, 0.9]  [if depth >= 1]  (shared by 5 paths)
  units_2: int [16, 512] log  [if depth >= 2]  (shared by 4 paths)
  dropout_2: float [0.0, 0.9]  [if depth >= 2]  (shared by 4 paths)
  units_3: int [16, 512] log  [if depth >= 3]  (shared by 3 paths)
  dropout_3: float [0.0, 0.9]  [if depth >= 3]  (shared by 3 paths)
  units_4: int [16, 512] log  [if depth >= 4]  (shared by 2 paths)
  dropout_4: float [0.0, 0.9]  [if depth >= 4]  (shared by 2 paths)
  units_5: int [16, 512] log  [if depth >= 5]
  dropout_5: float [0.0, 0.9]  [if depth >= 5]
lr: float [1e-05, 0.1] log  (shared by 6 paths)
(12 parameters, 6 paths)""",
}
EXPECTED_DESCRIBE["jenatton_small_offcentre"] = EXPECTED_DESCRIBE["jenatton_small"]
# The unconditional problems of the DNGO / BOHAMIANN papers: one path, every parameter a root.
EXPECTED_DESCRIBE["branin"] = (
    "x1: float [-5.0, 10.0]\nx2: float [0.0, 15.0]\n(2 parameters, 1 paths)"
)
EXPECTED_DESCRIBE["hartmann6"] = (
    "\n".join(f"x{j}: float [0.0, 1.0]" for j in range(1, 7)) + "\n(6 parameters, 1 paths)"
)


def _tree(space: ConditionalSpace) -> dict[str, tuple[str, tuple] | None]:
    """{name: (parent name, parent values that activate it)}; variants of a name are merged."""
    tree: dict[str, tuple[str, tuple] | None] = {}
    for node in space.nodes:
        if node.condition is None:
            tree[node.name] = None
            continue
        parent = space.nodes[space.index[node.condition.parent]]
        values = {
            to_external(parent.distribution, v) for v in parent.grid() if node.condition.holds(v)
        }
        previous = tree.get(node.name)
        if previous is not None:
            values |= set(previous[1])
        tree[node.name] = (parent.name, tuple(sorted(values)))
    return tree


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_inferred_tree_is_exact(name: str) -> None:
    problem = PROBLEMS[name]
    study = optuna.create_study(
        sampler=optuna.samplers.RandomSampler(seed=0), direction=problem.direction
    )
    study.optimize(problem.objective, n_trials=80)
    space = infer_space(study.trials)
    print(space.describe())
    assert _tree(space) == problem.expected_tree
    assert space.describe() == EXPECTED_DESCRIBE[name]
    assert not any(node.unexplained for node in space.nodes)
