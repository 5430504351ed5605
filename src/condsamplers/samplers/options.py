"""The arguments every condsamplers sampler shares, written once.

:class:`~condsamplers.samplers.base.ConditionalSampler` takes them as explicit keyword
arguments (and documents them); a concrete sampler takes its own model options explicitly and
the shared ones as ``**options: Unpack[SamplerOptions]``, which it passes on unchanged. A new
shared option is then added in two places only: here and in the base class. Type checkers and
editors read the keywords from :class:`SamplerOptions`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypedDict

from optuna.samplers import BaseSampler
from optuna.trial import FrozenTrial


class SamplerOptions(TypedDict, total=False):
    """The keyword arguments of :class:`~condsamplers.samplers.base.ConditionalSampler`
    (see its docstring for each); every sampler accepts them."""

    seed: int | None
    n_startup_trials: int
    independent_sampler: BaseSampler | None
    n_candidates: int
    n_local_search: int
    n_restarts: int
    n_fantasies: int
    constraints_func: Callable[[FrozenTrial], Sequence[float]] | None
    objective_bound: float | None
    output_warping: str
    max_model_trials: int | None
    intermediate_values: bool
    cost_aware: bool
    path_patience: int | None
    local_search_radius: float
