"""The branches of a conditional space chosen by TPE's rule, before the path EI
(``TreeGPSampler(branch_draw="tpe")``; the default draw is :mod:`condsamplers.branch_draw`'s).

The two-step search (Jenatton et al. 2017, sec. 3.2) chooses a path by its path EI. Where a
parameter selects among many branches (an estimator family, a preprocessing), each branch holds a
few trials and the model judges a branch by their level: one poor first trial writes a branch off,
and a branch whose good configurations are a small share of its trials (k-NN after a normaliser on
iris, an SGD after PCA on wine) is rarely searched long enough to find them (seen on the CASH tasks
of ``benchmarks/hpo``). Before the path EI, the branches are chosen the way Optuna's multivariate
TPE (Bergstra et al. 2011; Watanabe 2023, secs. 3-4) chooses categorical values, from how often
each is among the *good* trials; the path EI and the acquisition optimiser then choose the numbers
on the chosen branches' paths.

Values of a branching parameter are grouped by the children they activate (its *branches*,
``ConditionalSpace.branch_groups``). The good trials ``G`` are the best ``ceil(0.1 n)`` of the
``n`` feasible ones, at least 1 and at most 25 (TPE's split, Watanabe 2023, sec. 3.2); ``B``
are the others. For parameters ``1..d`` with ``C_j`` branches each, the kernel of trial ``t``
(``K`` kernels in all: one per trial and a prior one, prior weight ``w = 1``) is

    k_t(c) = prod_j (1[c_j = c_tj] + w/K) / (1 + w C_j/K),    k_prior(c) = prod_j 1/C_j      (1)

and with the mixtures of the good and of the other trials' kernels, each with the prior one,

    l(c) = mean_{t in G + prior} k_t(c),    g(c) = mean_{t in B + prior} k_t(c),            (2)

``N = 24`` candidates are drawn from ``l`` and the one with the highest ``log l(c) - log g(c)``
is kept (the next one where none of the paths left takes it):

    c* = argmax_{c_1..c_N ~ l} log l(c) - log g(c).                                      (3)

Which parameters, and how:

* the root parameters with three or more branches together (``d`` = their number): a pairing of
  an estimator family and a preprocessing is kept whole, so a pairing that holds good trials is
  drawn again as a pair, while the kernels' mass ``w/K`` off their own branch and the prior
  kernel try its neighbours and the untried pairings; a pairing whose trials pile up outside
  the good set loses its ratio as ``g`` grows;
* then, parents first, every branching parameter below them (two or more branches), and any
  other parameter with three or more branches, each on its own (``d = 1``) on the trials where
  it is active, with the same good set (TPE's group decomposition, Watanabe 2023, sec. 4).

Other parameters with two branches are left to the path EI (and the generator is not drawn
from): on two branches each holds about half of the trials, which the model tells apart, and
there a draw costs regret: on ``branching_nested`` the draws keep sending trials to one branch
while the other still needs refining.
"""

from __future__ import annotations

import numpy as np

from condsamplers.branch_draw import (
    MIN_BRANCHES,
    draw_order,
    good_trials,
    keeps,
    membership,
    on_path,
)
from condsamplers.space import ConditionalSpace, ParamNode, Path

#: Candidates drawn from ``l`` (eq. 3; Optuna TPE's ``n_ei_candidates``).
N_CANDIDATES = 24
#: Weight of the prior in each kernel and of the prior kernel (eq. 1; Optuna TPE's).
PRIOR_WEIGHT = 1.0


def choose_branches(
    space: ConditionalSpace,
    X: np.ndarray,
    active: np.ndarray,
    y: np.ndarray,
    paths: list[Path],
    rng: np.random.Generator,
) -> list[Path]:
    """The ``paths`` of the branches chosen by eqs. 1-3 (module docstring): the root
    parameters with ``MIN_BRANCHES`` or more branches together, then each parameter below them
    or with ``MIN_BRANCHES`` or more branches, parents first. ``X``, ``active``, ``y``: the
    encoded feasible trials, ``y`` to be minimised. A parameter on none of the paths left is
    skipped."""
    if len(y) == 0:
        return paths
    good = good_trials(y)
    order = draw_order(space)
    roots = [
        node
        for node in order
        if node.condition is None
        and len(space.branch_groups(node)) >= MIN_BRANCHES
        and any(on_path(p, node) for p in paths)
    ]
    kept = _choose(space, roots, X, active, good, paths, rng) if roots else paths
    below = {node.key for node in roots}
    for node in order:
        if node.condition is None:
            continue
        n_branches = len(space.branch_groups(node))
        if node.condition.parent not in below and n_branches < MIN_BRANCHES:
            continue
        below.add(node.key)
        if n_branches >= 2 and any(on_path(p, node) for p in kept):
            kept = _choose(space, [node], X, active, good, kept, rng)
    return kept


