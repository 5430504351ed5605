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

**Estimators**: the pick-freeze Monte Carlo of Saltelli et al. (2010, Table 2) and Jansen (1999),
in :mod:`condsamplers.importance_sobol` (with the map from latent inputs to configurations).
**Results and curves**: :class:`SobolResult` and :class:`EffectCurve`, in
:mod:`condsamplers.importance_result`. This module: from a study to the indices
(:func:`sobol_indices`) and the Optuna evaluator (:class:`SobolImportanceEvaluator`).

**Limitation.** A parameter whose activity the tree does not explain (``ParamNode.unexplained``)
has no condition, so the latent model takes it as always active.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from optuna.importance import BaseImportanceEvaluator
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, TrialState

from condsamplers import kernels
from condsamplers.importance_result import (
    CURVE_POINTS,
    EffectCurve,
    SobolResult,
    _unknown_message,
)
from condsamplers.importance_sobol import (
    _latent_design,
    _normalise,
    _posterior_mean,
    _sobol_from_function,
    latent_to_configurations,
)
from condsamplers.models.gp import ExactGP
from condsamplers.models.threads import single_threaded
from condsamplers.samplers.observations import finite_minimisation_values
from condsamplers.space import ConditionalSpace, infer_space
from condsamplers.validation import check_int

__all__ = [
    "CURVE_POINTS",
    "EffectCurve",
    "SobolImportanceEvaluator",
    "SobolResult",
    "latent_to_configurations",
    "sobol_indices",
]

#: Rows of the latent sample averaged over by the effect curves of the plots.
CURVE_SAMPLES = 1024

Target = Callable[[FrozenTrial], float]


# ---------------------------------------------------------------------------------------------
# From a study
# ---------------------------------------------------------------------------------------------


@single_threaded()
def sobol_indices(
    study: Study,
    *,
    kernel: str = "bn",
    n_samples: int = 4096,
    seed: int | None = None,
    params: Sequence[str] | None = None,
    target: Target | None = None,
    n_restarts: int = 2,
    interactions: bool = True,
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
        interactions: estimate the ``p(p-1)/2`` two-factor interactions too (``False``: main
            and total effects only, ``(2 + p) N`` posterior means; ``result.interactions`` is
            then empty).

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
    estimates = _sobol_from_function(
        response, groups, space.n_features, n_samples, rng, pairs=interactions
    )
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
    y = finite_minimisation_values(raw[keep], direction) if keep.any() else None
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
        n_samples: rows of each Monte-Carlo latent matrix (2048: about 0.5 s on a 30-trial,
            22-parameter study; the indices move by about 0.003 from 2048 to 16384 rows).
        seed: seed of the latent design and the GP fit (deterministic results).
        n_restarts: random restarts of the GP hyperparameter fit.
    """

    def __init__(
        self,
        *,
        kernel: str = "bn",
        n_samples: int = 2048,
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
            interactions=False,  # only the main effects are returned
        )
        ranked = sorted(result.main_effects.items(), key=lambda item: -item[1])
        return dict(ranked)
