"""Conditional search spaces: the tree of parameters inferred from define-by-run trials.

Vocabulary (used throughout the package, see ``docs/design.md``):

- **parameter**: a name with an Optuna distribution. Inside a :class:`ConditionalSpace` each
  parameter is a :class:`ParamNode`; the same name may own several nodes (*variants*) when it is
  suggested with different distributions in mutually exclusive branches.
- **condition** of a node: the (parent node, set of parent values) under which it is suggested.
  A node without condition is a **root** node.
- **branching** node: a categorical or small integer node that is the parent of others; its
  children are **nested** nodes. Integer parents whose activating values form an up-set or a
  down-set get a *threshold* condition (``depth >= 2``), so unseen values extrapolate.
- **path**: one set of simultaneously active nodes (a leaf of the tree); a node active on
  several paths is **shared** (Jenatton et al. 2017, sec. 2.4).

Encoding (DESIGN.md sec. 3): every node is one column of a matrix ``X`` in the unit interval.
Floats and ints map linearly (log-linearly for ``log=True``) to [0, 1]; ints and stepped floats
are widened by half a step on each side so every grid value owns an equal share of [0, 1], and are
rounded on decode. Categorical nodes hold the choice index (0, 1, ...). A boolean ``active``
matrix of the same shape says which columns are active; inactive entries of ``X`` are 0.

The package holds one concern a module: :mod:`~condsamplers.space.encoding` (parameter values
and the columns a model reads), :mod:`~condsamplers.space.nodes` (a parameter and its condition),
:mod:`~condsamplers.space.tree` (the tree: paths, encoding of configurations, sampling),
:mod:`~condsamplers.space.inference` (the tree from trials) and
:mod:`~condsamplers.space.fidelity` (a trial's step as one more column). Every name is
importable from here.
"""

from condsamplers.space.encoding import (
    FeatureSpec,
    covering_distribution,
    distribution_key,
    to_external,
    to_internal,
    value_key,
)
from condsamplers.space.fidelity import (
    FIDELITY_NAME,
    at_highest_fidelity,
    step_fidelity,
    with_fidelity,
)
from condsamplers.space.inference import infer_parents, infer_space
from condsamplers.space.nodes import MAX_INT_BRANCH_VALUES, Condition, ParamNode
from condsamplers.space.tree import MAX_PATHS, ConditionalSpace, FixedValues, Path
from condsamplers.space.tree import _describe_condition as _describe_condition

__all__ = [
    "FIDELITY_NAME",
    "Condition",
    "ConditionalSpace",
    "FeatureSpec",
    "FixedValues",
    "MAX_INT_BRANCH_VALUES",
    "MAX_PATHS",
    "ParamNode",
    "Path",
    "at_highest_fidelity",
    "covering_distribution",
    "distribution_key",
    "infer_parents",
    "infer_space",
    "step_fidelity",
    "to_external",
    "to_internal",
    "value_key",
    "with_fidelity",
]
