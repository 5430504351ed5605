"""One Bayesian-optimisation step, free of Optuna: data -> model -> acquisition -> optimizer.

The Optuna samplers and the scikit-learn search estimator both call :func:`propose`; a new
surrogate only needs a model factory.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import torch

from condsamplers.acquisition import (
    Acquisition,
    Constraint,
    Cost,
    Fantasy,
    PathModel,
    believed_fantasy,
    make_log_feasibility,
    make_log_mc_ei,
    make_log_mc_path_ei,
    per_second,
    sample_fantasies,
    with_feasibility,
)
from condsamplers.branch_draw import draw_branches
from condsamplers.branch_tpe import choose_branches
from condsamplers.evidence_warping import AUTO_WARPING, WarpingChoice, fit_auto
from condsamplers.models.base import Surrogate
from condsamplers.optimize import OptimizerSettings, maximize_acquisition, select_path
from condsamplers.path_patience import paths_out_of_patience
from condsamplers.space import (
    ConditionalSpace,
    FixedValues,
    Path,
    at_highest_fidelity,
    with_fidelity,
)
from condsamplers.warping import (
    log_regret,  # noqa: F401 (importable from here)
    warp_outputs,
)

ModelFactory = Callable[[int], Surrogate]

#: Best observed configurations added as starting candidates of the acquisition optimizer.
N_INCUMBENT_STARTS = 3


@dataclasses.dataclass
class Observations:
    """Encoded data of one step. ``y`` is to be minimised and finite: ``(n,)``, or ``(n, k)``
    for ``k`` objectives (:func:`condsamplers.pipeline_pareto.propose_pareto`).

    ``X_pending`` / ``active_pending`` are configurations under evaluation (running trials).
    ``constraints`` (optional, ``(n, m)``): values ``c_k`` of the constraints ``c_k <= 0`` at
    the observed points, ``NaN`` where a trial did not report constraint ``k`` (it does not
    apply there, as for a constraint set in one branch of a conditional objective).
    Rows are in the order they were evaluated (``OptimizerSettings.path_patience`` reads it).
    """

    X: np.ndarray
    active: np.ndarray
    y: np.ndarray
    X_pending: np.ndarray
    active_pending: np.ndarray
    constraints: np.ndarray | None = None
    #: the fidelity of each observation in [0, 1] (1: the highest, a complete trial's final
    #: value; :mod:`condsamplers.space.fidelity`), or ``None`` when all are at the highest.
    fidelity: np.ndarray | None = None
    #: the log of each observation's duration in seconds (``None``: durations not modelled);
    #: with it the acquisition is EI per second (:func:`condsamplers.acquisition.per_second`).
    log_cost: np.ndarray | None = None

    def __post_init__(self) -> None:
        if len(self.X) == 0:
            raise ValueError("Observations need at least one evaluated configuration.")
        if not np.all(np.isfinite(self.y)):
            raise ValueError("Observations.y must be finite; clip or drop NaN/inf values first.")
        if self.y.ndim not in (1, 2) or len(self.y) != len(self.X):
            raise ValueError("Observations.y must have shape (n_observations,) or (n, k).")
        if self.y.ndim == 2 and self.fidelity is not None:
            raise ValueError("Observations with several objectives have no fidelity.")
        if self.constraints is not None:
            if self.constraints.shape[0] != len(self.X) or self.constraints.ndim != 2:
                raise ValueError("Observations.constraints must have shape (n_observations, m).")
            if np.isinf(self.constraints).any():
                raise ValueError("Observations.constraints must not be infinite; clip them.")
        if self.fidelity is not None:
            if self.fidelity.shape != (len(self.X),):
                raise ValueError("Observations.fidelity must have shape (n_observations,).")
            if not np.all((self.fidelity >= 0) & (self.fidelity <= 1)):
                raise ValueError("Observations.fidelity must lie in [0, 1].")
        if self.log_cost is not None:
            if self.log_cost.shape != (len(self.X),) or not np.all(np.isfinite(self.log_cost)):
                raise ValueError(
                    "Observations.log_cost must be finite, of shape (n_observations,)."
                )

    def feasible(self) -> np.ndarray:
        """Rows whose reported constraint values are all ``<= 0`` (all rows without
        constraints)."""
        if self.constraints is None:
            return np.ones(len(self.X), dtype=bool)
        return np.all(np.isnan(self.constraints) | (self.constraints <= 0), axis=1)


@dataclasses.dataclass
class Proposal:
    """Ranked candidates of one step (best first) and the fitted model."""

    X: np.ndarray
    active: np.ndarray
    acquisition_values: np.ndarray
    model: Surrogate
    #: the path chosen by the two-step acquisition (``None``: every path was searched).
    path: Path | None = None
    #: what ``output_warping="auto"`` chose, for the next step (``None``: nothing to carry).
    warping: WarpingChoice | None = None


def propose(
    space: ConditionalSpace,
    data: Observations,
    model: Surrogate,
    rng: np.random.Generator,
    settings: OptimizerSettings,
    make_constraint_model: ModelFactory | None = None,
    fixed: FixedValues | None = None,
    incumbent_at: FixedValues | None = None,
    incumbent_rows: np.ndarray | None = None,
    warping: WarpingChoice | None = None,
) -> Proposal:
    """Fit ``model``, account for pending points, and maximise log-EI over ``space``.

    The incumbent of EI is the best posterior mean at the observed points ("plug-in" EI,
    Picheny et al. 2013): with noisy observations the best observed value is a lucky draw that
    the model cannot reach, and EI would then chase variance at the edges of the space. For a
    noise-free objective the posterior mean interpolates, so the two incumbents coincide.

    With ``settings.noise_penalty`` and a model that estimates its noise variance, log-EI
    carries the augmented-EI factor of Huang et al. (2006) (``make_log_mc_ei``'s ``noise``), so
    a noisy objective is not evaluated again and again where only its noise is left to learn.

    A model with hyperparameter samples (``model.hyperparameter_models()``) gets the
    integrated acquisition (DNGO, Snoek et al. 2015, eq. 11-12): EI averaged over the samples,
    each with its own plug-in incumbent and its own fantasies of the pending points.

    Pending points (``data.X_pending``) enter as the kriging believer
    (``settings.n_fantasies == 0``) or as Monte-Carlo EI over ``settings.n_fantasies`` joint
    fantasies of their outcomes (Snoek et al. 2012 sec. 3.3, DNGO sec. 3.3), drawn from ``rng``.

    With ``settings.two_step`` and a model with a path posterior, the search is Jenatton et
    al.'s two-step EI (sec. 3.2): the path maximising the path EI (eq. 6) first, then EI
    (eq. 5) on that path alone; both are averaged over the fantasies.

    With ``data.constraints``, one surrogate per constraint (``make_constraint_model(k)``) and
    EI weighted by the probability of feasibility (DNGO sec. 3.2; the path EI by that of the
    constraints' path posteriors); the incumbent is the best posterior mean at *feasible*
    observed points, and while there is none the acquisition is the probability of feasibility.

    With ``fixed`` (parameters whose values are set outside the model, such as an enqueued
    trial's or the parameters a trial has already suggested), the acquisition is maximised over
    the other parameters, on the paths those values allow: EI conditioned on them. No candidate
    is returned if none can keep them.

    The model is fitted to the values under ``settings.output_warping`` (:func:`fit_warped`;
    ``warping``: what ``"auto"`` chose at the previous step, returned in the proposal),
    refitted at each step; constraints are not warped.

    With several objectives (``data.y`` of shape ``(n, k)``), one surrogate per objective and
    log-EHVI (:func:`condsamplers.pipeline_pareto.propose_pareto`).

    With ``data.fidelity`` (observations at several fidelities, such as the intermediate
    values of pruned trials), the fidelity is one more column of the model's inputs and the
    acquisition is maximised at the highest fidelity (:func:`propose_at_highest_fidelity`).
    ``incumbent_at``: values the plug-in incumbent is predicted at (the highest fidelity);
    ``incumbent_rows``: the observations it is taken over (those at the highest fidelity; all
    feasible ones where none of these is).
    """
    if data.y.ndim == 2:
        from condsamplers.pipeline_pareto import propose_pareto

        return propose_pareto(space, data, model, rng, settings, make_constraint_model, fixed)
    if data.fidelity is not None:
        return propose_at_highest_fidelity(
            space, data, model, rng, settings, make_constraint_model, fixed, warping
        )
    model, data, warping = fit_warped(space, data, model, settings.output_warping, warping)
    constraints = fit_constraints(space, data, make_constraint_model)
    cost = fit_cost(space, data, make_constraint_model)
    feasible = data.feasible()
    if not feasible.any():  # constraints reported, none satisfied yet: look for feasibility
        proposal = propose_feasible(space, data, model, constraints, rng, settings, fixed)
        return dataclasses.replace(proposal, warping=warping)
    over = feasible if incumbent_rows is None else feasible & incumbent_rows
    over = over if over.any() else feasible
    fantasies = step_fantasies(model, data, over, settings.n_fantasies, rng, incumbent_at)
    noise = model.noise_variance() if settings.noise_penalty else None
    log_ei = make_log_mc_ei(fantasies, noise)
    acquisition = per_second(with_feasibility(log_ei, constraints), cost)
    order = np.flatnonzero(feasible)[np.argsort(data.y[feasible], kind="stable")]
    incumbents = data.X[order[:N_INCUMBENT_STARTS]]
    sitting_out = _sitting_out(space, data, over, settings)
    path = _two_step_path(
        space, data, fantasies, constraints, rng, settings, incumbents, fixed, cost, sitting_out
    )
    X, active, values = _maximize(
        acquisition,
        space,
        data,
        rng,
        settings,
        incumbents,
        _searched_paths(space, path, sitting_out, fixed),
        fixed,
        model.length_scales(),
    )
    return Proposal(X, active, values, model, path, warping)


def _sitting_out(
    space: ConditionalSpace, data: Observations, rows: np.ndarray, settings: OptimizerSettings
) -> list[Path]:
    """The paths that sit out this step by ``settings.path_patience``
    (:func:`~condsamplers.path_patience.paths_out_of_patience`, counted on ``rows``, the
    feasible observations the incumbent is taken over); none without it, or where the paths are
    too many to list."""
    paths = space.paths() if settings.path_patience is not None else None
    if not paths:
        return []
    X, active, y = data.X[rows], data.active[rows], data.y[rows]
    return paths_out_of_patience(space, paths, X, active, y, settings.path_patience)


def _searched_paths(
    space: ConditionalSpace,
    path: Path | None,
    sitting_out: list[Path],
    fixed: FixedValues | None = None,
) -> list[Path] | None:
    """The paths the acquisition is maximised over: the two-step search's ``path``, else
    every path but those ``sitting_out`` (``None``: every path), unless the ``fixed`` values
    allow none of those (a trial whose given values lead to a path that sits out)."""
    if path is not None:
        return [path]
    if not sitting_out:
        return None
    kept = [p for p in space.paths() or [] if p not in sitting_out]
    if fixed is not None and not any(fixed.allows(p) for p in kept):
        return None
    return kept


def fit_warped(
    space: ConditionalSpace,
    data: Observations,
    model: Surrogate,
    output_warping: str,
    previous: WarpingChoice | None = None,
) -> tuple[Surrogate, Observations, WarpingChoice | None]:
    """``model`` fitted to ``data``'s values under ``output_warping`` (``"auto"``: the
    values or their log error, by evidence, :func:`condsamplers.evidence_warping.fit_auto`
    from the ``previous`` step's choice; else :func:`condsamplers.warping.warp_outputs`),
    ``data`` with the values it was fitted to, on which the incumbent and EI are then
    computed, and the choice for the next step."""
    if output_warping == AUTO_WARPING:
        model, y, choice = fit_auto(model, data.X, data.active, data.y, space.features, previous)
        return model, dataclasses.replace(data, y=y), choice
    data = dataclasses.replace(data, y=warp_outputs(data.y, output_warping))
    model.fit(data.X, data.active, data.y, space.features)
    return model, data, None


def propose_feasible(
    space: ConditionalSpace,
    data: Observations,
    model: Surrogate,
    constraints: list[Constraint],
    rng: np.random.Generator,
    settings: OptimizerSettings,
    fixed: FixedValues | None = None,
) -> Proposal:
    """While no observation satisfies the constraints: maximise ``log PF`` alone, started from
    the least-violating observations (``model``, the fitted objective model, rides along)."""
    assert data.constraints is not None
    violation = np.nanmax(np.where(np.isnan(data.constraints), 0, data.constraints), axis=1)
    starts = data.X[np.argsort(violation, kind="stable")[:N_INCUMBENT_STARTS]]
    acquisition = make_log_feasibility(constraints)
    X, active, values = _maximize(acquisition, space, data, rng, settings, starts, fixed=fixed)
    return Proposal(X, active, values, model, None)


def _maximize(
    acquisition: Acquisition,
    space: ConditionalSpace,
    data: Observations,
    rng: np.random.Generator,
    settings: OptimizerSettings,
    incumbents: np.ndarray,
    only: list[Path] | None = None,
    fixed: FixedValues | None = None,
    length_scales: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`maximize_acquisition`, each candidate valued (and returned) with the activity
    its unexplained nodes are predicted to have (``ConditionalSpace.activity_predictor``)."""
    predict = space.activity_predictor(data.X, data.active)
    if predict is None:
        return maximize_acquisition(
            acquisition, space, rng, settings, incumbents, only, fixed, length_scales
        )

    def with_predicted_activity(X: torch.Tensor, active: torch.Tensor) -> torch.Tensor:
        predicted = predict(X.detach().cpu().numpy(), active.cpu().numpy())
        return acquisition(X, torch.as_tensor(predicted))

    X, active, values = maximize_acquisition(
        with_predicted_activity, space, rng, settings, incumbents, only, fixed, length_scales
    )
    return X, predict(X, active), values


def step_fantasies(
    model: Surrogate,
    data: Observations,
    feasible: np.ndarray,
    n_fantasies: int,
    rng: np.random.Generator,
    incumbent_at: FixedValues | None = None,
) -> list[Fantasy]:
    """The fantasies EI of one step is averaged over (:func:`propose`): for each
    hyperparameter sample of the fitted ``model`` (the model itself without samples), its
    :func:`pending_fantasies` with its own plug-in incumbent, the best posterior mean at the
    ``feasible`` observed points (with the values of ``incumbent_at`` set)."""
    return [
        fantasy
        for member in model.hyperparameter_models()
        for fantasy in pending_fantasies(
            member, data, _incumbent(member, data, feasible, incumbent_at), n_fantasies, rng
        )
    ]


def _incumbent(
    model: Surrogate, data: Observations, feasible: np.ndarray, at: FixedValues | None = None
) -> float:
    """The plug-in incumbent: the best posterior mean at the feasible observed points, with
    the values of ``at`` set (the highest fidelity)."""
    if at is None:
        fitted = model.mean_at_observations()
        if fitted is not None:
            return float(fitted[feasible].min())
    X, active = data.X[feasible], data.active[feasible]
    if at is not None:
        X = at.apply(X, active)
    return float(model.predict(X, active)[0].min())


def propose_at_highest_fidelity(
    space: ConditionalSpace,
    data: Observations,
    model: Surrogate,
    rng: np.random.Generator,
    settings: OptimizerSettings,
    make_constraint_model: ModelFactory | None = None,
    fixed: FixedValues | None = None,
    warping: WarpingChoice | None = None,
) -> Proposal:
    """:func:`propose` on observations at several fidelities (``data.fidelity``).

    The model reads the fidelity as one more numerical column, active on every path
    (:func:`condsamplers.space.fidelity.with_fidelity`), with its own length scale in the GPs
    and one more input of the networks. Pending points (running trials) are pending at the
    highest fidelity, where they will end if not pruned. EI (eq. 5, and the path EI of eq. 6)
    is maximised with the column held at 1, and its plug-in incumbent is the best posterior
    mean at fidelity 1 of the configurations observed there (complete trainings); only while
    there is none, of every observed configuration predicted at fidelity 1. The minimum of
    many extrapolations from early steps is an optimistic incumbent (the lowest of many
    uncertain predictions): with it, on the digits problem of ``benchmarks/fidelity``, EI
    kept too little room for improvement, median 0.0184 against 0.0168 (10 seeds).
    The proposal is returned in the columns of ``space``. With
    ``settings.joint_with_fidelity``, EI is maximised over every path at once; without
    ``settings.noise_penalty_with_fidelity``, EI carries no augmented-EI factor.
    """
    assert data.fidelity is not None
    wide = with_fidelity(space)
    n_pending = len(data.X_pending)
    wide_data = dataclasses.replace(
        data,
        X=np.column_stack([data.X, data.fidelity]),
        active=np.column_stack([data.active, np.ones(len(data.X), dtype=bool)]),
        X_pending=np.column_stack([data.X_pending, np.ones(n_pending)]),
        active_pending=np.column_stack([data.active_pending, np.ones(n_pending, dtype=bool)]),
        fidelity=None,
    )
    top = at_highest_fidelity(wide)
    if settings.joint_with_fidelity:
        settings = dataclasses.replace(settings, two_step=False)
    if not settings.noise_penalty_with_fidelity:
        settings = dataclasses.replace(settings, noise_penalty=False)
    proposal = propose(
        wide,
        wide_data,
        model,
        rng,
        settings,
        make_constraint_model,
        at_highest_fidelity(wide, fixed),
        incumbent_at=top,
        incumbent_rows=data.fidelity >= 1.0,
        warping=warping,
    )
    n = space.n_features
    return dataclasses.replace(proposal, X=proposal.X[:, :n], active=proposal.active[:, :n])


def fit_constraints(
    space: ConditionalSpace, data: Observations, make_model: ModelFactory | None
) -> list[Constraint]:
    """One surrogate per constraint column of ``data``, fitted on the trials reporting it;
    ``make_model(k)`` builds the ``k``-th (the same kind as the objective's, DNGO sec. 3.2).

    A path (active pattern) whose trials never reported constraint ``k`` is exempt from it: a
    constraint set in one branch of a conditional objective does not apply to the others.
    """
    if data.constraints is None:
        return []
    if make_model is None:
        raise ValueError("Observations with constraints need a constraint model factory.")
    constraints = []
    for k in range(data.constraints.shape[1]):
        reported = ~np.isnan(data.constraints[:, k])
        if not reported.any():
            continue
        model = make_model(k).fit(
            data.X[reported], data.active[reported], data.constraints[reported, k], space.features
        )
        applies = {row.tobytes() for row in data.active[reported]}
        unreported = np.unique(data.active[~reported], axis=0)
        exempt = [row for row in unreported if row.tobytes() not in applies]
        constraints.append(
            Constraint(model, np.array(exempt, dtype=bool).reshape(-1, space.n_features))
        )
    return constraints


def fit_cost(
    space: ConditionalSpace, data: Observations, make_model: ModelFactory | None
) -> Cost | None:
    """A surrogate of the log duration (``data.log_cost``), of the objective's kind
    (``make_model(m)``, ``m`` the number of constraint columns: the next model's index);
    ``None`` without durations."""
    if data.log_cost is None:
        return None
    if make_model is None:
        raise ValueError("Observations with log_cost need a model factory.")
    index = 0 if data.constraints is None else data.constraints.shape[1]
    return Cost(make_model(index).fit(data.X, data.active, data.log_cost, space.features))


def pending_fantasies(
    model: Surrogate,
    data: Observations,
    incumbent: float,
    n_fantasies: int,
    rng: np.random.Generator,
) -> list[Fantasy]:
    """The fitted ``model`` given the pending points: one believer model (``n_fantasies`` 0)
    or ``n_fantasies`` Monte-Carlo fantasies; ``rng`` is only drawn from in the latter case."""
    if n_fantasies < 0:
        raise ValueError(f"n_fantasies must be >= 0; got {n_fantasies!r}.")
    if n_fantasies == 0 or len(data.X_pending) == 0:
        return believed_fantasy(model, data.X_pending, data.active_pending, incumbent)
    return sample_fantasies(
        model, data.X_pending, data.active_pending, n_fantasies, incumbent, rng
    )


def _two_step_path(
    space: ConditionalSpace,
    data: Observations,
    fantasies: list[Fantasy],
    constraints: list[Constraint],
    rng: np.random.Generator,
    settings: OptimizerSettings,
    incumbents: np.ndarray,
    fixed: FixedValues | None = None,
    cost: Cost | None = None,
    sitting_out: list[Path] | None = None,
) -> Path | None:
    """The path of the first step of the two-step EI (per second with ``cost``), or ``None`` to
    search every path. With ``settings.branch_draw`` the path EI chooses among the paths of
    the branches drawn by :func:`~condsamplers.branch_draw.draw_branches` (parameters with
    three or more branches), or with ``settings.branch_rule == "tpe"`` chosen by
    :func:`~condsamplers.branch_tpe.choose_branches`; never among the paths ``sitting_out``
    (``settings.path_patience``) while others are left."""
    models = [f.model for f in fantasies] + [c.model for c in constraints]
    models += [] if cost is None else [cost.model]
    paths = two_step_paths(space, data, settings, models, fixed)
    paths = [p for p in paths if p not in (sitting_out or [])] or paths
    if paths and settings.branch_draw:
        feasible = data.feasible()
        choose = choose_branches if settings.branch_rule == "tpe" else draw_branches
        paths = choose(
            space, data.X[feasible], data.active[feasible], data.y[feasible], paths, rng
        )
    if len(paths) <= 1:
        return paths[0] if paths else None
    path_acquisition = per_second(
        with_feasibility(make_log_mc_path_ei(fantasies), constraints, True), cost, True
    )
    return select_path(path_acquisition, space, paths, rng, settings, incumbents, fixed)


def two_step_paths(
    space: ConditionalSpace,
    data: Observations,
    settings: OptimizerSettings,
    models: list[Surrogate],
    fixed: FixedValues | None = None,
) -> list[Path]:
    """The paths a two-step search chooses among: those not exhausted (:func:`_exhausted`)
    and allowed by the ``fixed`` values; none (search every path at once) unless
    ``settings.two_step``, every one of ``models`` has a path posterior, and two or more
    paths are left."""
    with_paths = all(isinstance(m, PathModel) and m.has_path_posterior for m in models)
    if not (settings.two_step and with_paths):
        return []
    paths = [
        p
        for p in space.paths() or []
        if not _exhausted(space, p, data) and (fixed is None or fixed.allows(p))
    ]
    return paths if len(paths) > 1 else []


def _exhausted(space: ConditionalSpace, path: Path, data: Observations) -> bool:
    """Whether every configuration of ``path`` is observed or pending (a path whose parameters
    are all categorical or on a grid, such as a branch with a few choices of its own): the
    two-step search must not pick it, as every candidate on it would be a duplicate."""
    branch_values = dict(path.branch_values)
    size = 1
    for key in path.active:
        n = (
            len(branch_values[key])
            if key in branch_values
            else space.nodes[space.index[key]].n_values()
        )
        if n is None:
            return False
        size *= n
    pattern = space.path_pattern(path)
    seen_X = np.concatenate([data.X, data.X_pending])
    on_path = (np.concatenate([data.active, data.active_pending]) == pattern).all(axis=1)
    if on_path.sum() < size:
        return False
    return len(np.unique(np.round(seen_X[on_path][:, pattern], 9), axis=0)) >= size
