"""The search space of ``CondBayesSearchCV``: validation and translation of scikit-learn style
``search_spaces`` (a dict, or a list of dicts, one per *branch*, of lists, scipy.stats frozen
distributions, Optuna distributions or ``(low, high, prior)`` ranges) into Optuna
distributions, and the sampling of a configuration from an Optuna trial (define-by-run: the
branch parameter ``__branch__``, then that branch's parameters under names prefixed by the
branch).
"""

from __future__ import annotations

import dataclasses
import difflib
import itertools
import math
import numbers
import warnings
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np
import scipy.stats
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.study import Study
from optuna.trial import Trial, TrialState
from sklearn.base import clone

from condsamplers.samplers.proposals import params_key

__all__ = ["BRANCH_PARAM", "PRIORS", "SearchSpaceError", "translate_search_spaces"]

#: Optuna name of the branch choice (an index into the list of dicts), present only when the
#: search space has several branches. scikit-learn parameter names never start with ``__``.
BRANCH_PARAM = "__branch__"
#: The priors of a ``(low, high, prior)`` range tuple.
PRIORS = ("uniform", "log-uniform")
#: At most this many combinations of estimator choices are checked for parameter names.
_MAX_NAME_CHECKS = 256
#: At most this many configurations of a finite space are enumerated to find an unused one.
_MAX_ENUMERATION = 100_000


# -- the search space ------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class _Dimension:
    """One searched parameter of one branch."""

    name: str  # the scikit-learn parameter name, e.g. "clf__C"
    key: str  # the Optuna parameter name, e.g. "1:clf__C"
    distribution: BaseDistribution
    choices: tuple[Any, ...] = ()  # categorical: the user's objects, aligned with the choices

    def suggest(self, trial: Trial) -> Any:
        d = self.distribution
        if isinstance(d, CategoricalDistribution):
            key = trial.suggest_categorical(self.key, d.choices)
            return self.choices[d.choices.index(key)]
        if isinstance(d, FloatDistribution):
            return trial.suggest_float(self.key, d.low, d.high, log=d.log, step=d.step)
        assert isinstance(d, IntDistribution)
        return trial.suggest_int(self.key, d.low, d.high, log=d.log, step=d.step)

    def values(self) -> list[Any] | None:
        """The Optuna values of a finite dimension; ``None`` for a continuous one."""
        d = self.distribution
        if isinstance(d, CategoricalDistribution):
            return list(d.choices)
        if isinstance(d, IntDistribution):
            return list(range(d.low, d.high + 1, d.step))
        if d.step is None:
            return None
        n = int(round((d.high - d.low) / d.step)) + 1
        return [d.low + k * d.step for k in range(n)]


@dataclasses.dataclass(frozen=True)
class _Branch:
    """One dict of the search space: fixed values (single-value lists) and searched ones."""

    fixed: dict[str, Any]
    dimensions: tuple[_Dimension, ...]

    def size(self) -> float:
        return math.prod(
            len(v) if (v := d.values()) is not None else math.inf for d in self.dimensions
        )


@dataclasses.dataclass(frozen=True)
class _SearchSpace:
    """The translated search space: a define-by-run function and what the search needs."""

    branches: tuple[_Branch, ...]

    def values_of(self, name: str) -> list[Any]:
        """Every value (the user's objects) the scikit-learn parameter ``name`` may take."""
        values = []
        for branch in self.branches:
            if name in branch.fixed:
                values.append(branch.fixed[name])
            values += [v for d in branch.dimensions if d.name == name for v in d.choices]
        return values

    def names(self) -> set[str]:
        """Every scikit-learn parameter the space sets, fixed or searched, in any branch."""
        return {
            name
            for branch in self.branches
            for name in (*branch.fixed, *(d.name for d in branch.dimensions))
        }

    def suggest(self, trial: Trial) -> dict[str, Any]:
        """Suggest a whole configuration on ``trial``; returns the scikit-learn parameters."""
        index = 0
        if len(self.branches) > 1:
            index = trial.suggest_categorical(BRANCH_PARAM, list(range(len(self.branches))))
        branch = self.branches[index]
        params = dict(branch.fixed)
        for dimension in branch.dimensions:
            params[dimension.name] = dimension.suggest(trial)
        return dict(sorted(params.items()))

    def size(self) -> float:
        """Number of distinct configurations (``inf`` with a continuous parameter)."""
        return sum(branch.size() for branch in self.branches)

    def configurations(self) -> Iterator[dict[str, Any]]:
        """Every configuration of a finite space, as Optuna parameters."""
        for index, branch in enumerate(self.branches):
            head = {BRANCH_PARAM: index} if len(self.branches) > 1 else {}
            keys = [d.key for d in branch.dimensions]
            grids = [d.values() for d in branch.dimensions]
            if any(grid is None for grid in grids):
                continue
            for combination in itertools.product(*grids):
                yield {**head, **dict(zip(keys, combination, strict=True))}


