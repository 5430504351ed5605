"""Sobol' sensitivity analysis of a GP fitted to a conditional study (Zhang et al., sec. 4.2).

Zhang, Hung, Lin and Liu ("branching and nested" GP, sec. 4.2 and Figure 4) explain which
hyperparameters matter with a Monte-Carlo Sobol' (1993) analysis of the fitted GP: main effects
(first-order indices), two-factor interaction effects, and the curves behind them. This module
does the same for any kernel of :data:`condsamplers.kernels.KERNELS`, on conditional spaces.

**Latent inputs.** Sobol' indices need independent inputs, but in a conditional space a nested
parameter exists only on some branches. We therefore write a configuration as a deterministic
function of independent *latent* inputs ``u_j``, one per column of the encoding
(:mod:`condsamplers.space`), each drawn from the space's sampling distribution whatever the
branch (:meth:`ConditionalSpace.sample`): uniform on [0, 1] for a numerical column (ints and
stepped floats rounded onto their grid as the space decodes them), a uniform choice index for a
categorical one. The tree then decides which columns are active
(:meth:`ConditionalSpace.active_mask`); inactive columns are zeroed as the encoding expects, and
``f(u)`` is the GP posterior mean at that configuration, in the objective's units and sign. A
parameter name is the *group* of its columns (a name with several variants, e.g. one range per
branch, owns one column per variant; Sobol' 1993 defines indices of groups of inputs).

With independent ``u`` the classical decomposition ``Var f = sum_j V_j + sum_{j<k} V_jk + ...``
holds, so:

- the main effect of ``j`` is ``S_j = Var(E[f | u_j]) / Var f``; a nested parameter's effect is
  diluted by how often it is active, and a branching parameter's effect includes switching its
  whole subtree;
- the two-factor interaction is ``S_jk = (Var(E[f | u_j, u_k]) - V_j - V_k) / Var f``;
- the total effect is ``T_j = E[Var(f | u_{-j})] / Var f`` (everything ``j`` takes part in).

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

**Limitation.** A parameter whose activity the tree does not explain (``ParamNode.unexplained``)
has no condition, so the latent model takes it as always active.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import torch
from optuna.distributions import CategoricalDistribution
from optuna.importance import BaseImportanceEvaluator
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, TrialState
from scipy.stats import qmc

from condsamplers import kernels
from condsamplers.models.base import Surrogate
from condsamplers.models.gp import ExactGP
from condsamplers.samplers.base import _finite_minimisation_values
from condsamplers.space import (
    ConditionalSpace,
    ParamNode,
    _describe_condition,
    infer_space,
    to_external,
)
from condsamplers.validation import check_int

__all__ = [
    "EffectCurve",
    "SobolImportanceEvaluator",
    "SobolResult",
    "latent_to_configurations",
    "sobol_indices",
]

#: Rows of the latent sample averaged over by the effect curves of the plots.
CURVE_SAMPLES = 1024
#: Points of the grid of a continuous parameter in an effect curve.
CURVE_POINTS = 41
#: Rows per batch of posterior means (bounds the memory of one kernel matrix).
_BATCH_ROWS = 16384

Target = Callable[[FrozenTrial], float]
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


# ---------------------------------------------------------------------------------------------
# Result and effect curves
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class EffectCurve:
    """A conditional expectation of the objective along a grid of one parameter's values.

    ``mean[i] = E[f | u_j = t_i, j active]`` (Zhang et al. sec. 4.2, Figure 4), averaged over the
    latent sample rows where the node (and, for an interaction curve, the other node) is active.

    Attributes:
        param: parameter name on the horizontal axis.
        label: legend text (the variant's condition, or the other parameter's value).
        positions: horizontal coordinates: the parameter's values, or choice indices for a
            categorical parameter.
        values: the external values at ``positions`` (the choices of a categorical).
        mean: the conditional expectation of the objective, in its units and sign; NaN at a
            value under which the other parameter of an interaction curve is never active.
        categorical: the parameter is categorical (draw points, label ticks with ``values``).
        discrete: the parameter takes values on a grid (an int or a stepped float).
        log: the parameter's distribution is log-scaled (draw on a log axis).
        n_rows: latent sample rows averaged over (where the parameter is active).
    """

    param: str
    label: str
    positions: np.ndarray
    values: list[Any]
    mean: np.ndarray
    categorical: bool
    discrete: bool
    log: bool
    n_rows: int


@dataclasses.dataclass(frozen=True)
class SobolResult:
    """Sobol' indices of the GP posterior mean of a study (Zhang et al. sec. 4.2).

    Attributes:
        names: assessed parameter names, in suggestion order.
        main_effects: first-order index ``S_j`` of each name (Jansen estimator, Saltelli et al.
            2010), clipped at 0.
        total_effects: total index ``T_j`` of each name (Jansen 1999).
        interactions: pure two-factor interaction index ``S_jk`` of each pair, keyed by the pair
            in the order of ``names`` (use :meth:`interaction` for either order).
        variance: ``Var f`` of the posterior mean under the latent distribution, in squared
            objective units.
        mean: ``E f``.
        space: the conditional space inferred from the trials.
        model: the fitted GP (it models the minimisation target; see ``sign``).
        sign: ``+1`` or ``-1``; the objective is ``sign`` times the model's posterior mean.
        latent: latent rows (independent U[0, 1) inputs, one column per node) that effect
            curves average over.
        n_trials: trials the GP was fitted to.
    """

    names: tuple[str, ...]
    main_effects: dict[str, float]
    total_effects: dict[str, float]
    interactions: dict[tuple[str, str], float]
    variance: float
    mean: float
    space: ConditionalSpace
    model: Surrogate
    sign: float
    latent: np.ndarray
    n_trials: int

    def interaction(self, param_a: str, param_b: str) -> float:
        """Pure two-factor interaction index of two assessed parameters, in either order."""
        for key in ((param_a, param_b), (param_b, param_a)):
            if key in self.interactions:
                return self.interactions[key]
        raise KeyError(f"No interaction of {param_a!r} and {param_b!r}; assessed: {self.names}.")

    def strongest_interactions(self, k: int = 5) -> list[tuple[tuple[str, str], float]]:
        """The ``k`` largest two-factor interaction indices, largest first."""
        return sorted(self.interactions.items(), key=lambda item: -item[1])[:k]

    def response(self, latent: np.ndarray) -> np.ndarray:
        """``f(u)``: the GP posterior mean in objective units at latent inputs ``(m, d)``."""
        X, active = latent_to_configurations(self.space, latent)
        return self.sign * _posterior_mean(self.model, X, active)

    def nodes_of(self, param: str) -> list[ParamNode]:
        """The nodes (variants) of a parameter name; ``ValueError`` for an unknown name."""
        nodes = [n for n in self.space.nodes if n.name == param]
        if not nodes:
            raise ValueError(_unknown_message(param, self.space))
        return nodes

    def main_effect_curves(self, param: str) -> list[EffectCurve]:
        """``E[f | u_j = t, j active]`` over a grid of ``t``: one curve per variant of ``param``.

        Zhang et al. (sec. 4.2, Figure 4, left) plot these main-effect curves. A nested
        parameter is conditioned on being active: the average runs over the latent rows where
        its parents select its branch.
        """
        curves = []
        for node in self.nodes_of(param):
            j = self.space.index[node.key]
            grid = _unit_grid(node)
            mean, rows = self._conditional_means(grid, j)
            if rows > 0:
                label = _variant_label(self.space, node, len(self.nodes_of(param)))
                curves.append(_curve(node, grid, mean, label, rows))
        return curves

    def interaction_curves(
        self, param_a: str, param_b: str, n_curves: int = 4
    ) -> list[EffectCurve]:
        """``E[f | u_a = t, u_b = s]`` over a grid of ``t``, one curve per value ``s`` of ``b``.

        Zhang et al. (sec. 4.2, Figure 4, middle and right) plot these two-factor interaction
        curves. ``s`` runs over ``n_curves`` evenly spread values of ``param_b`` (all of its
        values if it has fewer); averages run over the latent rows where both parameters are
        active. A value ``s`` under which ``param_a`` is never active gives no curve; when
        ``param_a`` decides whether ``param_b`` is active (a parent), the curve is NaN at the
        values of ``param_a`` that deactivate ``param_b``.
        """
        if param_a == param_b:
            raise ValueError("param_a and param_b must be two different parameters.")
        if n_curves < 1:
            raise ValueError(f"n_curves must be >= 1; got {n_curves!r}.")
        curves = []
        nodes_a, nodes_b = self.nodes_of(param_a), self.nodes_of(param_b)
        for node_b in nodes_b:
            k = self.space.index[node_b.key]
            for s in _levels(node_b, n_curves):
                for node_a in nodes_a:
                    j = self.space.index[node_a.key]
                    grid = _unit_grid(node_a)
                    mean, rows = self._conditional_means(grid, j, (k, s))
                    if rows == 0:
                        continue
                    label = f"{param_b} = {_format_value(node_b, s)}"
                    if len(nodes_b) > 1:
                        label += _condition_suffix(self.space, node_b)
                    if len(nodes_a) > 1:
                        label += f"; {_variant_label(self.space, node_a, len(nodes_a))}"
                    curves.append(_curve(node_a, grid, mean, label, rows))
        return curves

    def _conditional_means(
        self, grid: np.ndarray, column: int, fixed: tuple[int, float] | None = None
    ) -> tuple[np.ndarray, int]:
        """``E[f | u_column = t, active]`` for each ``t`` in ``grid``, with ``u_k = s`` also set
        for ``fixed = (k, s)``: means over the latent rows where ``column`` (and ``k``) are
        active at that ``t``; NaN where no row is. Returns ``(means, rows used at some t)``."""
        latent = np.repeat(self.latent[None, :, :], len(grid), axis=0)
        needed = [column]
        if fixed is not None:
            latent[:, :, fixed[0]] = fixed[1]
            needed.append(fixed[0])
        latent[:, :, column] = grid[:, None]
        X, active = latent_to_configurations(self.space, latent.reshape(-1, latent.shape[-1]))
        keep = active[:, needed].all(axis=1)
        values = np.zeros(len(keep))
        if keep.any():
            values[keep] = self.sign * _posterior_mean(self.model, X[keep], active[keep])
        keep_grid = keep.reshape(len(grid), -1)
        counts = keep_grid.sum(axis=1)
        sums = values.reshape(len(grid), -1).sum(axis=1)
        means = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
        return means, int(keep_grid.any(axis=0).sum())


def _unknown_message(param: str, space: ConditionalSpace) -> str:
    known = sorted({n.name for n in space.nodes})
    return (
        f"Parameter {param!r} does not appear in the study's COMPLETE trials (known: {known}). "
        "Pass names from that list, or params=None to assess them all."
    )


def _unit_grid(node: ParamNode, n_points: int = CURVE_POINTS) -> np.ndarray:
    """Latent values ``t`` for a curve: one per choice or grid value, else ``n_points`` evenly."""
    d = node.distribution
    if isinstance(d, CategoricalDistribution):
        k = len(d.choices)
        return (np.arange(k) + 0.5) / k
    if node.is_discrete:
        n_values = int(round((d.high - d.low) / d.step)) + 1  # type: ignore[attr-defined]
        if n_values <= max(n_points, CURVE_POINTS):
            values = d.low + d.step * np.arange(n_values)  # type: ignore[attr-defined]
            return node.to_unit(values)
        unit = np.linspace(0.0, 1.0, n_points)
        return np.unique(node.to_unit(node.from_unit(unit)))
    return np.linspace(0.0, 1.0, n_points)


def _levels(node: ParamNode, n: int) -> np.ndarray:
    """``n`` latent values of a curve parameter: the midpoints of ``n`` equal slices of [0, 1],
    or ``n`` evenly spread grid values of a discrete or categorical node (all if it has fewer)."""
    if not (node.is_categorical or node.is_discrete):
        return (np.arange(n) + 0.5) / n
    grid = _unit_grid(node)
    if len(grid) <= n:
        return grid
    return grid[np.round(np.linspace(0, len(grid) - 1, n)).astype(int)]


def _internal(node: ParamNode, unit: np.ndarray) -> np.ndarray:
    if isinstance(node.distribution, CategoricalDistribution):
        return _latent_column(node, unit)
    return node.from_unit(unit)


def _format_value(node: ParamNode, unit: float) -> str:
    value = to_external(node.distribution, float(_internal(node, np.array([unit]))[0]))
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _condition_suffix(space: ConditionalSpace, node: ParamNode) -> str:
    if node.condition is None:
        return ""
    return f" [if {_describe_condition(space, node.condition)}]"


def _variant_label(space: ConditionalSpace, node: ParamNode, n_variants: int) -> str:
    return node.name + (_condition_suffix(space, node) if n_variants > 1 else "")


def _curve(
    node: ParamNode, grid: np.ndarray, mean: np.ndarray, label: str, rows: int
) -> EffectCurve:
    internal = _internal(node, grid)
    return EffectCurve(
        param=node.name,
        label=label,
        positions=internal,
        values=[to_external(node.distribution, float(v)) for v in internal],
        mean=mean,
        categorical=node.is_categorical,
        discrete=node.is_discrete,
        log=bool(getattr(node.distribution, "log", False)),
        n_rows=rows,
    )


# ---------------------------------------------------------------------------------------------
# From a study
# ---------------------------------------------------------------------------------------------


def sobol_indices(
    study: Study,
    *,
    kernel: str = "bn",
    n_samples: int = 4096,
    seed: int | None = None,
    params: Sequence[str] | None = None,
    target: Target | None = None,
    n_restarts: int = 2,
) -> SobolResult:
    """Sobol' main, total and two-factor interaction indices of a study's fitted GP.

    The sensitivity analysis of Zhang et al. (sec. 4.2, Figure 4), on the posterior mean of an
    :class:`~condsamplers.models.gp.ExactGP` with kernel ``kernel`` fitted to the study's
    COMPLETE trials, over the latent inputs of the module docstring (nested parameters included),
    with the pick-freeze estimators of Saltelli et al. (2010, Table 2).

    Args:
        study: a single-objective study, or any study with ``target``.
        kernel: a name in :data:`condsamplers.kernels.KERNELS`.
        n_samples: rows ``N`` of each latent matrix; ``(2 + p + p(p-1)/2) N`` posterior means
            are computed for ``p`` assessed parameters.
        seed: seeds the latent design and the GP restarts (same seed, same result).
        params: names to assess (default: every parameter of the COMPLETE trials, nested ones
            included). The others still vary, so ``Var f`` is the same whatever ``params``.
        target: ``FrozenTrial -> float`` to analyse instead of the objective value (required
            for a multi-objective study). NaN values are skipped.
        n_restarts: random restarts of the GP hyperparameter fit.

    Raises:
        ValueError: no usable COMPLETE trials, fewer than 2, an unknown name in ``params``, a
            multi-objective study without ``target``, an unknown ``kernel``.
    """
    _check_kernel(kernel)
    check_int("n_samples", n_samples, minimum=2)
    check_int("n_restarts", n_restarts, minimum=0)
    if params is not None and (isinstance(params, str) or not isinstance(params, Sequence)):
        raise TypeError(f"params must be a list of parameter names; got {params!r}.")
    trials, y, sign = _training_data(study, target)
    space = infer_space(trials)
    X, active, kept = space.encode_trials(trials)
    y = y[kept]
    if len(y) < 2:
        raise ValueError(
            f"Sobol' indices need at least 2 COMPLETE trials with a value that fits the search "
            f"space; the study has {len(y)}. Run more trials first."
        )
    names = _assessed_names(space, params)
    model = ExactGP(kernel=kernel, n_restarts=n_restarts, seed=seed)
    model.fit(X, active, y, space.features)
    groups = {name: [space.index[n.key] for n in space.nodes if n.name == name] for name in names}

    def response(latent: np.ndarray) -> np.ndarray:
        Xl, al = latent_to_configurations(space, latent)
        return sign * _posterior_mean(model, Xl, al)

    rng = np.random.default_rng(seed)
    estimates = _sobol_from_function(response, groups, space.n_features, n_samples, rng)
    main, total, pure = _normalise(estimates)
    curve_rows = _latent_design(min(n_samples, CURVE_SAMPLES), space.n_features, rng)
    return SobolResult(
        names=tuple(names),
        main_effects=main,
        total_effects=total,
        interactions=pure,
        variance=estimates.variance,
        mean=estimates.mean,
        space=space,
        model=model,
        sign=sign,
        latent=curve_rows[:, : space.n_features],
        n_trials=len(y),
    )


def _check_kernel(kernel: str) -> None:
    if not isinstance(kernel, str) or kernel not in kernels.KERNELS:
        raise ValueError(f"kernel={kernel!r} is not known; use one of {sorted(kernels.KERNELS)}.")


def _training_data(
    study: Study, target: Target | None
) -> tuple[list[FrozenTrial], np.ndarray, float]:
    """COMPLETE trials with a non-NaN value, their minimisation targets, and the sign that turns
    the model's mean back into the objective (``-1`` for a maximised objective)."""
    if target is None and len(study.directions) > 1:
        raise ValueError(
            f"This study has {len(study.directions)} objectives; pass target, for example "
            "target=lambda t: t.values[0], to analyse the first one."
        )
    complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    if not complete:
        raise ValueError(
            "The study has no COMPLETE trials; run study.optimize before assessing importances."
        )
    raw = np.array([target(t) if target is not None else t.value for t in complete], dtype=float)
    keep = ~np.isnan(raw)
    trials = [t for t, k in zip(complete, keep, strict=True) if k]
    direction = study.direction if target is None else StudyDirection.MINIMIZE
    y = _finite_minimisation_values(raw[keep], direction) if keep.any() else None
    if y is None:
        raise ValueError(
            "No COMPLETE trial has a finite objective (or target) value; Sobol' indices need "
            "at least 2."
        )
    return trials, y, -1.0 if direction == StudyDirection.MAXIMIZE else 1.0


