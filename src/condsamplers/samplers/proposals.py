"""Whole proposals recorded on trials, so that parallel workers see each other's pending points.

A RUNNING trial only carries the parameters suggested so far; a model-based step therefore
records the whole configuration it proposed as the trial system attribute
:data:`PROPOSAL_ATTR`. Other workers (threads of ``study.optimize(n_jobs=...)``, processes on
one storage, open ask-and-tell trials) read it back: as a pending point of the acquisition
(:func:`encode_pending`) and as a configuration not to propose again (:func:`claims_of`,
:func:`rival_trial`). See docs/batch.md.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from optuna.distributions import (
    BaseDistribution,
    FloatDistribution,
    distribution_to_json,
    json_to_distribution,
)
from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

from condsamplers.samplers.optuna_storage import set_trial_system_attr
from condsamplers.space import ConditionalSpace, to_internal, value_key

#: Trial system attribute holding the whole configuration a model-based step proposed for the
#: trial: ``{"format": 1, "params": {name: external value}, "distributions": {name:
#: optuna.distributions.distribution_to_json(...)}, "given": [name, ...]}`` (``None`` once
#: withdrawn; ``given``, the parameters the step was conditioned on, may be missing).
PROPOSAL_ATTR = "condsamplers:proposal"
PROPOSAL_FORMAT = 1


@dataclasses.dataclass(frozen=True)
class Configuration:
    """A whole configuration: external values and the distribution of each parameter.

    ``repeats_pending``: knowingly the configuration of a RUNNING trial (an exhausted space).
    ``given``: names of the parameters whose values were given to the step that proposed it
    (set outside the model: enqueued, fixed, or already suggested in the trial).
    """

    params: dict[str, Any]
    distributions: dict[str, BaseDistribution]
    repeats_pending: bool = False
    given: frozenset[str] = frozenset()

    def restricted_to(self, search_space: dict[str, BaseDistribution]) -> Configuration:
        """The parameters Optuna will take from this configuration in a trial whose relative
        search space is ``search_space``: those it holds, with a value its distribution there
        accepts (that space may have been inferred from fewer trials, in another thread)."""
        kept = {
            name: value
            for name, value in self.params.items()
            if name in search_space and to_internal(search_space[name], value) is not None
        }
        distributions = {name: self.distributions[name] for name in kept}
        return dataclasses.replace(self, params=kept, distributions=distributions)


def params_key(params: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """A hashable key of a configuration (its parameters sorted by name); two configurations
    are the same iff their keys are equal (NaN values included)."""
    return tuple(sorted((name, value_key(value)) for name, value in params.items()))


def same_value(a: Any, b: Any) -> bool:
    """Whether two parameter values are the same choice (``nan`` is ``nan``)."""
    return bool(value_key(a) == value_key(b))


def decode_configuration(
    space: ConditionalSpace, x: np.ndarray, active: np.ndarray
) -> Configuration:
    """An encoded configuration with the distributions of its active nodes (variants of one
    name by the active one)."""
    params = space.decode(x, active)
    distributions = {
        space.nodes[j].name: space.nodes[j].distribution for j in np.flatnonzero(active)
    }
    return Configuration(params, distributions)


def record_proposal(study: Study, trial: FrozenTrial, proposal: Configuration) -> None:
    """Store ``proposal`` on the trial (:data:`PROPOSAL_ATTR`) for the other workers."""
    value = {
        "format": PROPOSAL_FORMAT,
        "params": dict(proposal.params),
        "distributions": {
            name: distribution_to_json(d) for name, d in proposal.distributions.items()
        },
        "given": sorted(proposal.given),
    }
    set_trial_system_attr(study, trial, PROPOSAL_ATTR, value)


def withdraw_proposal(study: Study, trial: FrozenTrial) -> None:
    """Mark the trial as having no model-based proposal (storages cannot delete attributes)."""
    set_trial_system_attr(study, trial, PROPOSAL_ATTR, None)


def read_proposal(trial: FrozenTrial) -> Configuration | None:
    """The proposal recorded on ``trial``, or ``None`` (none, withdrawn, or unreadable).

    A parameter whose distribution cannot be read, or whose value its distribution does not
    contain, is dropped: a garbled record must never break another worker's suggestion.
    """
    raw = trial.system_attrs.get(PROPOSAL_ATTR)
    if not isinstance(raw, dict) or raw.get("format") != PROPOSAL_FORMAT:
        return None
    params, distributions = raw.get("params"), raw.get("distributions")
    if not isinstance(params, dict) or not isinstance(distributions, dict):
        return None
    given = raw.get("given")
    names = frozenset(n for n in given if isinstance(n, str)) if isinstance(given, list) else None
    configuration = Configuration({}, {}, given=names or frozenset())
    for name, value in params.items():
        distribution = _read_distribution(distributions.get(name))
        if isinstance(name, str) and distribution is not None and fits(distribution, value):
            configuration.params[name] = value
            configuration.distributions[name] = distribution
    return configuration if configuration.params else None


def _read_distribution(text: Any) -> BaseDistribution | None:
    try:
        return json_to_distribution(text)
    except Exception:  # any garbage (bad JSON, unknown class, bad bounds) means "unreadable"
        return None


def fits(distribution: BaseDistribution, value: Any) -> bool:
    """Whether ``distribution`` holds ``value`` (``False`` for a value it cannot read)."""
    try:
        return to_internal(distribution, value) is not None
    except Exception:  # an odd value (say, a huge int or a nested list) does not fit
        return False


def claims_of(trial: FrozenTrial) -> list[dict[str, Any]]:
    """Configurations ``trial`` stands for: its params, and for a RUNNING trial also its
    recorded proposal overlaid by the params it has suggested so far (which win)."""
    claims = [dict(trial.params)] if trial.params else []
    if trial.state == TrialState.RUNNING:
        recorded = read_proposal(trial)
        if recorded is not None:
            claims.append({**recorded.params, **trial.params})
    return claims


def rival_trial(study: Study, trial: FrozenTrial, proposal: Configuration) -> int | None:
    """Number of another COMPLETE or RUNNING trial that ``proposal`` repeats or nearly repeats
    (re-read from the storage; :func:`repeats_finished`, :func:`repeats_claims`,
    :func:`near_configuration`), or ``None``."""
    params = proposal.params
    for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.RUNNING)):
        if t.number == trial.number:
            continue
        if t.state == TrialState.RUNNING:
            claims = claims_of(t)
            if repeats_claims(params, claims) or _near_any(proposal, claims):
                return t.number
        elif repeats_finished(params, t.params) or _near_any(proposal, [t.params]):
            return t.number
    return None


def _near_any(candidate: Configuration, others: list[dict[str, Any]]) -> bool:
    """Whether ``candidate`` is one of ``others`` up to its floats' resolution."""
    return any(near_configuration(candidate, other) for other in others)


