"""Checks of constructor arguments shared by samplers, models and evaluators: a ``ValueError``
that names the parameter (and its owner, when given) instead of a failure deep inside."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import TypeVar

import numpy as np

T = TypeVar("T")


def _prefix(owner: str) -> str:
    return f"{owner}: " if owner else ""


def is_integer(value: object) -> bool:
    """Whether ``value`` is an integer (Python's or NumPy's), ``True`` and ``False`` not
    counted."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real_number(value: object) -> bool:
    """Whether ``value`` is a Python or NumPy int or float, ``True`` and ``False`` not counted."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def check_int(name: str, value: object, minimum: int, owner: str = "") -> int:
    """``value`` as an int ``>= minimum`` (ValueError naming the parameter otherwise)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{_prefix(owner)}{name}={value!r} must be an integer >= {minimum}.")
    return int(value)


def check_positive(name: str, value: object, owner: str = "", allow_zero: bool = False) -> float:
    """``value`` as a finite float ``> 0`` (``>= 0`` with ``allow_zero``), else a ValueError."""
    ok = isinstance(value, (int, float, np.floating)) and not isinstance(value, bool)
    ok = ok and math.isfinite(float(value)) and (value >= 0 if allow_zero else value > 0)
    if not ok:
        bound = "non-negative" if allow_zero else "positive"
        raise ValueError(f"{_prefix(owner)}{name}={value!r} must be a {bound} number.")
    return float(value)


def check_fraction(name: str, value: object, owner: str = "") -> float:
    """``value`` as a float in ``(0, 1]`` (ValueError naming the parameter otherwise)."""
    ok = _is_real_number(value)
    if not ok or not 0.0 < float(value) <= 1.0:
        raise ValueError(f"{_prefix(owner)}{name}={value!r} must be a number in (0, 1].")
    return float(value)


def check_finite(name: str, value: object, owner: str = "") -> float:
    """``value`` as a finite float (ValueError naming the parameter otherwise)."""
    ok = _is_real_number(value)
    if not ok or not math.isfinite(float(value)):
        raise ValueError(f"{_prefix(owner)}{name}={value!r} must be a finite number.")
    return float(value)


def check_choice(name: str, value: T, choices: Sequence[T], owner: str = "") -> T:
    """``value`` if it is one of ``choices`` (ValueError naming the parameter otherwise)."""
    if value not in choices:
        raise ValueError(f"{_prefix(owner)}{name} must be one of {choices}; got {value!r}.")
    return value


def check_bool(name: str, value: object, owner: str = "") -> bool:
    """``value`` if it is a bool (``numpy.bool_`` too); a ValueError naming the parameter
    otherwise (``"false"`` is no bool)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{_prefix(owner)}{name}={value!r} must be True or False.")
    return bool(value)
