"""One Bayesian-optimisation step, free of Optuna: data -> model -> acquisition -> optimizer.

The Optuna samplers and the scikit-learn search estimator both call :func:`propose`; a new
surrogate only needs a model factory.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from condsamplers.acquisition import (
    Fantasy,
    PathModel,
    believed_fantasy,
    make_log_mc_ei,
    make_log_mc_path_ei,
    sample_fantasies,
)
from condsamplers.models.base import Surrogate
from condsamplers.optimize import OptimizerSettings, maximize_acquisition, select_path
from condsamplers.space import ConditionalSpace, Path

ModelFactory = Callable[[int], Surrogate]

#: Best observed configurations added as starting candidates of the acquisition optimizer.
N_INCUMBENT_STARTS = 3


@dataclasses.dataclass
class Observations:
    """Encoded data of one step. ``y`` is to be minimised and finite.

    ``X_pending`` / ``active_pending`` are configurations under evaluation (running trials).
    """

    X: np.ndarray
    active: np.ndarray
    y: np.ndarray
    X_pending: np.ndarray
    active_pending: np.ndarray

    def __post_init__(self) -> None:
        if len(self.X) == 0:
            raise ValueError("Observations need at least one evaluated configuration.")
        if not np.all(np.isfinite(self.y)):
            raise ValueError("Observations.y must be finite; clip or drop NaN/inf values first.")


@dataclasses.dataclass
class Proposal:
    """Ranked candidates of one step (best first) and the fitted model."""

    X: np.ndarray
    active: np.ndarray
    acquisition_values: np.ndarray
    model: Surrogate
    #: the path chosen by the two-step acquisition (``None``: every path was searched).
    path: Path | None = None


def propose(
    space: ConditionalSpace,
    data: Observations,
    model: Surrogate,
    rng: np.random.Generator,
    settings: OptimizerSettings,
) -> Proposal:
    """Fit ``model``, account for pending points, and maximise log-EI over ``space``.

    The incumbent of EI is the best posterior mean at the observed points ("plug-in" EI,
    Picheny et al. 2013): with noisy observations the best observed value is a lucky draw that
    the model cannot reach, and EI would then chase variance at the edges of the space. For a
    noise-free objective the posterior mean interpolates, so the two incumbents coincide.

    Pending points (``data.X_pending``) enter as the kriging believer
    (``settings.n_fantasies == 0``) or as Monte-Carlo EI over ``settings.n_fantasies`` joint
    fantasies of their outcomes (Snoek et al. 2012 sec. 3.3, DNGO sec. 3.3), drawn from ``rng``.

    With ``settings.two_step`` and a model with a path posterior, the search is Jenatton et
    al.'s two-step EI (sec. 3.2): the path maximising the path EI (eq. 6) first, then EI
    (eq. 5) on that path alone; both are averaged over the fantasies.
    """
    model.fit(data.X, data.active, data.y, space.features)
    incumbent = float(model.predict(data.X, data.active)[0].min())
    fantasies = pending_fantasies(model, data, incumbent, settings.n_fantasies, rng)
    acquisition = make_log_mc_ei(fantasies)
    incumbents = data.X[np.argsort(data.y, kind="stable")[:N_INCUMBENT_STARTS]]
    path = _two_step_path(space, fantasies, rng, settings, incumbents)
    X, active, values = maximize_acquisition(
        acquisition, space, rng, settings, incumbents, only=None if path is None else [path]
    )
    return Proposal(X, active, values, model, path)


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
    fantasies: list[Fantasy],
    rng: np.random.Generator,
    settings: OptimizerSettings,
    incumbents: np.ndarray,
) -> Path | None:
    """The path of the first step of the two-step EI, or ``None`` to search every path."""
    with_paths = all(
        isinstance(f.model, PathModel) and f.model.has_path_posterior for f in fantasies
    )
    if not (settings.two_step and with_paths):
        return None
    paths = space.paths()
    if not paths or len(paths) == 1:
        return None
    path_acquisition = make_log_mc_path_ei(fantasies)
    return select_path(path_acquisition, space, paths, rng, settings, incumbents)
