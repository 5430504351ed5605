"""The Monte-Carlo side of the Sobol' analysis of :mod:`condsamplers.importance`.

One concern: Sobol' components of a function of independent uniform latent inputs, estimated by
pick-freeze Monte Carlo (:func:`_sobol_from_function`), and the function that the analysis
feeds them: latent inputs to configurations of a conditional space
(:func:`latent_to_configurations`) to a surrogate's posterior mean (:func:`_posterior_mean`).
Why latent inputs, and what the indices mean, is in the docstring of
:mod:`condsamplers.importance`.

**Estimators** (Saltelli et al. 2010, "Variance based sensitivity analysis of model output.
Design and estimator for the total sensitivity index", Comput. Phys. Commun. 181, Table 2): two
independent ``N x D`` latent matrices ``A`` and ``B`` (the two halves of one scrambled Sobol'
sequence, as Saltelli et al. recommend), and ``A_B^(G)``: ``A`` with the columns of group ``G``
taken from ``B``. With ``f_A = f(A)`` etc. (means over the ``N`` rows)::

    V       = mean((f_A - f_B)^2) / 2
    V_j     = V - mean((f_B - f_{A_B^(j)})^2) / 2            (Jansen 1999, first order)
    V_jk^c  = V - mean((f_B - f_{A_B^(j,k)})^2) / 2          (same, closed second order)
    V_Tj    = mean((f_A - f_{A_B^(j)})^2) / 2                 (Jansen 1999, total effect)

``B`` and ``A_B^(G)`` share exactly the inputs of ``G``, so ``V - V_G^c`` is half their mean
squared difference. For ``f = g_j(u_j) + g_k(u_k) + h(other inputs)`` the pure interaction
estimate ``V_jk^c - V_j - V_k`` reduces to ``-mean(D_j D_k)`` with independent zero-mean
differences ``D_i = g_i(B_i) - g_i(A_i)``, so it is close to 0 even at moderate ``N``.
Estimated indices are clipped at 0. Cost: ``(2 + p + p(p-1)/2) N`` posterior means for ``p``
assessed parameters, in batches.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import torch
from optuna.distributions import CategoricalDistribution
from scipy.stats import qmc

from condsamplers.models.base import Surrogate
from condsamplers.space import ConditionalSpace, ParamNode

#: Rows per batch of posterior means (bounds the memory of one kernel matrix).
_BATCH_ROWS = 2048

LatentFunction = Callable[[np.ndarray], np.ndarray]


# ---------------------------------------------------------------------------------------------
# The estimator on any function of independent uniform latent inputs
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Estimates:
    """Raw (unnormalised) variance components from one pick-freeze design."""

    variance: float
    mean: float
    main: dict[str, float]
    total: dict[str, float]
    closed: dict[tuple[str, str], float]


def _latent_design(n_samples: int, n_latent: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_samples, 2 n_latent)`` scrambled Sobol' points: ``A`` left half, ``B`` right half."""
    try:
        engine = qmc.Sobol(2 * n_latent, scramble=True, rng=rng)
    except TypeError:  # scipy < 1.15 calls the argument ``seed``
        engine = qmc.Sobol(2 * n_latent, scramble=True, seed=rng)
    points = engine.random_base2(max(1, math.ceil(math.log2(n_samples))))
    return points[:n_samples]


