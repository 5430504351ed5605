"""One Bayesian-optimisation step with several objectives: one surrogate per objective, the
log of the expected hypervolume improvement over the Pareto front of the observations
(:func:`condsamplers.acquisition.make_log_ehvi`), the optimizer unchanged.

:func:`condsamplers.pipeline.propose` hands observations with one column of values per
objective (``Observations.y`` of shape ``(n, k)``) to :func:`propose_pareto`.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from condsamplers.acquisition import (
    believed_fantasy,
    make_log_ehvi,
    normal_qmc_samples,
    with_feasibility,
)
from condsamplers.evidence_warping import AUTO_WARPING
from condsamplers.hypervolume import non_dominated_boxes, pareto_mask, reference_point
from condsamplers.models.base import Surrogate
from condsamplers.optimize import OptimizerSettings, select_path
from condsamplers.space import ConditionalSpace, FixedValues, Path
from condsamplers.warping import warp_outputs

if TYPE_CHECKING:
    from condsamplers.acquisition import Constraint
    from condsamplers.pipeline import ModelFactory, Observations, Proposal

#: Quasi-Monte-Carlo samples of log-EHVI (Optuna's ``GPSampler`` uses 128 as well).
N_EHVI_SAMPLES = 128
#: Above this many boxes (``(n + 1) ** (k - 1)`` for ``n`` front points and ``k`` objectives)
#: the step scalarises the objectives instead (:func:`parego_values`).
MAX_BOXES = 20_000
#: The weight of the sum in ParEGO's augmented Chebyshev scalarisation (Knowles 2006, eq. 2).
PAREGO_RHO = 0.05


def unit_scaled(Y: np.ndarray) -> np.ndarray:
    """Each column of ``Y`` mapped affinely onto ``[0, 1]`` (a constant column to 0): the
    objectives' units do not matter to the front, and the box sides of log-EHVI are neither
    tiny nor huge."""
    low, high = Y.min(axis=0), Y.max(axis=0)
    span = np.where(high > low, high - low, 1.0)
    return (Y - low) / span


def parego_values(Y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """ParEGO's scalarisation of unit-scaled objectives ``Y`` with weights drawn uniformly from
    the simplex: ``max_j w_j y_j + rho sum_j w_j y_j`` (Knowles 2006, eq. 2), a fresh draw each
    step, so that the steps spread over the front."""
    weights = rng.dirichlet(np.ones(Y.shape[1]))
    weighted = Y * weights
    return weighted.max(axis=1) + PAREGO_RHO * weighted.sum(axis=1)


def n_boxes(front_size: int, n_objectives: int) -> int:
    """The most boxes :func:`~condsamplers.hypervolume.non_dominated_boxes` can return."""
    return (front_size + 1) ** (n_objectives - 1)


def propose_pareto(
    space: ConditionalSpace,
    data: Observations,
    model: Surrogate,
    rng: np.random.Generator,
    settings: OptimizerSettings,
    make_model: ModelFactory | None,
    fixed: FixedValues | None = None,
) -> Proposal:
    """:func:`condsamplers.pipeline.propose` for ``k`` objectives (``data.y`` ``(n, k)``, all
    minimised).

    Each objective is warped (``settings.output_warping``), scaled onto ``[0, 1]``
    (:func:`unit_scaled`) and fitted by its own surrogate: ``model`` for the first,
    ``make_model(m + 1 + j)`` for objective ``j >= 1`` (``m`` constraint models come first,
    then the cost model's index). The acquisition is log-EHVI over the Pareto front of the
    feasible observations, with the reference point beyond their worst values
    (:func:`~condsamplers.hypervolume.reference_point`), weighted by the probability of
    feasibility under constraints; running trials enter as the kriging believer of each
    objective (each model conditioned on its own mean there, as Optuna's ``GPSampler``). With
    ``settings.two_step`` and path models (the tree GP), unless
    ``settings.joint_with_objectives``, the path is chosen first by the path EHVI, each
    objective's path posterior in place of its posterior. Where the front has
    too many boxes (:data:`MAX_BOXES`), the step is ParEGO's: one random Chebyshev
    scalarisation of the objectives (:func:`parego_values`), proposed for as one objective.
    """
    from condsamplers.pipeline import (
        N_INCUMBENT_STARTS,
        Proposal,
        _maximize,
        fit_constraints,
        propose,
        propose_feasible,
    )

    warping = "none" if settings.output_warping == AUTO_WARPING else settings.output_warping
    Y = np.column_stack([warp_outputs(data.y[:, j], warping) for j in range(data.y.shape[1])])
    Y = unit_scaled(Y)
    feasible = data.feasible()
    front_rows = np.flatnonzero(feasible)[pareto_mask(Y[feasible])] if feasible.any() else []
    k = Y.shape[1]
    if feasible.any() and n_boxes(len(front_rows), k) > MAX_BOXES:
        scalar = dataclasses.replace(data, y=parego_values(Y, rng))
        plain = dataclasses.replace(settings, output_warping="none")
        return propose(space, scalar, model, rng, plain, make_model, fixed)
    if settings.joint_with_objectives:
        settings = dataclasses.replace(settings, two_step=False)
    if make_model is None and k > 1:
        raise ValueError("Observations with several objectives need a model factory.")
    offset = 0 if data.constraints is None else data.constraints.shape[1]
    models = [model] + [make_model(offset + 1 + j) for j in range(k - 1)]  # type: ignore[misc]
    for j, member in enumerate(models):
        member.fit(data.X, data.active, Y[:, j], space.features)
    constraints = fit_constraints(space, data, make_model)
    if not feasible.any():
        return propose_feasible(space, data, model, constraints, rng, settings, fixed)
    lowers, uppers = non_dominated_boxes(Y[front_rows], reference_point(Y[feasible]))
    samples = normal_qmc_samples(N_EHVI_SAMPLES, k, int(rng.integers(2**31)))
    believed = [
        believed_fantasy(m, data.X_pending, data.active_pending, 0.0)[0].model for m in models
    ]
    acquisition = with_feasibility(make_log_ehvi(believed, lowers, uppers, samples), constraints)
    by_spread = front_rows[np.argsort(Y[front_rows].sum(axis=1), kind="stable")]
    starts = data.X[by_spread[:N_INCUMBENT_STARTS]]
    path = _pareto_path(
        space, data, believed, constraints, (lowers, uppers, samples), rng, settings, starts, fixed
    )
    only = None if path is None else [path]
    X, active, values = _maximize(
        acquisition, space, data, rng, settings, starts, only, fixed, model.length_scales()
    )
    return Proposal(X, active, values, model, path)


def _pareto_path(
    space: ConditionalSpace,
    data: Observations,
    models: list[Surrogate],
    constraints: list[Constraint],
    boxes: tuple[np.ndarray, np.ndarray, np.ndarray],
    rng: np.random.Generator,
    settings: OptimizerSettings,
    starts: np.ndarray,
    fixed: FixedValues | None,
) -> Path | None:
    """The path of the two-step search by path EHVI, or ``None`` to search every path."""
    from condsamplers.pipeline import two_step_paths

    paths = two_step_paths(
        space, data, settings, [*models, *(c.model for c in constraints)], fixed
    )
    if not paths:
        return None
    lowers, uppers, samples = boxes
    path_ehvi = make_log_ehvi(models, lowers, uppers, samples, of_path=True)
    return select_path(
        with_feasibility(path_ehvi, constraints, True), space, paths, rng, settings, starts, fixed
    )
