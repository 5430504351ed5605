"""The fidelity column: a trial's training step as one more input of the model.

A study whose trials report intermediate values (``trial.report(value, step)``) and are
stopped early by a pruner holds observations at several fidelities: a pruned trial's last
reported value at its step, a complete trial's final value. The model reads the fidelity as one
more root column of the encoding, a numerical node that is active on every path, so every
surrogate handles it with the kernel or network it has for any numerical parameter (a length
scale of its own in the GPs' product kernels, one more input of the networks). The acquisition
then holds the column at 1, the highest fidelity (``DESIGN.md`` sec. 7: "a column of the
encoding with its own kernel factor (or network input); the acquisition targets the highest
fidelity").

The encoded fidelity of step ``s`` is ``log(1 + s) / log(1 + s_max)`` (:func:`step_fidelity`),
``s_max`` being the highest step reported in the study: learning curves change fastest in their
first steps, and Hyperband's rungs (1, 3, 9, 27, ... steps) are then evenly spaced.
"""

from __future__ import annotations

import numpy as np
from optuna.distributions import FloatDistribution

from condsamplers.space.nodes import ParamNode
from condsamplers.space.tree import ConditionalSpace, FixedValues

#: Name of the fidelity column's node; no Optuna parameter is given this name.
FIDELITY_NAME = "condsamplers:fidelity"


def step_fidelity(steps: np.ndarray, max_step: float) -> np.ndarray:
    """``log(1 + s) / log(1 + s_max)`` for each step ``s`` (clipped to [0, 1]); 1 everywhere if
    ``max_step`` is 0 or less."""
    steps = np.asarray(steps, dtype=float)
    if max_step <= 0:
        return np.ones_like(steps)
    return np.clip(np.log1p(np.maximum(steps, 0.0)) / np.log1p(max_step), 0.0, 1.0)


def with_fidelity(space: ConditionalSpace) -> ConditionalSpace:
    """``space`` with the fidelity node appended as its last column (a root node, active on
    every path); the other columns keep their indices."""
    if FIDELITY_NAME in space.index:
        raise ValueError(f"The space already has a column named {FIDELITY_NAME!r}.")
    node = ParamNode(FIDELITY_NAME, FIDELITY_NAME, FloatDistribution(0.0, 1.0))
    return ConditionalSpace([*space.nodes, node])


def at_highest_fidelity(space: ConditionalSpace, fixed: FixedValues | None = None) -> FixedValues:
    """``fixed`` (values of ``space`` without the fidelity column) with the fidelity column of
    ``space`` (a space from :func:`with_fidelity`) held at 1 as well."""
    j = space.index[FIDELITY_NAME]
    if fixed is None:
        return FixedValues(np.array([j]), np.array([1.0]), np.array([1.0]), space)
    return FixedValues(
        np.append(fixed.columns, j),
        np.append(fixed.units, 1.0),
        np.append(fixed.internals, 1.0),
        space,
    )
