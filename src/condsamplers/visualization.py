"""Plots of a conditional study: its inferred tree, and the curves of a Sobol' analysis.

:func:`plot_conditional_space` draws the tree of a :class:`~condsamplers.ConditionalSpace`
(inferred from a study, or given): parameters as boxes, conditions on the edges, and a table of
the paths with their trial counts and best values.

:func:`plot_main_effects` and :func:`plot_interaction` draw the plots of Zhang et al.
("branching and nested" GP, sec. 4.2, Figure 4): the main-effect curve ``E[f | u_j = t]`` of
each parameter over its own values (left panel), and two-factor interaction curves
``E[f | u_a = t, u_b = s]`` against ``t`` for a few values ``s`` (middle and right panels),
computed from the GP posterior mean by :class:`condsamplers.importance.SobolResult`. A nested
parameter is drawn over its active values: its curves average over the latent inputs where it is
active.

matplotlib is an optional dependency: ``pip install condsamplers[plot]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, TrialState

from condsamplers.importance import CURVE_POINTS, EffectCurve, SobolResult, sobol_indices
from condsamplers.path_patience import on_path
from condsamplers.space import (
    Condition,
    ConditionalSpace,
    ParamNode,
    Path,
    infer_space,
    to_external,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_conditional_space", "plot_interaction", "plot_main_effects"]


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


# ---------------------------------------------------------------------------------------------
# The conditional tree
# ---------------------------------------------------------------------------------------------

#: Inches per leaf (horizontal slot) and per level of the tree, and per row of the path table.
_SLOT_INCHES, _LEVEL_INCHES, _ROW_INCHES = 1.9, 1.15, 0.24
_BRANCH_COLOUR, _NODE_COLOUR, _EDGE_COLOUR = "#dbe9f6", "#f2f2f2", "#1f4e79"


def plot_conditional_space(
    study_or_space: Study | ConditionalSpace,
    ax: Axes | None = None,
    *,
    fontsize: float = 8.0,
) -> Axes:
    """Draw the tree of a conditional search space, and its paths with their trials.

    Each parameter is a box with its name and a short label of its distribution (for example
    ``float [0.01, 1e3] log`` or ``categorical (3)``); a branching parameter (one others depend
    on) is shaded blue, and a parameter whose condition could not be inferred has a dashed box.
    Root parameters are at the top; an edge goes from a parameter to each parameter it
    conditions, labelled with the condition (``= svc``, ``in {a, b}``, or ``>= 2`` for an
    integer threshold, as :meth:`~condsamplers.ConditionalSpace.describe` prints them). A table
    under the tree lists each path (one set of branch choices) with, for a study, the number of
    its COMPLETE trials and, for a single-objective study, the best value among them (the
    minimum or maximum as the study's direction says).

    Args:
        study_or_space: an Optuna study, whose space is inferred from its trials with
            :func:`~condsamplers.infer_space`, or a
            :class:`~condsamplers.ConditionalSpace` (then the table lists the paths only).
        ax: the Axes to draw on; default: a new figure sized to the tree.
        fontsize: font size of the boxes and the table (edge labels are one point smaller).

    Returns:
        The Axes holding the drawing (axis lines hidden).

    Raises:
        TypeError: ``study_or_space`` is neither a study nor a space, or ``ax`` is not an Axes.
        ValueError: the study has no COMPLETE trial, or the space has no parameter.

    Example:
        ```python
        from condsamplers.visualization import plot_conditional_space

        ax = plot_conditional_space(study)
        ax.figure.savefig("conditional_space.png", dpi=100)
        ```
    """
    plt = _pyplot()
    space, study = _space_of(study_or_space)
    layout = _tree_layout(space)
    paths = space.paths()
    header, rows = _path_table(space, paths, study) if paths is not None else ([], [])
    n_leaves = 1 + int(max(x for x, _ in layout.values()))
    n_levels = 1 + max(depth for _, depth in layout.values())
    tree_inches = _LEVEL_INCHES * n_levels
    table_inches = _ROW_INCHES * (len(rows) + 1) if rows else 0.0
    if ax is None:
        width = max(6.0, _SLOT_INCHES * n_leaves)
        _, ax = plt.subplots(figsize=(width, tree_inches + table_inches + 0.5))
    elif not _is_axes(ax):
        raise TypeError(f"ax must be a matplotlib Axes or None; got {type(ax).__name__}.")
    _draw_tree(ax, space, layout, fontsize)
    table_share = table_inches / (tree_inches + table_inches)
    _set_limits(ax, n_leaves, n_levels, table_share)
    if rows:
        _draw_table(ax, header, rows, table_share, fontsize)
    ax.set_title(_title(space, paths, study), fontsize=fontsize + 2)
    ax.set_axis_off()
    return ax


def _space_of(study_or_space: Any) -> tuple[ConditionalSpace, Study | None]:
    """The space to draw, and the study whose trials the path table counts (if any)."""
    if isinstance(study_or_space, ConditionalSpace):
        space, study = study_or_space, None
    elif isinstance(study_or_space, Study):
        study = study_or_space
        if not _complete_trials(study):
            raise ValueError(
                f"study_or_space: study {study.study_name!r} has no COMPLETE trial, so there is "
                "no tree to infer; run study.optimize first, or pass a ConditionalSpace."
            )
        space = infer_space(study.get_trials(deepcopy=False))
    else:
        raise TypeError(
            "study_or_space must be an optuna.study.Study or a condsamplers.ConditionalSpace; "
            f"got {type(study_or_space).__name__}. For a list of trials, pass "
            "condsamplers.infer_space(trials)."
        )
    if not space.nodes:
        raise ValueError(
            "study_or_space: the space has no parameter to draw; the objective must suggest "
            "parameters with trial.suggest_*."
        )
    return space, study


def _complete_trials(study: Study) -> list[FrozenTrial]:
    return study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))


def _is_axes(ax: Any) -> bool:
    from matplotlib.axes import Axes as AxesClass

    return isinstance(ax, AxesClass)


def _tree_layout(space: ConditionalSpace) -> dict[str, tuple[float, int]]:
    """``(x, depth)`` of each node: leaves on consecutive slots ``0, 1, ...`` in display
    order, a parent centred over its first and last child, roots (depth 0) side by side."""
    layout: dict[str, tuple[float, int]] = {}
    next_slot = [0]

    def place(node: ParamNode, depth: int) -> float:
        kids = space.children(node.key)
        if kids:
            xs = [place(kid, depth + 1) for kid in kids]
            x = 0.5 * (xs[0] + xs[-1])
        else:
            x, next_slot[0] = float(next_slot[0]), next_slot[0] + 1
        layout[node.key] = (x, depth)
        return x

    for root in space.children(None):
        place(root, 0)
    return layout


def _number(value: float) -> str:
    """A short number: 3 significant digits, exponents without padding (``1e-5``, ``1e3``)."""
    text = f"{value:.3g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}e{int(exponent)}"
    return text


def _distribution_label(distribution: BaseDistribution) -> str:
    """``categorical (3)``, ``int [2, 24] log``, ``float [0, 1] step 0.1``, ..."""
    if isinstance(distribution, CategoricalDistribution):
        return f"categorical ({len(distribution.choices)})"
    if not isinstance(distribution, FloatDistribution | IntDistribution):
        return type(distribution).__name__
    kind = "int" if isinstance(distribution, IntDistribution) else "float"
    text = f"{kind} [{_number(distribution.low)}, {_number(distribution.high)}]"
    if distribution.log:
        text += " log"
    if distribution.step is not None and distribution.step != 1:
        text += f" step {_number(distribution.step)}"
    return text


def _choice_text(node: ParamNode, internal_values: Sequence[float]) -> str:
    """``= svc`` for one value of ``node``, ``in {a, b}`` for several (at most 4 shown)."""
    shown = [str(to_external(node.distribution, v)) for v in sorted(internal_values)]
    if len(shown) == 1:
        return f"= {shown[0]}"
    if len(shown) > 4:
        shown = [*shown[:3], f"... ({len(shown)})"]
    return "in {" + ", ".join(shown) + "}"


def _edge_label(space: ConditionalSpace, condition: Condition) -> str:
    """The condition on the parent's value: ``= svc``, ``in {a, b}``, ``>= 2``, ``<= 1``."""
    if condition.lower is not None:
        return f">= {condition.lower:g}"
    if condition.upper is not None:
        return f"<= {condition.upper:g}"
    return _choice_text(space.nodes[space.index[condition.parent]], list(condition.values))


def _path_label(space: ConditionalSpace, path: Path) -> str:
    """A path as its branch choices, ancestors first: ``classifier = svc, kernel = rbf``."""
    if not path.branch_values:
        return "all parameters"
    choices = sorted(path.branch_values, key=lambda item: space.index[item[0]])
    return ", ".join(
        f"{space.nodes[space.index[key]].name} "
        f"{_choice_text(space.nodes[space.index[key]], values)}"
        for key, values in choices
    )


def _path_of_trials(
    space: ConditionalSpace, paths: Sequence[Path], trials: Sequence[FrozenTrial]
) -> np.ndarray:
    """For each trial, the index of the path it lies on (:func:`~condsamplers.path_patience.
    on_path`); ``-1`` for a trial on none (one the space cannot encode or left out as it lies
    outside a changed range)."""
    X, active, kept = space.encode_trials(trials)
    rows = np.array([on_path(space, path, X, active) for path in paths]).reshape(len(paths), -1)
    which = np.full(len(trials), -1, dtype=int)
    found = rows.any(axis=0)
    which[kept[found]] = rows.argmax(axis=0)[found]
    return which


def _path_table(
    space: ConditionalSpace, paths: Sequence[Path], study: Study | None
) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the path table: each path's label, and for a study its number of
    COMPLETE trials and (single objective) their best value; a last row counts the trials on
    no path, if any."""
    labels = [_path_label(space, path) for path in paths]
    if study is None:
        return ["path (branch choices)"], [[label] for label in labels]
    trials = _complete_trials(study)
    which = _path_of_trials(space, paths, trials)
    single = len(study.directions) == 1
    header = ["path (branch choices)", "trials"]
    if single:
        maximise = study.direction == StudyDirection.MAXIMIZE
        header.append("best (max)" if maximise else "best (min)")
    rows = []
    for i, label in [*enumerate(labels), (-1, "on no listed path")]:
        mine = [t for t, w in zip(trials, which, strict=True) if w == i]
        if i == -1 and not mine:
            continue
        row = [label, str(len(mine))]
        if single:
            values = [cast(float, t.value) for t in mine]
            best = (max if maximise else min)(values) if values else None
            row.append("-" if best is None else f"{best:.4g}")
        rows.append(row)
    return header, rows


def _draw_tree(
    ax: Axes, space: ConditionalSpace, layout: dict[str, tuple[float, int]], fontsize: float
) -> None:
    """Edges with their conditions first (under the boxes), then one box per node."""
    for node in space.nodes:
        x, depth = layout[node.key]
        if node.condition is not None:
            px, parent_depth = layout[node.condition.parent]
            ax.plot([px, x], [-parent_depth, -depth], color="0.6", lw=1.0, zorder=1)
            ax.text(
                px + 0.68 * (x - px),
                -(parent_depth + 0.68 * (depth - parent_depth)),
                _edge_label(space, node.condition),
                ha="center",
                va="center",
                fontsize=fontsize - 1,
                color=_EDGE_COLOUR,
                style="italic",
                zorder=2,
                bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none"},
            )
        branching = bool(space.children(node.key))
        ax.text(
            x,
            -depth,
            f"{node.name}\n{_distribution_label(node.distribution)}",
            ha="center",
            va="center",
            fontsize=fontsize,
            zorder=3,
            bbox={
                "boxstyle": "round,pad=0.4",
                "fc": _BRANCH_COLOUR if branching else _NODE_COLOUR,
                "ec": "0.35",
                "ls": "--" if node.unexplained else "-",
            },
        )


def _set_limits(ax: Axes, n_leaves: int, n_levels: int, table_share: float) -> None:
    """Data limits that leave the lower ``table_share`` of the Axes to the path table."""
    top, bottom = 0.5, -(n_levels - 1) - 0.5
    if table_share > 0:
        bottom -= (top - bottom) * table_share / (1.0 - table_share)
    ax.set_xlim(-0.6, n_leaves - 0.4)
    ax.set_ylim(bottom, top)


def _draw_table(
    ax: Axes, header: list[str], rows: list[list[str]], share: float, fontsize: float
) -> None:
    """The path table across the lower ``share`` of the Axes, with a bold header row."""
    widths = {1: [1.0], 2: [0.82, 0.18], 3: [0.7, 0.12, 0.18]}[len(header)]
    table = ax.table(
        cellText=rows,
        colLabels=header,
        colWidths=widths,
        cellLoc="left",
        colLoc="left",
        bbox=[0.0, 0.0, 1.0, share],
    )
    table.auto_set_font_size(False)
    table.set_fontsize(fontsize)
    for (row, column), cell in table.get_celld().items():
        cell.PAD = 0.01 / widths[column]  # the same margin in every column
        cell.set_edgecolor("0.8")
        if row == 0:
            cell.set_text_props(weight="bold")
            cell.set_facecolor("#eeeeee")


def _title(space: ConditionalSpace, paths: Sequence[Path] | None, study: Study | None) -> str:
    n_paths = "more than 256 paths (not listed)" if paths is None else f"{len(paths)} paths"
    text = f"{len(space.nodes)} parameters, {n_paths}"
    if study is not None:
        text += f"; {len(_complete_trials(study))} complete trials"
    return text
