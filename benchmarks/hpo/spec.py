"""A conditional search space as data: one declaration, read by every peer.

The real-HPO suite declares each task's space once, as a tuple of :class:`Param` in suggestion
order (a parent before its children). :func:`suggest` walks it define-by-run for Optuna
samplers; ``peers.py`` turns the same tuple into a ConfigSpace (SMAC3) with the conditions
declared by hand, as a SMAC user would.

A parameter with ``parent`` is active iff its parent is active and the parent's value is one of
``values``. Integers on a quantised log scale (hyperopt's ``qloguniform``) are ``int`` with
``log=True``; hyperopt's ``pchoice`` / ``choice`` over constants are ``categorical``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, Literal

Kind = Literal["float", "int", "categorical"]
Config = dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Param:
    """One hyperparameter: a float / int range (``log`` for a log scale) or categorical
    ``choices`` (str, int, float, bool or None), and its condition (``parent`` in ``values``)."""

    name: str
    kind: Kind
    low: float | None = None
    high: float | None = None
    log: bool = False
    choices: tuple[Any, ...] = ()
    parent: str | None = None
    values: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        if self.kind == "categorical":
            if not self.choices:
                raise ValueError(f"{self.name}: a categorical needs choices")
        elif self.low is None or self.high is None or not self.low < self.high:
            raise ValueError(f"{self.name}: a {self.kind} needs low < high")
        if (self.parent is None) != (not self.values):
            raise ValueError(f"{self.name}: give both parent and values, or neither")


def active_params(space: tuple[Param, ...], config: Mapping[str, Any]) -> list[Param]:
    """The parameters of ``space`` active under ``config`` (whose parents it holds)."""
    return [
        p
        for p in space
        if p.parent is None or (p.parent in config and config[p.parent] in p.values)
    ]


def check_space(space: tuple[Param, ...]) -> None:
    """Every parent is declared before its children and is categorical or int; names unique."""
    seen: dict[str, Param] = {}
    for p in space:
        if p.name in seen:
            raise ValueError(f"duplicate parameter {p.name!r}")
        if p.parent is not None:
            parent = seen.get(p.parent)
            if parent is None:
                raise ValueError(f"{p.name}: parent {p.parent!r} must come first")
            if parent.kind == "categorical" and not set(p.values) <= set(parent.choices):
                raise ValueError(f"{p.name}: values {p.values} not among {parent.choices}")
        seen[p.name] = p


def suggest(trial: Any, space: tuple[Param, ...]) -> Config:
    """Define-by-run: ask ``trial`` (an Optuna trial) for each active parameter in order."""
    config: Config = {}
    for p in space:
        if p.parent is not None and (p.parent not in config or config[p.parent] not in p.values):
            continue
        if p.kind == "categorical":
            config[p.name] = trial.suggest_categorical(p.name, list(p.choices))
        elif p.kind == "int":
            config[p.name] = trial.suggest_int(p.name, int(p.low), int(p.high), log=p.log)
        else:
            config[p.name] = trial.suggest_float(p.name, p.low, p.high, log=p.log)
    return config


@dataclasses.dataclass(frozen=True)
class Task:
    """One benchmark task: a space, an objective to *minimise* on a configuration, and how to
    report it. ``evaluate`` returns ``(value, extras)``: ``extras`` holds what the report shows
    beside the value (e.g. the raw surrogate accuracy of an Ax problem)."""

    name: str
    space: tuple[Param, ...]
    evaluate: Callable[[Config], tuple[float, dict[str, float]]]
    n_trials: int
    description: str
    #: what the value is (e.g. "CV error", "1 - accuracy").
    value_name: str = "value"
