"""The sampler ``CondBayesSearchCV`` builds when it is given none (see docs/search_cv.md):
``TreeGPSampler`` with the options below, seeded from the search's ``random_state``, and with
the log of the gap to the best score possible when that score is known."""

from __future__ import annotations

import numbers
from typing import Any

from sklearn.utils import check_random_state

from condsamplers.samplers.tree import TreeGPSampler

__all__ = [
    "DEFAULT_SAMPLER_OPTIONS",
    "MANY_DICTS",
    "MANY_DICTS_LOCAL_SEARCH_RADIUS",
    "MANY_DICTS_PATIENCE",
    "default_sampler",
    "default_sampler_options",
    "sampler_seed",
]

#: Settings of the default ``TreeGPSampler``. ``acquisition``: model selection needs branches
#: valued by their best configuration, not their mean level. ``signal_variance``: one per branch,
#: since the classifiers of a model selection differ in how much their scores vary. ``independent``
#: and ``offsets``: a search space's tree has one level (the branch choice, then each branch's own
#: parameters), so the inner-node weights would only give each branch a level of its own, which a
#: branch's few poor random trials then fix for the whole branch; instead the branches' GPs revert
#: to one common constant.
#: These are the options for at most :data:`MANY_DICTS` dicts; above it,
#: :func:`default_sampler_options` adds the level per dict and the path patience.
#: ``output_warping``: the scores are already fitted as the log of their gap to the best score
#: possible (``objective_bound``), which is what this default was measured with.
DEFAULT_SAMPLER_OPTIONS: dict[str, Any] = {
    "acquisition": "joint",
    "signal_variance": "leaf",
    "independent": True,
    "offsets": "shared",
    "output_warping": "none",
}

#: Above this many dicts (the default sampler's random first candidates, ``n_startup_trials``)
#: the default gives each dict a level of its own (``independent=False``): most dicts then hold
#: none or one trial after the startup, and a dict whose one trial sits far below the common
#: constant would otherwise get a large signal variance and draw the candidates to itself.
MANY_DICTS = 10
#: Above :data:`MANY_DICTS` dicts, a dict that has had this many candidates since the best
#: score last improved sits out the model's candidates until the best score improves again
#: (``path_patience``, :mod:`condsamplers.path_patience`), so that a search does not spend
#: its candidates on one dict's plateau.
MANY_DICTS_PATIENCE = 5
#: Above :data:`MANY_DICTS` dicts, the local search of the acquisition's optimiser moves each
#: start at most this far (per parameter, in the unit cube; ``local_search_radius``), so that
#: it refines its quasi-random starts instead of running to the edges of the space.
MANY_DICTS_LOCAL_SEARCH_RADIUS = 0.1


def default_sampler_options(n_dicts: int) -> dict[str, Any]:
    """The default ``TreeGPSampler``'s options for a search space of ``n_dicts`` dicts:
    :data:`DEFAULT_SAMPLER_OPTIONS`, and when ``n_dicts > MANY_DICTS``, ``independent=False``
    (the root's random linear weights ``z(x)^T c`` of the tree GP, Jenatton et al. 2017, eq. 1,
    on the one-hot of the dict index: a level per dict),
    ``path_patience=MANY_DICTS_PATIENCE`` (:mod:`condsamplers.path_patience`, eq. 1) and
    ``local_search_radius=MANY_DICTS_LOCAL_SEARCH_RADIUS``."""
    if n_dicts <= MANY_DICTS:
        return dict(DEFAULT_SAMPLER_OPTIONS)
    return {
        **DEFAULT_SAMPLER_OPTIONS,
        "independent": False,
        "path_patience": MANY_DICTS_PATIENCE,
        "local_search_radius": MANY_DICTS_LOCAL_SEARCH_RADIUS,
    }


def sampler_seed(random_state: Any) -> int | None:
    """The sampler's seed from a scikit-learn ``random_state``: ``None`` stays ``None``, an int
    is the seed, a ``RandomState`` (or anything ``check_random_state`` takes) draws one."""
    if random_state is None:
        return None
    if isinstance(random_state, numbers.Integral):
        return int(random_state)
    return int(check_random_state(random_state).randint(2**31 - 1))


def default_sampler(
    seed: int | None, n_dicts: int, objective_bound: float | None
) -> TreeGPSampler:
    """``TreeGPSampler(seed=seed, objective_bound=objective_bound,
    **default_sampler_options(n_dicts))``."""
    options = default_sampler_options(n_dicts)
    return TreeGPSampler(seed=seed, objective_bound=objective_bound, **options)
