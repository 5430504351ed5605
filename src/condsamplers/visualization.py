"""Plots of a Sobol' sensitivity analysis: main-effect and interaction curves.

These are the plots of Zhang et al. ("branching and nested" GP, sec. 4.2, Figure 4): the
main-effect curve ``E[f | u_j = t]`` of each parameter over its own values (left panel), and
two-factor interaction curves ``E[f | u_a = t, u_b = s]`` against ``t`` for a few values ``s``
(middle and right panels), computed from the GP posterior mean by
:class:`condsamplers.importance.SobolResult`. A nested parameter is drawn over its active values:
its curves average over the latent inputs where it is active.

matplotlib is an optional dependency: ``pip install condsamplers[plot]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from optuna.study import Study

from condsamplers.importance import CURVE_POINTS, EffectCurve, SobolResult, sobol_indices

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_interaction", "plot_main_effects"]


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError(
            "condsamplers.visualization needs matplotlib: pip install condsamplers[plot]"
        ) from error
    return plt


def plot_main_effects(
    result_or_study: SobolResult | Study,
    params: Sequence[str] | None = None,
    ax: Axes | Sequence[Axes] | None = None,
) -> np.ndarray:
    """Main-effect curves ``E[f | u_j = t]``, one panel per parameter (Zhang et al. Figure 4).

    Each panel shows the objective's conditional expectation (GP posterior mean, objective units
    and sign) over the parameter's own values: a log axis for a log-scaled distribution, points
    for the choices of a categorical parameter, one curve per variant of a parameter suggested
    with branch-dependent ranges. The title gives the main-effect index ``S``.

    Args:
        result_or_study: a :class:`~condsamplers.importance.SobolResult`, or a study to analyse
            with :func:`~condsamplers.importance.sobol_indices` (default options).
        params: the parameters to draw (default: all assessed ones, by decreasing ``S``).
        ax: an Axes (one parameter) or one Axes per parameter; default: a new figure.

    Returns:
        The Axes, one per parameter, as a 1-D ``numpy.ndarray`` (as Optuna's multi-panel
        matplotlib plots return them).
    """
    plt = _pyplot()
    result = _as_result(result_or_study, params)
    names = list(params) if params is not None else _by_importance(result)
    for name in names:
        result.nodes_of(name)  # ValueError for an unknown name
    axes = _axes(plt, ax, len(names))
    for axis, name in zip(axes, names, strict=True):
        curves = result.main_effect_curves(name)
        _draw_curves(axis, curves)
        index = result.main_effects.get(name)
        title = name if index is None else f"{name} (S = {index:.3f})"
        axis.set_title(title)
        axis.set_xlabel(name)
        axis.set_ylabel("objective (GP mean)")
        if len(curves) > 1:
            axis.legend(fontsize="small")
    if ax is None and axes:
        axes[0].figure.tight_layout()
    panels = np.empty(len(axes), dtype=object)
    panels[:] = axes
    return panels


def plot_interaction(
    result_or_study: SobolResult | Study,
    param_a: str,
    param_b: str,
    n_curves: int = 4,
    ax: Axes | None = None,
) -> Axes:
    """Two-factor interaction curves ``E[f | u_a = t, u_b = s]`` against ``t`` (Figure 4).

    One curve per value ``s`` of ``param_b`` (``n_curves`` evenly spread values, or all values
    of a discrete/categorical ``param_b`` with fewer); non-parallel curves show an interaction
    (Zhang et al. sec. 4.2). Values of ``param_b`` under which ``param_a`` is inactive give no
    curve. The title gives the pure interaction index ``S_ab`` when it was computed.

    Args:
        result_or_study: a :class:`~condsamplers.importance.SobolResult` or a study.
        param_a: parameter on the horizontal axis.
        param_b: parameter whose values label the curves.
        n_curves: number of values of ``param_b``.
        ax: Axes to draw on; default: a new figure.
    """
    plt = _pyplot()
    result = _as_result(result_or_study, [param_a, param_b])
    curves = result.interaction_curves(param_a, param_b, n_curves=n_curves)
    if ax is None:
        _, ax = plt.subplots(figsize=(5.0, 3.6))
    _draw_curves(ax, curves)
    title = f"{param_a} x {param_b}"
    if param_a in result.names and param_b in result.names:
        title += f" (S = {result.interaction(param_a, param_b):.3f})"
    ax.set_title(title)
    ax.set_xlabel(param_a)
    ax.set_ylabel("objective (GP mean)")
    if curves:
        ax.legend(fontsize="small")
    return ax


def _as_result(result_or_study: SobolResult | Study, params: Sequence[str] | None) -> SobolResult:
    if isinstance(result_or_study, SobolResult):
        return result_or_study
    if isinstance(result_or_study, Study):
        return sobol_indices(result_or_study, params=params)
    raise TypeError(
        f"Expected a SobolResult or an optuna Study; got {type(result_or_study).__name__}."
    )


def _by_importance(result: SobolResult) -> list[str]:
    return sorted(result.names, key=lambda name: -result.main_effects[name])


def _axes(plt: Any, ax: Axes | Sequence[Axes] | None, n: int) -> list[Axes]:
    if ax is None:
        n_cols = min(n, 3)
        n_rows = max(1, -(-n // n_cols)) if n else 1
        fig, grid = plt.subplots(
            n_rows, max(n_cols, 1), figsize=(4.2 * max(n_cols, 1), 3.3 * n_rows), squeeze=False
        )
        flat = list(grid.ravel())
        for extra in flat[n:]:
            extra.set_visible(False)
        return flat[:n]
    axes = [ax] if not isinstance(ax, Sequence | np.ndarray) else list(np.ravel(ax))
    if len(axes) != n:
        raise ValueError(f"Got {len(axes)} Axes for {n} parameter(s); pass one per parameter.")
    return axes


def _draw_curves(ax: Axes, curves: list[EffectCurve]) -> None:
    """One line per curve: a line over numerical values, with markers on the values of a
    discrete parameter, and markers joined by a dashed line over categorical choices."""
    for curve in curves:
        style: dict[str, Any] = {}
        if curve.categorical:
            style = {"marker": "o", "linestyle": "--"}
        elif curve.discrete and len(curve.positions) <= 2 * CURVE_POINTS // 3:
            style = {"marker": "o", "markersize": 4}
        ax.plot(curve.positions, curve.mean, label=curve.label, **style)
    if not curves:
        return
    first = curves[0]
    if first.categorical:
        ax.set_xticks(first.positions, [str(v) for v in first.values])
    elif first.log:
        ax.set_xscale("log")