def repeats_finished(params: Mapping[str, Any], trial_params: Mapping[str, Any]) -> bool:
    """Whether evaluating ``params`` repeats a finished trial: ``params`` gives each of the
    trial's parameters its value, even if it also sets parameters the trial did not ask for
    (a define-by-run objective asks the same ones again and never reads the others; a
    parameter asked only beyond a float threshold, or one the objective no longer asks, is in
    every proposal, since the inferred tree keeps such an unexplained node at its root).
    A trial without parameters (its objective asked none) is repeated by no proposal."""
    return bool(trial_params) and _gives_each(params, trial_params)


def repeats_claims(params: Mapping[str, Any], claims: list[dict[str, Any]]) -> bool:
    """Whether evaluating ``params`` repeats a RUNNING trial with these ``claims``
    (:func:`claims_of`): one of them gives each parameter of ``params`` its value. A claim may
    hold more (a proposal made from an older tree, in another thread), which the model cannot
    tell apart."""
    return any(_gives_each(claim, params) for claim in claims)


def encode_pending(
    space: ConditionalSpace, trial: FrozenTrial
) -> tuple[np.ndarray, np.ndarray] | None:
    """A RUNNING trial as a pending point ``(x, active)`` of ``space``, or ``None``.

    Its recorded proposal (:func:`read_proposal`) overlaid by the params it has suggested so
    far, which win; parameters the current space cannot encode (unknown names, values outside
    the current distributions) are skipped, and proposed parameters that the tree makes inactive
    under the trial's actual branch values are dropped. A trial without a recorded proposal (a
    startup trial, another sampler's) is encoded from its params alone.
    """
    x_t, a_t = _encode_each(space, trial.params, trial.distributions)
    recorded = read_proposal(trial)
    if recorded is not None:
        extra = {k: v for k, v in recorded.params.items() if k not in trial.params}
        x_p, a_p = _encode_each(space, extra, recorded.distributions)
        a_p &= ~a_t
        x = np.where(a_t, x_t, x_p)
        active = a_t | _consistent(space, x, a_t | a_p, a_p)
    else:
        x, active = x_t, a_t
    if not active.any():
        return None
    return np.where(active, x, 0.0), active