def _is_estimator(value: Any) -> bool:
    return hasattr(value, "get_params") and not isinstance(value, type)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _primitive(value: Any) -> Any:
    """A numpy scalar as the Python value Optuna stores (other values unchanged)."""
    return value.item() if isinstance(value, np.generic) else value


def _label(value: Any) -> str:
    if _is_estimator(value):
        return type(value).__name__
    return value if isinstance(value, str) else repr(value)


class SearchSpaceError(ValueError):
    """A bad ``search_spaces`` of :class:`~condsamplers.sklearn.CondBayesSearchCV` (a
    ``ValueError``); the message names the parameter and the fix."""


def translate_search_spaces(search_spaces: Any, estimator: Any) -> _SearchSpace:
    """Validate ``search_spaces`` (``RandomizedSearchCV``'s ``param_distributions`` format)
    against ``estimator`` and translate it into Optuna distributions; a ``ValueError`` names
    the offending parameter."""
    if isinstance(search_spaces, Mapping):
        dicts, where = [search_spaces], (lambda b: "")
    elif isinstance(search_spaces, (list, tuple)):
        dicts, where = list(search_spaces), (lambda b: f"[{b}]")
        if not dicts:
            raise SearchSpaceError(
                "CondBayesSearchCV: search_spaces is an empty list; give a dict of parameters "
                "or a list of such dicts (one per branch)."
            )
    else:
        raise SearchSpaceError(
            "CondBayesSearchCV: search_spaces must be a dict or a list of dicts (one per "
            f"branch); got {type(search_spaces).__name__}."
        )
    if not hasattr(estimator, "get_params"):
        raise SearchSpaceError(
            "CondBayesSearchCV: the estimator has no get_params(); the searched parameters are "
            "checked against it (a scikit-learn estimator)."
        )
    branches = []
    for b, space in enumerate(dicts):
        if not isinstance(space, Mapping):
            raise SearchSpaceError(
                f"CondBayesSearchCV: search_spaces{where(b)} must be a dict of parameters; "
                f"got {type(space).__name__}."
            )
        if not space:
            raise SearchSpaceError(
                f"CondBayesSearchCV: search_spaces{where(b)} is an empty branch; give it at "
                "least one parameter (a single-value list such as {'clf': [SVC()]} evaluates "
                "the estimator with that value)."
            )
        prefix = f"{b}:" if len(dicts) > 1 else ""
        fixed, dimensions = {}, []
        for name, value in space.items():
            if not isinstance(name, str):
                raise SearchSpaceError(
                    f"CondBayesSearchCV: search_spaces{where(b)} has the key {name!r}; "
                    "parameter names are strings such as 'clf__C'."
                )
            context = f"search_spaces{where(b)} parameter {name!r}"
            parsed = _parse_value(value, context)
            if isinstance(parsed, BaseDistribution):
                dimensions.append(_Dimension(name, prefix + name, parsed))
            elif len(parsed) == 1:
                fixed[name] = parsed[0]
            else:
                keys = _categorical_keys(parsed, context)
                dimensions.append(
                    _Dimension(name, prefix + name, CategoricalDistribution(keys), tuple(parsed))
                )
        branch = _Branch(fixed, tuple(dimensions))
        _check_names(estimator, branch, where(b))
        branches.append(branch)
    return _SearchSpace(tuple(branches))


