"""The result of a Sobol' analysis (:class:`SobolResult`) and the effect curves read from it.

One concern: what :func:`condsamplers.importance.sobol_indices` returns, the indices and the
fitted GP over the latent inputs, and the main-effect and interaction curves
(:class:`EffectCurve`, Zhang et al. sec. 4.2, Figure 4) that
:mod:`condsamplers.visualization` draws.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from optuna.distributions import CategoricalDistribution

from condsamplers.importance_sobol import (
    _latent_column,
    _posterior_mean,
    latent_to_configurations,
)
from condsamplers.models.base import Surrogate
from condsamplers.space import ConditionalSpace, ParamNode, _describe_condition, to_external

#: Points of the grid of a continuous parameter in an effect curve.
CURVE_POINTS = 41


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
