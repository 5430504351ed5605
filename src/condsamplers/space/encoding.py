"""Encoding of parameter values, the layer under the unit-cube encoding of configurations.

What a model needs to know about the encoded columns (:class:`FeatureSpec`); external values of a
distribution to internal floats and back (:func:`to_internal`, :func:`to_external`); hashable
stand-ins of values and distributions (:func:`value_key`, :func:`distribution_key`); one
distribution that covers the variants of a name (:func:`covering_distribution`). The encoding
scheme is described in :mod:`condsamplers.space`; a node encodes its column with
:meth:`~condsamplers.space.nodes.ParamNode.to_unit`, a space its configurations with
:meth:`~condsamplers.space.tree.ConditionalSpace.encode_trial`. This module imports no other
module of :mod:`condsamplers.space`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)


@dataclasses.dataclass(frozen=True)
class FeatureSpec:
    """What a model needs to know about the columns of an encoded matrix.

    Attributes:
        n_categories: for each column, the number of categories of a categorical column, or 0
            for a numerical column (already scaled to [0, 1]).
        leaf_patterns: the paths of the tree as sets of active column indices, when known (a
            structure-aware model such as the tree GP builds on them; paths never observed
            included). ``None``: a model takes the distinct active patterns of its data.
        parents: for each column, the column of its branching parent (``-1``: none), when
            known; the branching-nested kernel builds on it.
        branch_values: for each column, the encoded values of its parent under which it is
            active (empty for a column without parent); aligned with ``parents``.
    """

    n_categories: np.ndarray
    leaf_patterns: tuple[frozenset[int], ...] | None = None
    parents: tuple[int, ...] | None = None
    branch_values: tuple[tuple[float, ...], ...] | None = None

    @property
    def is_categorical(self) -> np.ndarray:
        return self.n_categories > 0

    @property
    def n_features(self) -> int:
        return len(self.n_categories)

    @classmethod
    def numerical(cls, n_features: int) -> FeatureSpec:
        return cls(np.zeros(n_features, dtype=int))


def covering_distribution(distributions: Sequence[BaseDistribution]) -> BaseDistribution:
    """One distribution that contains every value of ``distributions`` (variants of one name:
    the same kind and ``log`` flag, as Optuna's storage demands): the smallest range around
    their ranges, with their common step if they share it and their grids align (step 1 for
    integers, none for floats otherwise). Categorical variants cannot differ within a study;
    the first is returned, as for any other mix."""
    first = distributions[0]
    same_kind = all(type(d) is type(first) for d in distributions)
    if not isinstance(first, FloatDistribution | IntDistribution) or not same_kind:
        return first
    numeric = cast(list[FloatDistribution | IntDistribution], list(distributions))
    if any(d.log != first.log for d in numeric) or all(d == first for d in numeric):
        return first
    low, high = min(d.low for d in numeric), max(d.high for d in numeric)
    step = first.step
    aligned = step is not None and all(
        d.step == step and math.isclose((d.low - low) / step, round((d.low - low) / step))
        for d in numeric
    )
    if isinstance(first, IntDistribution):
        step = int(step) if aligned and step is not None else 1
        return IntDistribution(
            int(low), int(low + (high - low) // step * step), log=first.log, step=step
        )
    if not aligned or step is None:
        return FloatDistribution(low, high, log=first.log)
    return FloatDistribution(low, low + math.floor((high - low) / step + 1e-9) * step, step=step)


#: What a NaN value (a categorical choice ``float("nan")``) stands as in keys: ``nan != nan``,
#: and two NaN objects hash apart, yet they are one choice.
_NAN_KEY = "<condsamplers: NaN>"


def value_key(value: Any) -> Any:
    """A hashable stand-in of a parameter value, equal for equal values and for two NaNs."""
    return _NAN_KEY if isinstance(value, float) and math.isnan(value) else value


def distribution_key(distribution: BaseDistribution) -> Any:
    """A hashable stand-in of a distribution, equal for equal distributions (Optuna's own
    equality: the same type and fields) and for two categorical ones whose choices differ only
    by NaN objects. A plain tuple, so that a study's thousands of keys hash and compare in C
    (an Optuna distribution compares its fields in Python)."""
    if isinstance(distribution, CategoricalDistribution):
        return (CategoricalDistribution, tuple(value_key(c) for c in distribution.choices))
    if isinstance(distribution, FloatDistribution | IntDistribution):
        d = distribution
        return (type(d), d.low, d.high, d.log, d.step)
    return distribution


def to_internal(distribution: BaseDistribution, value: Any) -> float | None:
    """External value -> internal float, or ``None`` if the distribution does not contain it."""
    try:
        internal = distribution.to_internal_repr(value)
    except (ValueError, TypeError):
        return None
    if not contains(distribution, float(internal)):
        return None
    return float(internal)


def contains(distribution: BaseDistribution, internal: float) -> bool:
    """Whether an internal value lies in ``distribution``: within ``[low, high]`` and on
    its step grid (within ``1e-8`` of a step for floats), or a valid choice index; Optuna's
    own rule, written here from the public fields (its ``_contains`` is private)."""
    if isinstance(distribution, CategoricalDistribution):
        return 0 <= int(internal) < len(distribution.choices)
    if isinstance(distribution, (FloatDistribution, IntDistribution)):
        inside = distribution.low <= internal <= distribution.high
        if distribution.step is None or not inside:
            return inside
        if isinstance(distribution, IntDistribution):
            return (internal - distribution.low) % distribution.step == 0
        steps = (internal - distribution.low) / distribution.step
        return abs(steps - round(steps)) < 1.0e-8
    raise TypeError(f"Unsupported distribution {distribution!r}.")


def to_external(distribution: BaseDistribution, internal: float) -> Any:
    if isinstance(distribution, CategoricalDistribution):
        return distribution.to_external_repr(int(round(internal)))
    if isinstance(distribution, IntDistribution):
        return int(round(internal))
    return float(internal)