def _sobol_from_function(
    f: LatentFunction,
    groups: Mapping[str, Sequence[int]],
    n_latent: int,
    n_samples: int,
    rng: np.random.Generator,
    pairs: bool = True,
) -> _Estimates:
    """Pick-freeze estimates of ``Var f`` and of the Sobol' components of each group.

    ``f`` maps an ``(m, n_latent)`` matrix of independent U[0, 1) inputs to ``(m,)`` outputs;
    ``groups`` names the input columns whose indices are wanted (disjoint sets of columns). The
    estimators are those of the module docstring (Saltelli et al. 2010, Table 2; Jansen 1999).
    ``f`` is called once, on all ``A``, ``B`` and ``A_B^(G)`` rows stacked.
    """
    design = _latent_design(n_samples, n_latent, rng)
    A, B = design[:, :n_latent], design[:, n_latent:]
    names = list(groups)
    swaps: list[tuple[int, ...]] = [tuple(groups[name]) for name in names]
    pair_keys = list(itertools.combinations(names, 2)) if pairs else []
    swaps += [tuple(groups[a]) + tuple(groups[b]) for a, b in pair_keys]
    blocks = [A, B]
    for columns in swaps:
        mixed = A.copy()
        mixed[:, list(columns)] = B[:, list(columns)]
        blocks.append(mixed)
    values = np.asarray(f(np.concatenate(blocks)), dtype=float).reshape(len(blocks), n_samples)
    f_a, f_b, f_swapped = values[0], values[1], values[2:]
    variance = 0.5 * float(np.mean((f_a - f_b) ** 2))
    half_sq_to_b = 0.5 * np.mean((f_b[None, :] - f_swapped) ** 2, axis=1)
    half_sq_to_a = 0.5 * np.mean((f_a[None, :] - f_swapped[: len(names)]) ** 2, axis=1)
    return _Estimates(
        variance=variance,
        mean=float(np.mean(values[:2])),
        main={name: variance - float(half_sq_to_b[i]) for i, name in enumerate(names)},
        total={name: float(half_sq_to_a[i]) for i, name in enumerate(names)},
        closed={
            key: variance - float(half_sq_to_b[len(names) + i]) for i, key in enumerate(pair_keys)
        },
    )


def _normalise(
    estimates: _Estimates,
) -> tuple[dict[str, float], dict[str, float], dict[tuple[str, str], float]]:
    """Indices (main, total, pure interaction) from variance components, clipped at 0."""
    v = estimates.variance
    if not v > 1e-12 * estimates.mean**2:  # f is constant: nothing to explain
        zero_pairs = dict.fromkeys(estimates.closed, 0.0)
        return dict.fromkeys(estimates.main, 0.0), dict.fromkeys(estimates.total, 0.0), zero_pairs
    main = {name: max(0.0, value / v) for name, value in estimates.main.items()}
    total = {name: max(0.0, value / v) for name, value in estimates.total.items()}
    pure = {
        (a, b): max(0.0, (closed - estimates.main[a] - estimates.main[b]) / v)
        for (a, b), closed in estimates.closed.items()
    }
    return main, total, pure


# ---------------------------------------------------------------------------------------------
# Latent inputs -> configurations of a conditional space -> GP mean
# ---------------------------------------------------------------------------------------------


def latent_to_configurations(
    space: ConditionalSpace, latent: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Independent latent inputs ``(m, d)`` in [0, 1) -> encoded ``(X, active)`` of ``space``.

    Column ``j`` of ``latent`` is the latent input ``u_j`` of node ``j``, whether or not the node
    ends up active: a numerical node takes ``u_j`` rounded onto its grid as
    :meth:`ParamNode.from_unit` decodes it, a categorical node the choice ``floor(K u_j)``. The
    tree decides activity (:meth:`ConditionalSpace.active_mask`) and inactive entries are zeroed,
    as in :meth:`ConditionalSpace.sample` (Zhang et al. sec. 4.2 analyse the fitted GP; this map
    is what makes its Sobol' indices well defined on a conditional space).
    """
    latent = np.atleast_2d(np.asarray(latent, dtype=float))
    X = np.empty_like(latent)
    for j, node in enumerate(space.nodes):
        X[:, j] = _latent_column(node, latent[:, j])
    active = space.active_mask(X)
    X[~active] = 0.0
    return X, active


def _latent_column(node: ParamNode, u: np.ndarray) -> np.ndarray:
    if isinstance(node.distribution, CategoricalDistribution):
        k = len(node.distribution.choices)
        return np.minimum(np.floor(u * k), k - 1)
    return node.to_unit(node.from_unit(u))


def _posterior_mean(
    model: Surrogate, X: np.ndarray, active: np.ndarray, batch_rows: int = _BATCH_ROWS
) -> np.ndarray:
    """Posterior mean of ``model`` at many rows, in batches, without gradients."""
    out = np.empty(len(X))
    with torch.no_grad():
        for start in range(0, len(X), batch_rows):
            stop = start + batch_rows
            mean, _ = model.posterior(
                torch.as_tensor(X[start:stop], dtype=torch.float64),
                torch.as_tensor(active[start:stop]),
            )
            out[start:stop] = mean.numpy()
    return out
