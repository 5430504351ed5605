"""The ``resource`` option of ``CondBayesSearchCV``: candidates cross-validated on a growing
resource (training samples, or an estimator parameter such as ``max_iter`` or
``n_estimators``), as ``HalvingRandomSearchCV`` does, in Hyperband's brackets (Li et al.
2018, alg. 1: the candidates of bracket ``b`` start on rung ``b``) with asynchronous
successive halving within each bracket (Li et al. 2020: a candidate goes on while its score is
in the best ``1 / factor`` of its bracket's scores on that rung). Each rung's score is reported
to the trial, so the sampler learns from the stopped candidates with the resource as a
fidelity input (docs/pruning.md), and the candidates that start on the last rung give it full
evaluations of its own proposals.

This module holds the arithmetic (the resource ladder, the brackets, the promotion rule, their
validation) and the subsampling splitter; the loop that runs a candidate up the ladder is in
:mod:`condsamplers.sklearn.search`.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Iterator
from typing import Any

import numpy as np
from sklearn.utils import resample

from condsamplers.validation import is_integer

#: The resource that subsamples the training part of each split.
N_SAMPLES = "n_samples"


@dataclasses.dataclass(frozen=True)
class ResourceLadder:
    """The resource amounts a candidate is cross-validated on, in order.

    Counted down from the top: the last rung is ``max_resources`` (where a candidate's score
    is its final one), each rung below is the one above divided by ``factor`` (rounded down),
    and the first is the smallest such amount at or above ``min_resources``.
    """

    resource: str
    rungs: tuple[int, ...]
    factor: int

    @property
    def min_resources(self) -> int:
        return self.rungs[0]

    @property
    def max_resources(self) -> int:
        return self.rungs[-1]


def check_ladder_options(min_resources: Any, max_resources: Any, factor: Any) -> None:
    """A ``ValueError`` naming the option for a ``factor`` that is no integer >= 2, or a
    ``min_resources`` / ``max_resources`` that is neither a positive int nor its keyword
    (``"smallest"`` / ``"auto"``)."""
    if not is_integer(factor) or factor < 2:
        raise ValueError(
            f"CondBayesSearchCV: factor must be an integer >= 2 (the share 1/factor of the "
            f"candidates of a rung goes on to the next); got {factor!r}."
        )
    for name, value, keyword in (
        ("min_resources", min_resources, "smallest"),
        ("max_resources", max_resources, "auto"),
    ):
        if value == keyword or (is_integer(value) and value >= 1):
            continue
        raise ValueError(
            f"CondBayesSearchCV: {name} must be a positive int or {keyword!r}; got {value!r}."
        )


def resource_ladder(
    resource: str,
    min_resources: int | str,
    max_resources: int | str,
    factor: numbers.Real,
    *,
    n_samples: int,
    n_splits: int,
    n_classes: int | None,
) -> ResourceLadder:
    """The ladder of the ``resource`` options, checked, with ``HalvingRandomSearchCV``'s
    defaults: ``max_resources="auto"`` is the number of samples (``resource="n_samples"``
    only); ``min_resources="smallest"`` is ``2 * n_splits`` samples (times the number of
    classes for a classifier), or 1 of another resource."""
    check_ladder_options(min_resources, max_resources, factor)
    if max_resources == "auto":
        if resource != N_SAMPLES:
            raise ValueError(
                f"CondBayesSearchCV: max_resources='auto' is the number of samples and needs "
                f"resource='n_samples'; give max_resources as an int for resource={resource!r}."
            )
        max_resources = n_samples
    if min_resources == "smallest":
        min_resources = 2 * n_splits * (n_classes or 1) if resource == N_SAMPLES else 1
    assert isinstance(min_resources, numbers.Integral)
    assert isinstance(max_resources, numbers.Integral)
    if resource == N_SAMPLES and max_resources > n_samples:
        raise ValueError(
            f"CondBayesSearchCV: max_resources={max_resources} exceeds the {n_samples} samples "
            "of X; leave it at 'auto' or give at most that."
        )
    if min_resources > max_resources:
        raise ValueError(
            f"CondBayesSearchCV: min_resources={min_resources} is above "
            f"max_resources={max_resources}; lower min_resources."
        )
    rungs = [int(max_resources)]
    while rungs[0] // int(factor) >= min_resources:
        rungs.insert(0, rungs[0] // int(factor))
    return ResourceLadder(resource, tuple(rungs), int(factor))


def bracket_budgets(n_rungs: int, factor: int) -> list[int]:
    """Candidates per bracket in one cycle: bracket ``b`` (starting on rung ``b``) gets
    ``ceil(B * factor**s / (s + 1))`` with ``B = n_rungs`` brackets and ``s = B - 1 - b``
    (Hyperband's ``n``, Li et al. 2018 alg. 1, as Optuna's ``HyperbandPruner`` weighs its
    brackets), so that each bracket spends about the same resource."""
    brackets = n_rungs
    return [
        math.ceil(brackets * factor ** (brackets - 1 - b) / (brackets - b))
        for b in range(brackets)
    ]


def bracket_sequence(n_rungs: int, factor: int) -> tuple[int, ...]:
    """The starting rung of each candidate of one cycle, the brackets interleaved evenly
    (bracket ``b``'s ``j``-th candidate at position ``(j + 1/2) / n_b`` of the cycle); the
    search repeats the cycle."""
    slots = [
        ((j + 0.5) / count, b)
        for b, count in enumerate(bracket_budgets(n_rungs, factor))
        for j in range(count)
    ]
    return tuple(b for _, b in sorted(slots))


def is_promoted(score: float, competing: list[float], factor: int) -> bool:
    """Whether ``score`` (maximised) goes on to the next rung: it is in the best
    ``len(competing) // factor`` of ``competing`` (the scores on this rung of its bracket so
    far, itself included), or the best while there are fewer than ``factor`` (asynchronous
    successive halving, the rule of Optuna's ``SuccessiveHalvingPruner``)."""
    ranked = sorted(competing, reverse=True)
    kept = max(1, len(ranked) // factor)
    return score >= ranked[kept - 1]


def check_resource(resource: str, estimator_params: dict[str, Any], searched: set[str]) -> None:
    """``resource`` is ``"n_samples"`` or a parameter of the estimator that is not searched."""
    if not isinstance(resource, str):
        raise ValueError(
            f"CondBayesSearchCV: resource must be None, 'n_samples' or the name of an "
            f"estimator parameter; got {resource!r}."
        )
    if resource == N_SAMPLES:
        return
    if resource not in estimator_params:
        raise ValueError(
            f"CondBayesSearchCV: resource={resource!r} is not a parameter of the estimator "
            "(see estimator.get_params()); use 'n_samples' or one of its parameters."
        )
    if resource in searched:
        raise ValueError(
            f"CondBayesSearchCV: resource={resource!r} is also in search_spaces; the "
            "resource is set by the search, remove it from search_spaces."
        )


class SubsampledSplits:
    """A splitter whose training parts are those of ``cv`` subsampled to ``fraction`` of their
    size (stratified by ``y`` for a classifier), the test parts unchanged, the same subsample
    for every candidate (seeded by ``seed`` and the split's index)."""

    def __init__(self, cv: Any, fraction: float, seed: int, stratify: bool) -> None:
        self.cv = cv
        self.fraction = fraction
        self.seed = seed
        self.stratify = stratify

    def get_n_splits(self, X: Any = None, y: Any = None, groups: Any = None) -> int:
        return int(self.cv.get_n_splits(X, y, groups))

    def split(
        self, X: Any, y: Any = None, groups: Any = None
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for index, (train, test) in enumerate(self.cv.split(X, y, groups)):
            size = max(1, int(round(self.fraction * len(train))))
            if size >= len(train):
                yield train, test
                continue
            labels = np.asarray(y)[train] if (self.stratify and y is not None) else None
            try:
                chosen = resample(
                    train,
                    replace=False,
                    n_samples=size,
                    stratify=labels,
                    random_state=self.seed + index,
                )
            except ValueError:  # too few samples of a class to stratify: a plain subsample
                chosen = resample(
                    train, replace=False, n_samples=size, random_state=self.seed + index
                )
            yield np.sort(chosen), test
