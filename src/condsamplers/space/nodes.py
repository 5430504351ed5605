"""One node of a conditional space: a parameter (or one variant of a parameter) with its
distribution, the :class:`Condition` on its branching parent, and the encoding of its column in
[0, 1] (:meth:`ParamNode.to_unit`, :meth:`ParamNode.from_unit`)."""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import cast

import numpy as np
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)

#: Integer parameters with more grid values than this are never taken as branching parents:
#: a ``units`` parameter whose values happen to separate two sets of trials is noise, not a
#: condition.
MAX_INT_BRANCH_VALUES = 32


@dataclasses.dataclass(frozen=True)
class Condition:
    """A node is active iff its parent is active and the parent's value satisfies this.

    ``values`` are internal representations (choice index for categoricals, the integer for
    ints). For integer parents whose activating values form an up-set (down-set) of the observed
    values, ``lower`` (``upper``) holds the threshold and new values extrapolate.
    """

    parent: str
    values: frozenset[float]
    lower: float | None = None
    upper: float | None = None

    def holds(self, parent_internal: np.ndarray | float) -> np.ndarray:
        """Whether the condition holds at each of the parent's internal values (elementwise;
        values are compared rounded to 9 decimals)."""
        value = np.asarray(parent_internal, dtype=float)
        if self.lower is not None:
            return value >= self.lower - 1e-9
        if self.upper is not None:
            return value <= self.upper + 1e-9
        return (np.round(value, 9)[..., None] == self._rounded_values).any(axis=-1)

    @functools.cached_property
    def _rounded_values(self) -> np.ndarray:
        return np.round(np.array(sorted(self.values), dtype=float), 9)


@dataclasses.dataclass
class ParamNode:
    """One parameter (or one variant of a parameter) of a conditional space."""

    key: str
    name: str
    distribution: BaseDistribution
    condition: Condition | None = None
    #: True when the node is not active in every trial and no parent explains when it is.
    unexplained: bool = False
    #: all distributions merged into this node (a distribution changed mid-study).
    accepted: list[BaseDistribution] = dataclasses.field(default_factory=list)
    #: earliest position at which the parameter was suggested in a trial (display order).
    position: float = 0.0

    def display_key(self) -> tuple[float, float, str]:
        """Siblings are shown by activating parent value, then suggestion order, then key."""
        first_value = -1.0 if self.condition is None else min(self.condition.values)
        return (first_value, self.position, self.key)

    @property
    def is_categorical(self) -> bool:
        return isinstance(self.distribution, CategoricalDistribution)

    @property
    def is_discrete(self) -> bool:
        """Int or stepped float: values on a grid."""
        d = self.distribution
        return isinstance(d, IntDistribution) or (
            isinstance(d, FloatDistribution) and d.step is not None
        )

    def n_values(self) -> int | None:
        """How many values the parameter can take; ``None`` for a continuous float."""
        d = self.distribution
        if isinstance(d, CategoricalDistribution):
            return len(d.choices)
        if not self.is_discrete:
            return None
        assert isinstance(d, (FloatDistribution, IntDistribution)) and d.step is not None
        return int(round((d.high - d.low) / d.step)) + 1

    def can_branch(self) -> bool:
        d = self.distribution
        if isinstance(d, CategoricalDistribution):
            return True
        if isinstance(d, IntDistribution) and not d.log:
            return cast(int, self.n_values()) <= MAX_INT_BRANCH_VALUES
        return False

    def grid(self) -> np.ndarray:
        """The internal values a branching node can take."""
        d = self.distribution
        if isinstance(d, CategoricalDistribution):
            return np.arange(len(d.choices), dtype=float)
        assert isinstance(d, IntDistribution)
        return np.arange(d.low, d.high + 1, d.step, dtype=float)

    # -- encoding of one column -------------------------------------------------------------
    def _bounds(self) -> tuple[float, float, bool]:
        d = self.distribution
        assert isinstance(d, (FloatDistribution, IntDistribution))
        half = 0.5 * d.step if self.is_discrete else 0.0  # type: ignore[operator]
        low, high = d.low - half, d.high + half
        if d.log:
            return math.log(max(low, 1e-300)), math.log(high), True
        return low, high, False

    def to_unit(self, internal: np.ndarray) -> np.ndarray:
        """Internal representation -> encoded column value."""
        internal = np.asarray(internal, dtype=float)
        if self.is_categorical:
            return internal
        low, high, log = self._bounds()
        v = np.log(np.maximum(internal, 1e-300)) if log else internal
        if high <= low:
            return np.full_like(v, 0.5)
        return np.clip((v - low) / (high - low), 0.0, 1.0)

    def from_unit(self, unit: np.ndarray) -> np.ndarray:
        """Encoded column value -> internal representation (rounded onto the grid)."""
        unit = np.asarray(unit, dtype=float)
        d = self.distribution
        if isinstance(d, CategoricalDistribution):
            return np.clip(np.round(unit), 0, len(d.choices) - 1)
        assert isinstance(d, (FloatDistribution, IntDistribution))
        low, high, log = self._bounds()
        v = low + np.clip(unit, 0.0, 1.0) * (high - low)
        if log:
            v = np.exp(v)
        if self.is_discrete:
            v = d.low + np.round((v - d.low) / d.step) * d.step  # type: ignore[operator]
        # A value at a bound is the bound itself, not exp(log(1000)) = 999.9999999999989.
        v = np.where(unit <= 0.0, d.low, np.where(unit >= 1.0, d.high, v))
        return np.clip(v, d.low, d.high)

    def describe_distribution(self) -> str:
        d = self.distribution
        if isinstance(d, CategoricalDistribution):
            return "categorical " + repr(tuple(d.choices))
        assert isinstance(d, (FloatDistribution, IntDistribution))
        kind = "int" if isinstance(d, IntDistribution) else "float"
        extras = (" log" if d.log else "") + (
            f" step={d.step}" if d.step is not None and d.step != 1 else ""
        )
        return f"{kind} [{d.low}, {d.high}]{extras}"