def _choose(
    space: ConditionalSpace,
    nodes: list[ParamNode],
    X: np.ndarray,
    active: np.ndarray,
    good: np.ndarray,
    paths: list[Path],
    rng: np.random.Generator,
) -> list[Path]:
    """The paths of the branches of ``nodes`` chosen together by eq. 3, counted on the trials
    where every one of ``nodes`` is active; ``paths`` as they are where there are no such
    trials or no candidate keeps any of the paths."""
    groups = [space.branch_groups(node) for node in nodes]
    index = np.stack(
        [_group_index(space, n, g, X, active) for n, g in zip(nodes, groups, strict=True)], axis=1
    )
    counted = (index >= 0).all(axis=1)
    if not counted.any():
        return paths
    sizes = [len(g) for g in groups]
    for candidate in tpe_candidates(index[good & counted], index[~good & counted], sizes, rng):
        narrowed = [
            p
            for p in paths
            if all(keeps(p, n, g[c]) for n, g, c in zip(nodes, groups, candidate, strict=True))
        ]
        if narrowed:
            return narrowed
    return paths


def tpe_candidates(
    good: np.ndarray, other: np.ndarray, sizes: list[int], rng: np.random.Generator
) -> np.ndarray:
    """``N_CANDIDATES`` rows of branch indices drawn from ``l`` (eq. 2), ranked by
    ``log l - log g`` (eq. 3), best first. ``good``, ``other``: ``(trials, d)`` branch indices
    of the good and the other trials; ``sizes``: the number of branches of each column."""
    kernel = rng.integers(0, len(good) + 1, size=N_CANDIDATES)
    candidates = np.zeros((N_CANDIDATES, len(sizes)), dtype=int)
    for j, n_branches in enumerate(sizes):
        for i, probs in enumerate(_kernel_probs(good[:, j], n_branches)[kernel]):
            candidates[i, j] = rng.choice(n_branches, p=probs)
    score = _log_mixture(candidates, good, sizes) - _log_mixture(candidates, other, sizes)
    return candidates[np.argsort(-score, kind="stable")]


def _kernel_probs(observed: np.ndarray, n_branches: int) -> np.ndarray:
    """Eq. 1 for one parameter: ``(len(observed) + 1, n_branches)``, the kernel at each
    observed branch, then the prior kernel (uniform)."""
    n_kernels = len(observed) + 1
    weights = np.full((n_kernels, n_branches), PRIOR_WEIGHT / n_kernels)
    weights[np.arange(len(observed)), observed] += 1.0
    weights[-1] = 1.0
    return weights / weights.sum(axis=1, keepdims=True)


def _log_mixture(candidates: np.ndarray, observed: np.ndarray, sizes: list[int]) -> np.ndarray:
    """``log`` of eq. 2 at each row of ``candidates``: the mean over the kernels at the rows
    of ``observed`` and the prior kernel of their product over the columns."""
    log_k = np.zeros((len(candidates), len(observed) + 1))
    for j, n_branches in enumerate(sizes):
        log_k += np.log(_kernel_probs(observed[:, j], n_branches)[:, candidates[:, j]].T)
    top = log_k.max(axis=1, keepdims=True)
    return top[:, 0] + np.log(np.exp(log_k - top).mean(axis=1))


def _group_index(
    space: ConditionalSpace,
    node: ParamNode,
    groups: list[tuple[float, ...]],
    X: np.ndarray,
    active: np.ndarray,
) -> np.ndarray:
    """Each trial's branch of ``node`` (an index into ``groups``), ``-1`` where inactive."""
    index = np.full(len(X), -1)
    for g, member in enumerate(membership(space, node, groups, X, active)):
        index[member] = g
    return index
