"""Maximise an acquisition function over a conditional space.

1. For each path of the tree (every group of branch values, untried ones included), draw
   quasi-uniform candidates whose branch values follow the path; add the caller's start points
   (e.g. the best observed configurations), each also carried onto every other path with the
   values of the parameters the paths share.
2. Take the best candidate of each of the best paths (then the best remaining candidates) as
   ``n_local_search`` starts and improve them by L-BFGS-B on their active numerical columns
   (branch values and categoricals fixed; integers relaxed, then rounded onto their grid).
3. Sweep the non-branching categorical columns of the winner one at a time.
A caller may restrict the search to some paths (the second step of Jenatton et al.'s two-step
acquisition, whose first step, :func:`select_path`, picks one path by its path EI).
Returns the candidates ranked by acquisition value, best first, so that a caller can skip one
that duplicates an existing trial.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.optimize
import torch

from condsamplers.acquisition import DEFAULT_N_FANTASIES, Acquisition
from condsamplers.space import ConditionalSpace, FixedValues, Path

#: The local search in the units of the model's length scales stops once no component of the
#: acquisition's projected gradient exceeds this (Optuna's GPSampler stops at 1e-2, after which
#: proposals of one acquisition from different starts still lie 0.04 apart in the unit cube).
LOCAL_SEARCH_GTOL = 1e-3
#: ... and in the unit cube (a model without length scales): scipy's default.
UNIT_CUBE_GTOL = 1e-5
#: Length scales outside this range are taken at its ends as the local search's units.
STEP_SCALE_RANGE = (1e-3, 1e3)


@dataclasses.dataclass(frozen=True)
class OptimizerSettings:
    """Budget of the acquisition optimisation.

    Attributes:
        n_candidates: quasi-random candidates in total, spread over the paths.
        min_candidates_per_path: floor on the candidates of each path.
        n_local_search: starts of the gradient-based local search.
        local_search_max_iter: L-BFGS-B iterations of the (joint) local search.
        local_search_radius: how far (in the unit cube, per column) the local search may move
            a start: L-BFGS-B's bounds are ``[max(0, x0 - r), min(1, x0 + r)]``. ``1.0``
            (default): the whole cube. A small radius keeps the local search a refinement
            of its start, so the acquisition's winner stays near the quasi-random candidate
            that found it instead of running to a corner of the cube (0.1 is the default of
            ``CondBayesSearchCV`` on more than 10 dicts).
        two_step: Jenatton et al.'s two-step acquisition (sec. 3.2): choose one path by the
            path EI of eq. 6 first, then maximise EI on that path only. Needs a model with a
            path posterior (:class:`~condsamplers.models.tree_gp.TreeGP`); otherwise, and when
            the tree has one path, every path is searched.
        n_fantasies: how pending points (running trials) enter the acquisition. ``0``: the
            kriging believer (the model is conditioned on its own mean there); ``S >= 1``:
            Monte-Carlo EI, EI averaged over ``S`` models conditioned on joint samples of the
            pending outcomes (Snoek et al. 2012, sec. 3.3; DNGO sec. 3.3). See docs/batch.md.
        noise_penalty: multiply EI by the augmented-EI factor of Huang et al. (2006) when the
            model fits a noise variance (:func:`~condsamplers.acquisition.make_log_mc_ei`).
        joint_with_fidelity: with observations at several fidelities (pruned trials), search
            every path at once even with ``two_step`` (the path EI of a path seen mostly at low
            fidelity ranks it below the paths whose early values look better, and the two-step
            search then stays on those).
        noise_penalty_with_fidelity: keep ``noise_penalty`` with observations at several
            fidelities. ``False`` (the tree GP's choice): plain EI there, since the noise the
            model then fits is mostly its misfit of partial learning curves, not measurement
            noise: with the factor, ``benchmarks/fidelity`` got worse on both problems.
        joint_with_objectives: with several objectives, search every path at once even with
            ``two_step`` (the path EHVI chose a decoy branch whose corners sit on the front by a
            hair, 0.76 of the true front's hypervolume where the joint search reached 0.95).
        branch_draw: with ``two_step``, draw the branch of each parameter with three or more
            branches before the path EI chooses among the paths left.
        branch_rule: how (with ``branch_draw``): ``"thompson"``
            (:func:`~condsamplers.branch_draw.draw_branches`, a Thompson draw on how often a
            branch holds the best trials) or ``"tpe"``
            (:func:`~condsamplers.branch_tpe.choose_branches`, TPE's rule, the root parameters
            together).
        output_warping: the monotone warp of the objective values the model is fitted to
            (:func:`condsamplers.warping.warp_outputs`, one of
            :data:`~condsamplers.warping.OUTPUT_WARPINGS`); the incumbent and EI live in the
            warped space.
        path_patience: ``None`` (default) or ``k``: a path that has had ``k`` observations
            since the best value last improved sits out the search until the best value
            improves again (:mod:`condsamplers.path_patience`, eq. 1; one objective only).
            The observations must be in the order they were evaluated.
    """

    n_candidates: int = 1024
    min_candidates_per_path: int = 16
    n_local_search: int = 5
    local_search_max_iter: int = 100
    local_search_radius: float = 1.0
    two_step: bool = False
    branch_draw: bool = False
    branch_rule: str = "thompson"
    joint_with_fidelity: bool = False
    noise_penalty_with_fidelity: bool = True
    joint_with_objectives: bool = False
    n_fantasies: int = DEFAULT_N_FANTASIES
    noise_penalty: bool = False
    output_warping: str = "none"
    path_patience: int | None = None


def round_to_grid(space: ConditionalSpace, X: np.ndarray) -> np.ndarray:
    """Snap discrete (int, stepped float, categorical) columns onto their grid."""
    X = X.copy()
    for j, node in enumerate(space.nodes):
        if node.is_discrete or node.is_categorical:
            X[:, j] = node.to_unit(node.from_unit(X[:, j]))
    return X


def _evaluate(acquisition: Acquisition, X: np.ndarray, active: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        values = acquisition(torch.as_tensor(X), torch.as_tensor(active))
    values = values.numpy().astype(float)
    values[~np.isfinite(values)] = -np.inf
    return values


def _candidates(
    space: ConditionalSpace,
    rng: np.random.Generator,
    settings: OptimizerSettings,
    X_start: np.ndarray | None,
    only: list[Path] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Quasi-uniform candidates per path, plus the start points carried onto every path.

    With ``only``, candidates lie on those paths alone (start points only carried onto them).
    """
    paths = only or space.paths()
    if not paths:
        X, active = space.sample(settings.n_candidates, rng)
    else:
        per_path = max(settings.n_candidates // len(paths), settings.min_candidates_per_path)
        samples = [space.sample(per_path, rng, path) for path in paths]
        X = np.concatenate([s[0] for s in samples])
        active = np.concatenate([s[1] for s in samples])
    if X_start is None or not len(X_start):
        return X, active
    carried = [_carry_onto_paths(space, x, paths, rng) for x in X_start]
    if only is None:
        X = np.concatenate([X, X_start])
        active = np.concatenate([active, space.active_mask(X_start)])
    X = np.concatenate([X, *[c[0] for c in carried]])
    active = np.concatenate([active, *[c[1] for c in carried]])
    return X, active


def _carry_onto_paths(
    space: ConditionalSpace, x: np.ndarray, paths: list[Path] | None, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``x`` moved onto every path: its values kept wherever the path shares its parameters.

    This is how what is known on one branch (the shared variables of Jenatton et al. 2017,
    sec. 2.4) seeds the search on the others.
    """
    if not paths:
        return np.empty((0, len(x))), np.empty((0, len(x)), dtype=bool)
    X, _ = zip(*(space.sample(1, rng, path) for path in paths), strict=True)
    X = np.concatenate(X)
    x_active = space.active_mask(x[None, :])[0]
    branch_columns = np.zeros(len(x), dtype=bool)
    for path in paths:
        for key, _ in path.branch_values:
            branch_columns[space.index[key]] = True
    keep = x_active & ~branch_columns
    X[:, keep] = x[keep]
    active = space.active_mask(X)
    X[~active] = 0.0
    return X, active


def _path_keys(space: ConditionalSpace, X: np.ndarray, active: np.ndarray) -> list[bytes]:
    branching = [space.index[n.key] for n in space.branching_nodes()]
    keys = np.concatenate([active, np.where(active[:, branching], X[:, branching], -1)], axis=1)
    return [row.tobytes() for row in keys]


def _local_search_starts(
    space: ConditionalSpace, X: np.ndarray, active: np.ndarray, values: np.ndarray, k: int
) -> np.ndarray:
    """Indices of ``k`` starts: the best candidate of each of the best paths, then the best
    remaining candidates."""
    keys = _path_keys(space, X, active)
    order = np.argsort(-values, kind="stable")
    chosen: dict[bytes, int] = {}
    for i in order:
        chosen.setdefault(keys[i], int(i))
        if len(chosen) == k:
            return np.array(list(chosen.values()), dtype=int)
    starts = list(chosen.values())
    starts += [int(i) for i in order if int(i) not in chosen.values()][: k - len(starts)]
    return np.array(starts, dtype=int)


def _free_columns(
    space: ConditionalSpace, active: np.ndarray, fixed: FixedValues | None = None
) -> np.ndarray:
    branching = {n.key for n in space.branching_nodes()}
    numerical = np.array(
        [not n.is_categorical and n.key not in branching for n in space.nodes], dtype=bool
    )
    if fixed is not None:
        numerical[fixed.columns] = False
    return active & numerical[None, :]


def local_search(
    acquisition: Acquisition,
    space: ConditionalSpace,
    X0: np.ndarray,
    active: np.ndarray,
    max_iter: int,
    fixed: FixedValues | None = None,
    radius: float = 1.0,
    length_scales: np.ndarray | None = None,
) -> np.ndarray:
    """Jointly improve the rows of ``X0`` by L-BFGS-B on their free numerical columns (those
    of ``fixed`` excepted), each within ``radius`` of its start (and inside the unit cube).

    The rows are independent, so maximising the sum of their acquisition values maximises each.
    With the model's ``length_scales`` (per column), L-BFGS-B works on ``x / length_scale``
    and stops once no gradient component there exceeds :data:`LOCAL_SEARCH_GTOL` (as Optuna's
    GPSampler does): the acquisition is then about as curved along every column, where in the
    unit cube a short length scale beside a long one (an inert column) made L-BFGS-B crawl.
    """
    free = _free_columns(space, active, fixed)
    if not free.any():
        return X0
    base = torch.as_tensor(X0)
    active_t = torch.as_tensor(active)
    free_t = torch.as_tensor(free)
    scale = np.broadcast_to(_step_scales(length_scales, X0.shape[1]), X0.shape)[free]

    def negative_sum(scaled: np.ndarray) -> tuple[float, np.ndarray]:
        v = torch.tensor(scaled * scale, requires_grad=True)
        X = base.clone()
        X[free_t] = v
        values = acquisition(X, active_t)
        total = -values.clamp_min(-1e4).sum()
        if not total.requires_grad:  # e.g. a path EI that no free column moves
            return total.item(), np.zeros_like(scaled)
        total.backward()
        grad = v.grad.numpy() * scale  # type: ignore[union-attr]
        if not np.isfinite(total.item()) or not np.all(np.isfinite(grad)):
            return 1e10, np.zeros_like(scaled)
        return total.item(), grad

    x0 = X0[free]
    low, high = np.maximum(0.0, x0 - radius) / scale, np.minimum(1.0, x0 + radius) / scale
    result = scipy.optimize.minimize(
        negative_sum,
        x0 / scale,
        jac=True,
        method="L-BFGS-B",
        bounds=list(zip(low, high, strict=True)),
        options={
            "maxiter": max_iter,
            "gtol": LOCAL_SEARCH_GTOL if length_scales is not None else UNIT_CUBE_GTOL,
        },
    )
    X = X0.copy()
    X[free] = np.clip(result.x * scale, 0.0, 1.0)
    return X


def _step_scales(length_scales: np.ndarray | None, n_columns: int) -> np.ndarray:
    """The model's length scales as the local search's units, kept within
    :data:`STEP_SCALE_RANGE` (ones where there are none or one is not a positive number)."""
    if length_scales is None:
        return np.ones(n_columns)
    scales = np.asarray(length_scales, dtype=float)
    if scales.shape != (n_columns,):
        raise ValueError(
            f"length_scales has shape {scales.shape}; expected one per column, ({n_columns},)."
        )
    scales = np.where(np.isfinite(scales) & (scales > 0), scales, 1.0)
    return np.clip(scales, *STEP_SCALE_RANGE)


def _sweep_categoricals(
    acquisition: Acquisition,
    space: ConditionalSpace,
    x: np.ndarray,
    active: np.ndarray,
    value: float,
    fixed: FixedValues | None = None,
) -> tuple[np.ndarray, float]:
    branching = {n.key for n in space.branching_nodes()}
    held = set() if fixed is None else set(fixed.columns.tolist())
    for j, node in enumerate(space.nodes):
        if not (node.is_categorical and active[j]) or node.key in branching or j in held:
            continue
        options = np.repeat(x[None, :], int(space.features.n_categories[j]), axis=0)
        options[:, j] = np.arange(len(options))
        values = _evaluate(acquisition, options, np.repeat(active[None, :], len(options), 0))
        best = int(np.argmax(values))
        if values[best] > value:
            x, value = options[best], float(values[best])
    return x, value


def _scored_candidates(
    acquisition: Acquisition,
    space: ConditionalSpace,
    rng: np.random.Generator,
    settings: OptimizerSettings,
    X_start: np.ndarray | None,
    only: list[Path] | None,
    fixed: FixedValues | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    X, active = _candidates(space, rng, settings, X_start, only)
    X = round_to_grid(space, X)
    X[~active] = 0.0
    if fixed is not None:
        X, active = fixed.keep(X, active)
    return X, active, _evaluate(acquisition, X, active)


def _allowed_paths(
    space: ConditionalSpace, only: list[Path] | None, fixed: FixedValues | None
) -> list[Path] | None:
    """``only`` (default: every path) less the paths ``fixed`` rules out; ``None`` (no
    restriction) where the paths are too many to list or none is left."""
    if fixed is None:
        return only
    paths = only or space.paths()
    allowed = [p for p in paths or [] if fixed.allows(p)]
    return allowed or only


def select_path(
    path_acquisition: Acquisition,
    space: ConditionalSpace,
    paths: list[Path],
    rng: np.random.Generator,
    settings: OptimizerSettings = OptimizerSettings(),
    X_start: np.ndarray | None = None,
    fixed: FixedValues | None = None,
) -> Path:
    """The path whose best configuration maximises ``path_acquisition`` (Jenatton et al. 2017,
    sec. 3.2, first step: the path EI of eq. 6, optimised jointly over the path and its shared
    parameters). ``n_candidates`` quasi-uniform candidates on each path, then one L-BFGS-B
    local search from the best candidate of every path. ``fixed``: values the candidates keep
    (the caller passes only the paths they allow); a path none of whose candidates keeps them
    is not chosen. The local search works in the unit cube: the path EI moves with the inner
    nodes' features of the shared parameters, not at the leaf GPs' length scales."""
    best_X, best_active, best_values, best_paths = [], [], [], []
    for path in paths:
        X, active, values = _scored_candidates(
            path_acquisition, space, rng, settings, X_start, [path], fixed
        )
        if not len(values):
            continue
        i = int(np.argmax(values))
        best_X.append(X[i])
        best_active.append(active[i])
        best_values.append(values[i])
        best_paths.append(path)
    if not best_paths:
        return paths[0]
    X0, active0 = np.array(best_X), np.array(best_active)
    improved = local_search(
        path_acquisition,
        space,
        X0,
        active0,
        settings.local_search_max_iter,
        fixed,
        settings.local_search_radius,
    )
    improved = round_to_grid(space, improved)
    values = np.maximum(_evaluate(path_acquisition, improved, active0), best_values)
    return best_paths[int(np.argmax(values))]


def maximize_acquisition(
    acquisition: Acquisition,
    space: ConditionalSpace,
    rng: np.random.Generator,
    settings: OptimizerSettings = OptimizerSettings(),
    X_start: np.ndarray | None = None,
    only: list[Path] | None = None,
    fixed: FixedValues | None = None,
    length_scales: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Candidates ``(X, active, values)`` sorted by acquisition value, best first.

    ``only``: search these paths alone (default: every path of ``space``). ``fixed``: values
    every candidate keeps (parameters set outside the model); the search runs over the others,
    on the paths they allow. No candidate at all if none can keep them. ``length_scales``: the
    model's, the local search's units (:func:`local_search`).
    """
    only = _allowed_paths(space, only, fixed)
    X, active, values = _scored_candidates(acquisition, space, rng, settings, X_start, only, fixed)
    if not len(X):
        return X, active, values
    starts = _local_search_starts(space, X, active, values, settings.n_local_search)
    improved = local_search(
        acquisition,
        space,
        X[starts],
        active[starts],
        settings.local_search_max_iter,
        fixed,
        settings.local_search_radius,
        length_scales,
    )
    improved = round_to_grid(space, improved)
    improved_values = _evaluate(acquisition, improved, active[starts])

    X = np.concatenate([improved, X])
    active = np.concatenate([active[starts], active])
    values = np.concatenate([improved_values, values])
    order = np.argsort(-values, kind="stable")
    X, active, values = X[order], active[order], values[order]
    X[0], values[0] = _sweep_categoricals(acquisition, space, X[0], active[0], values[0], fixed)
    return X, active, values