def _assessed_names(space: ConditionalSpace, params: Sequence[str] | None) -> list[str]:
    known = list(dict.fromkeys(n.name for n in space.nodes))
    if params is None:
        return known
    for name in params:
        if name not in known:
            raise ValueError(_unknown_message(name, space))
    return [name for name in known if name in set(params)]


# ---------------------------------------------------------------------------------------------
# Optuna evaluator
# ---------------------------------------------------------------------------------------------


class SobolImportanceEvaluator(BaseImportanceEvaluator):
    """Optuna importance evaluator: first-order Sobol' indices of a conditional GP.

    The main effects ``S_j = Var(E[f | u_j]) / Var f`` of the GP posterior mean, as in the
    sensitivity analysis of Zhang et al. (sec. 4.2), estimated by pick-freeze Monte Carlo
    (Jansen estimator, Saltelli et al. 2010, Table 2) over the latent inputs described in
    :mod:`condsamplers.importance`. Unlike Optuna's fANOVA and mean-decrease-impurity evaluators,
    which only see the intersection search space, it assesses NESTED parameters too: their
    effect is diluted by how often they are active. Use it as::

        optuna.importance.get_param_importances(study, evaluator=SobolImportanceEvaluator())

    ``get_param_importances`` divides by the sum (``normalize=True``); the raw indices of
    :meth:`evaluate` are fractions of ``Var f``, and their sum is below 1 by the interactions.
    For interactions and curves use :func:`sobol_indices` and :mod:`condsamplers.visualization`.

    Args:
        kernel: GP kernel, a name in :data:`condsamplers.kernels.KERNELS`.
        n_samples: rows of each Monte-Carlo latent matrix.
        seed: seed of the latent design and the GP fit (deterministic results).
        n_restarts: random restarts of the GP hyperparameter fit.
    """

    def __init__(
        self,
        *,
        kernel: str = "bn",
        n_samples: int = 4096,
        seed: int | None = None,
        n_restarts: int = 2,
    ) -> None:
        _check_kernel(kernel)
        check_int("n_samples", n_samples, minimum=2)
        check_int("n_restarts", n_restarts, minimum=0)
        self._kernel = kernel
        self._n_samples = n_samples
        self._seed = seed
        self._n_restarts = n_restarts

    def evaluate(
        self,
        study: Study,
        params: list[str] | None = None,
        *,
        target: Target | None = None,
    ) -> dict[str, float]:
        """First-order Sobol' indices of ``params`` (default: all, nested ones included),
        largest first, as Optuna's ``BaseImportanceEvaluator.evaluate``."""
        if params is not None and len(params) == 0:
            return {}
        result = sobol_indices(
            study,
            kernel=self._kernel,
            n_samples=self._n_samples,
            seed=self._seed,
            params=params,
            target=target,
            n_restarts=self._n_restarts,
        )
        ranked = sorted(result.main_effects.items(), key=lambda item: -item[1])
        return dict(ranked)