def _parse_value(value: Any, context: str) -> BaseDistribution | list[Any]:
    """A range as an Optuna distribution, or the list of choices of a categorical."""
    if isinstance(value, (FloatDistribution, IntDistribution)):
        if value.low == value.high:
            return [value.low]
        return value
    if isinstance(value, CategoricalDistribution):
        return list(value.choices)
    if isinstance(value, tuple) and len(value) == 3 and value[2] in PRIORS:
        low, high = value[:2]
        if _is_number(low) and _is_number(high):
            return _range(low, high, value[2] == "log-uniform", context, value)
        if _is_number(low) or _is_number(high):
            raise SearchSpaceError(
                f"CondBayesSearchCV: {context} = {value!r} mixes types: a range is "
                "(low, high, 'uniform' | 'log-uniform') with numbers for low and high; a list "
                "of choices is written as a list."
            )
    if (
        isinstance(value, tuple)
        and len(value) == 3
        and all(_is_number(v) for v in value[:2])
        and isinstance(value[2], str)
    ):
        raise SearchSpaceError(
            f"CondBayesSearchCV: {context} = {value!r} has the unknown prior {value[2]!r}: a "
            "range is (low, high, 'uniform' | 'log-uniform'); write a list for three choices."
        )
    if isinstance(value, tuple) and len(value) == 2 and all(_is_number(v) for v in value):
        low, high = value
        raise SearchSpaceError(
            f"CondBayesSearchCV: {context} = {value!r} is ambiguous: write [{low!r}, {high!r}] "
            f"for these two values (scikit-learn's meaning), or ({low!r}, {high!r}, 'uniform') "
            f"/ ({low!r}, {high!r}, 'log-uniform') for the range between them."
        )
    if hasattr(value, "rvs"):
        return _scipy_range(value, context)
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise SearchSpaceError(
            f"CondBayesSearchCV: {context} = {value!r} is neither a list of values, a bounded "
            "scipy.stats distribution, an Optuna distribution nor a (low, high, 'uniform' | "
            "'log-uniform') range; a single value is written as a one-element list."
        )
    choices = list(value)
    if not choices:
        raise SearchSpaceError(f"CondBayesSearchCV: {context} is an empty list of values.")
    return choices


def _range(low: Any, high: Any, log: bool, context: str, spec: Any) -> BaseDistribution | list:
    integral = [isinstance(v, numbers.Integral) for v in (low, high)]
    if integral[0] != integral[1]:
        raise SearchSpaceError(
            f"CondBayesSearchCV: {context} = {spec!r} mixes an integer and a float bound: "
            f"write ({float(low)!r}, {float(high)!r}, ...) for a float range or integers on "
            "both sides for an integer range."
        )
    if not (np.isfinite(low) and np.isfinite(high)):
        raise SearchSpaceError(f"CondBayesSearchCV: {context} = {spec!r} needs finite bounds.")
    if low > high:
        raise SearchSpaceError(
            f"CondBayesSearchCV: {context} = {spec!r} has low > high ({low!r} > {high!r})."
        )
    if log and low <= 0:
        raise SearchSpaceError(
            f"CondBayesSearchCV: {context} = {spec!r} is log-uniform, so low must be > 0 "
            f"(got {low!r})."
        )
    if low == high:
        return [_primitive(low)]
    if integral[0]:
        return IntDistribution(int(low), int(high), log=log)
    return FloatDistribution(float(low), float(high), log=log)


def _scipy_range(value: Any, context: str) -> BaseDistribution | list:
    """A bounded scipy.stats distribution as a range over its support (its density is not
    used): discrete -> integers, ``loguniform`` / ``reciprocal`` -> log scale."""
    try:
        low, high = (float(v) for v in value.support())
    except Exception:
        low, high = -math.inf, math.inf
    if not (np.isfinite(low) and np.isfinite(high)):
        raise SearchSpaceError(
            f"CondBayesSearchCV: {context} is a distribution without finite bounds "
            f"({value!r}); Bayesian optimisation needs a bounded range: use "
            "scipy.stats.uniform, loguniform or randint, or (low, high, 'uniform' | "
            "'log-uniform')."
        )
    dist = getattr(value, "dist", value)
    if low > high:
        raise SearchSpaceError(f"CondBayesSearchCV: {context} has low > high ({low} > {high}).")
    if isinstance(dist, scipy.stats.rv_discrete):
        return _range(int(low), int(high), False, context, value)
    log = getattr(dist, "name", "") in ("loguniform", "reciprocal")
    return _range(low, high, log, context, value)


def _categorical_keys(choices: list[Any], context: str) -> list[Any]:
    """The Optuna choices standing for ``choices``: the values themselves when they are plain
    (None, bool, int, float, str) and distinct, else readable distinct labels."""
    if any(_is_estimator(c) for c in choices):
        odd = [c for c in choices if not (_is_estimator(c) or c is None or c == "passthrough")]
        if odd:
            raise SearchSpaceError(
                f"CondBayesSearchCV: {context} mixes types: estimators and {odd[0]!r}; the "
                "choices of an estimator (pipeline step) are estimators, 'passthrough' or None."
            )
    plain = [_primitive(c) for c in choices]
    for i, j in itertools.combinations(range(len(plain)), 2):
        if type(plain[i]) is type(plain[j]) and _equal(plain[i], plain[j]):
            raise SearchSpaceError(
                f"CondBayesSearchCV: {context} lists the value {choices[i]!r} twice."
            )
    if all(c is None or isinstance(c, (bool, int, float, str)) for c in plain):
        distinct = all(not (a == b) for a, b in itertools.combinations(plain, 2)) and not any(
            isinstance(c, float) and math.isnan(c) for c in plain
        )
        if distinct:
            return plain
    labels = [_label(c) for c in choices]
    if len(set(labels)) < len(labels):
        labels = [c if isinstance(c, str) else repr(c) for c in choices]
    if len(set(labels)) < len(labels):
        labels = [f"{i}: {label}" for i, label in enumerate(labels)]
    return labels