def _encode_each(
    space: ConditionalSpace, params: dict[str, Any], distributions: dict[str, BaseDistribution]
) -> tuple[np.ndarray, np.ndarray]:
    """Encode parameter by parameter, skipping those the space cannot encode."""
    x = np.zeros(space.n_features)
    active = np.zeros(space.n_features, dtype=bool)
    for name, value in params.items():
        one = {name: distributions[name]} if name in distributions else {}
        try:
            encoded = space.encode_trial({name: value}, one)
        except Exception:  # an odd value must not break the suggestion
            encoded = None
        if encoded is not None:
            x = np.where(encoded[1], encoded[0], x)
            active |= encoded[1]
    return x, active


def _consistent(
    space: ConditionalSpace, x: np.ndarray, active: np.ndarray, optional: np.ndarray
) -> np.ndarray:
    """``optional`` columns of ``active`` whose parent is active with an activating value
    (nodes in topological order, so a dropped parent drops its descendants)."""
    active = active.copy()
    for j, node in enumerate(space.nodes):
        if not optional[j] or node.condition is None:
            continue
        p = space.index[node.condition.parent]
        parent_value = space.nodes[p].from_unit(x[p : p + 1])
        active[j] = bool(active[p] and node.condition.holds(parent_value)[0])
    return active & optional


#: Floats closer than this share of their range (of its logarithm for a log distribution)
#: count as the same value when a proposal is compared with a pending configuration.
NEAR_SHARE = 1e-6


def near_configuration(
    candidate: Configuration, claim: Mapping[str, Any], share: float = NEAR_SHARE
) -> bool:
    """Whether ``candidate`` is ``claim`` up to the resolution of its floats: the same set of
    parameters, the same value of every categorical or integer one, and every float within
    ``share`` of its range. Evaluating both cannot teach the model anything the other does not
    (several workers' local searches ending at one optimum)."""
    if set(candidate.params) != set(claim):
        return False
    for name, value in candidate.params.items():
        other = claim[name]
        distribution = candidate.distributions.get(name)
        if not isinstance(distribution, FloatDistribution):
            if not same_value(value, other):
                return False
            continue
        try:
            low, high, x, y = distribution.low, distribution.high, float(value), float(other)
        except (TypeError, ValueError):
            return False
        if distribution.log:
            if min(low, x, y) <= 0.0:
                return False
            low, high, x, y = math.log(low), math.log(high), math.log(x), math.log(y)
        if abs(x - y) > share * max(high - low, 1e-300):
            return False
    return True


#: How many ranked candidates are tried before giving up on avoiding a duplicate.
MAX_DUPLICATE_SKIPS = 32


def first_new_configuration(
    space: ConditionalSpace,
    X: np.ndarray,
    active: np.ndarray,
    study: Study,
    trial: FrozenTrial,
) -> Configuration | None:
    """The best of the first 32 distinct candidate configurations that no COMPLETE (or
    PRUNED) trial has and no RUNNING trial has or was proposed (its recorded proposal), nor
    nearly has (:func:`near_configuration`: every float within 1e-6 of its range; several
    workers' local searches ending at one optimum).

    What repeats a finished or a RUNNING trial: :func:`repeats_finished`,
    :func:`repeats_claims`.

    Candidates are counted after decoding, as configurations: several local searches may
    end at the same point (a corner of the box), and 32 copies of a pending configuration
    must not pass for an exhausted space. If each of the 32 repeats a trial, the space is
    exhausted (a small discrete space, the rest of it pending): the best one that repeats
    only a RUNNING trial is returned, marked ``repeats_pending``, since a random one would
    repeat something too. If each repeats a COMPLETE trial, ``None``: the independent
    sampler takes the trial.
    """
    others = [
        t
        for t in study.get_trials(
            deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED, TrialState.RUNNING)
        )
        if t.number != trial.number
    ]
    finished = [t.params for t in others if t.state != TrialState.RUNNING]
    pending_claims = [
        claim for t in others if t.state == TrialState.RUNNING for claim in claims_of(t)
    ]
    repeat = None
    seen: set[tuple] = set()
    for x, a in zip(X, active, strict=True):
        configuration = decode_configuration(space, x, a)
        key = params_key(configuration.params)
        if key in seen:
            continue
        seen.add(key)
        if len(seen) > MAX_DUPLICATE_SKIPS:
            break
        params = configuration.params
        if any(repeats_finished(params, done) for done in finished) or _near_any(
            configuration, finished
        ):
            continue
        if not repeats_claims(params, pending_claims) and not _near_any(
            configuration, pending_claims
        ):
            return configuration
        repeat = repeat or dataclasses.replace(configuration, repeats_pending=True)
    return repeat


def _gives_each(holder: Mapping[str, Any], params: Mapping[str, Any]) -> bool:
    """Whether ``holder`` gives every parameter of ``params`` its value."""
    return all(
        name in holder and same_value(holder[name], value) for name, value in params.items()
    )