def _equal(a: Any, b: Any) -> bool:
    """``a == b`` for plain values; estimators and objects without a truth value of ``==``
    (arrays) are never equal."""
    if _is_estimator(a):
        return a is b
    try:
        return bool(a == b)
    except Exception:
        return False


def _check_names(estimator: Any, branch: _Branch, where: str) -> None:
    """Every name must be a parameter of ``estimator`` for every combination of the branch's
    estimator choices (``"clf": [SVC(), LogisticRegression()]`` with ``"clf__gamma"`` is an
    error: LogisticRegression has no gamma)."""
    options = {name: [value] for name, value in branch.fixed.items()}
    options.update({d.name: list(d.choices) for d in branch.dimensions if d.choices})
    steps = {
        name: values for name, values in options.items() if any(_is_estimator(v) for v in values)
    }
    names = list(branch.fixed) + [d.name for d in branch.dimensions]
    valid_top = estimator.get_params(deep=True)
    for name in names:
        if name.split("__")[0] not in valid_top:
            _unknown(name, valid_top, where, {})
    combinations = itertools.islice(itertools.product(*steps.values()), _MAX_NAME_CHECKS)
    for combination in combinations:
        setting = dict(zip(steps, combination, strict=True))
        candidate = clone(estimator)
        try:
            candidate.set_params(**{k: clone(v, safe=False) for k, v in setting.items()})
        except ValueError:
            for name in steps:
                if name not in candidate.get_params(deep=True):
                    _unknown(name, candidate.get_params(deep=True), where, {})
            raise
        valid = candidate.get_params(deep=True)
        for name in names:
            if name not in valid:
                _unknown(name, valid, where, setting)


def _unknown(name: str, valid: Mapping[str, Any], where: str, setting: dict[str, Any]) -> None:
    close = difflib.get_close_matches(name, list(valid), n=3)
    hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
    when = (
        " when " + ", ".join(f"{k}={_label(v)}" for k, v in setting.items() if k != name)
        if any(k != name for k in setting)
        else ""
    )
    raise SearchSpaceError(
        f"CondBayesSearchCV: search_spaces{where} parameter {name!r} is not a parameter of "
        f"the estimator{when} (see estimator.get_params().keys()).{hint}"
    )


def _unused_configuration(
    space: _SearchSpace, seen: Mapping[tuple, int], rng: np.random.Generator
) -> dict[str, Any] | None:
    """A random configuration of a finite space that ``seen`` lacks (``None`` if none)."""
    if not math.isfinite(space.size()):
        return None
    unused = [
        c
        for c in itertools.islice(space.configurations(), _MAX_ENUMERATION)
        if params_key(c) not in seen
    ]
    return unused[int(rng.integers(len(unused)))] if unused else None


#: How often a trial that repeats an evaluated configuration is asked again before the search
#: falls back to an unused configuration of a finite space.
MAX_DUPLICATE_ASKS = 16


def ask_unseen(
    study: Study,
    space: _SearchSpace,
    seen: dict[tuple, int],
    rng: np.random.Generator,
) -> tuple[Trial, dict[str, Any]]:
    """Ask a trial whose configuration was not evaluated (or asked) before.

    A trial that repeats one (the samplers' random startup trials can, in a discrete
    space) is told FAIL with the user attribute ``duplicate_of`` and asked again; after
    ``MAX_DUPLICATE_ASKS`` repeats, an unused configuration of a finite space is
    enqueued, and an infinite space accepts the repeat with a warning.
    """
    for _ in range(MAX_DUPLICATE_ASKS):
        trial = study.ask()
        params = space.suggest(trial)
        key = params_key(trial.params)
        if key not in seen:
            seen[key] = trial.number
            return trial, params
        trial.set_user_attr("duplicate_of", seen[key])
        study.tell(trial, state=TrialState.FAIL)
    unused = _unused_configuration(space, seen, rng)
    if unused is not None:
        study.enqueue_trial(unused)
    else:
        warnings.warn(
            f"CondBayesSearchCV: {MAX_DUPLICATE_ASKS} proposals in a row repeated "
            "evaluated configurations; evaluating a repeat.",
            UserWarning,
            stacklevel=3,
        )
    trial = study.ask()
    params = space.suggest(trial)
    seen.setdefault(params_key(trial.params), trial.number)
    return trial, params
