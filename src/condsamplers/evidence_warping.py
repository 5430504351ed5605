"""``output_warping="auto"``: the log error where the model's evidence prefers it.

A CV error, a loss or an RMSE cannot go below 0, and an accuracy cannot go above 1. Fitted to
the log of each value's gap to that bound (the log error,
:func:`condsamplers.warping.log_regret`), the model tells the good configurations apart as
clearly as the bad ones; fitted to the values as they are, a few failures (an error of 0.9
beside a best of 0.01) set its scale and the good region looks flat. But a smooth objective
whose minimum lies at the bound (a squared distance) has a cusp there once logged, which the
model fits worse than the values themselves. Which of the two fits the data better is what a
warped GP's evidence says (Snelson, Rasmussen & Ghahramani 2004, eq. 8): the log density of
the observed values under the model fitted to the warped values ``g(y)``,

    log p(y) = log N(g(y) | model) + sum_i log g'(y_i),

and for the log error ``g(y) = log(y - b)``, ``log g'(y) = -log(y - b) = -g(y)``. With the
model's values standardised (``z = (g(y) - m) / s``), ``log N(g(y) | model)`` is the marginal
likelihood of ``z`` minus ``n log s`` (:meth:`condsamplers.models.base.Surrogate.log_evidence`).

While no value to minimise is negative (bound ``0``) or every one lies in ``[-1, 0]`` (an
accuracy maximised, negated: bound ``-1``; :func:`natural_bound`), the model is fitted twice,
to the values and to their log gap to the bound, and the fit with the larger evidence is kept.
Otherwise, with more than :data:`EVIDENCE_MAX_ROWS` observations, or with a model that reports
no evidence, the values are fitted as they are. A value at the bound, floored by
:func:`~condsamplers.warping.log_regret` at half the smallest positive gap, counts with the
slope at that floor.

A study compares the two fits at its first model-based step; again whenever its best value's
gap to the bound has shrunk 1.1-fold (:data:`COMPARE_GROWTH`) since the last comparison (a
new best moves the log's spread most; a best closer by a hair, as a smooth objective
converging gives at every step, does not count); and each time its observations have grown
by a tenth since the last comparison (:func:`fit_auto`, :func:`comparison_due`). At the steps
between, only the fit the evidence last preferred is made, so that a step costs one fit
whichever fit is preferred: where the preference holds, the proposals are those of a
comparison at every step (:func:`fit_by_evidence`), and a 50-trial study with 10 startup
trials makes 54 fits plus one per such new best instead of 80.
"""

from __future__ import annotations

import copy
import dataclasses
from fractions import Fraction

import numpy as np

from condsamplers.log import get_logger
from condsamplers.models.base import Surrogate
from condsamplers.models.fitting import NumericalError
from condsamplers.space import FeatureSpec
from condsamplers.warping import log_regret, rescale_magnitude

_logger = get_logger(__name__)

#: The ``output_warping`` that chooses between the values and their log error by evidence.
AUTO_WARPING = "auto"
#: Beyond this many observations the values are fitted alone: the second fit costs several
#: times the time of one in long studies (``benchmarks/scaling.py`` on jenatton_large: 1.8 s
#: per suggestion at 1000 trials against 0.21 s with one fit).
EVIDENCE_MAX_ROWS = 1000
#: The two fits are compared again once the observations number at least this many times
#: those of the last comparison, and more (from 10: 10, 11, 13, 15, 17, 19, 21, 24, 27, 30,
#: 33, 37, 41, 46, 51, ...).
COMPARE_GROWTH = Fraction(11, 10)


@dataclasses.dataclass(frozen=True)
class WarpingChoice:
    """What the last comparison of the evidence preferred (``logged``: the log error), on how
    many observations it was made (``n_compared``) and the best (lowest) value then."""

    logged: bool
    n_compared: int
    best: float


def comparison_due(previous: WarpingChoice | None, n: int, best: float, bound: float) -> bool:
    """Whether the fits are compared on ``n`` observations whose lowest value is ``best``: no
    comparison yet, a best whose gap to ``bound`` has shrunk ``COMPARE_GROWTH``-fold
    since the last one (it moves the log error's spread, ``log(y - bound)``, by at least
    ``log 1.1``; a best closer by a hair, as a smooth objective converging gives at every
    step, does not), or ``n`` at least ``COMPARE_GROWTH`` times the last one's number, and
    more than it."""
    if previous is None:
        return True
    if COMPARE_GROWTH * (best - bound) < previous.best - bound:
        return True
    return n > previous.n_compared and n >= COMPARE_GROWTH * previous.n_compared


def natural_bound(y: np.ndarray) -> float | None:
    """The bound a loss or a rate cannot pass, among values to minimise: ``0.0`` when no
    value is negative (an error rate, a loss, an RMSE), ``-1.0`` when every value lies in
    ``[-1, 0]`` (an accuracy maximised, negated); ``None`` otherwise."""
    y = np.asarray(y, dtype=float)
    if len(y) and np.all(y >= 0.0):
        return 0.0
    if len(y) and np.all((y >= -1.0) & (y <= 0.0)):
        return -1.0
    return None


def fit_auto(
    model: Surrogate,
    X: np.ndarray,
    active: np.ndarray,
    y: np.ndarray,
    features: FeatureSpec,
    previous: WarpingChoice | None = None,
) -> tuple[Surrogate, np.ndarray, WarpingChoice | None]:
    """``(fitted model, the values it was fitted to, the choice to pass to the next step)``:
    :func:`fit_by_evidence` when :func:`comparison_due` (or the values have no bound any
    more), else ``model`` fitted only as ``previous`` chose (module docstring). ``None``: no
    comparison applied (no bound, no evidence, constant values), so the next step compares.
    Values of extreme magnitude (1e160, 1e-160) are first scaled to a unit one
    (:func:`~condsamplers.warping.rescale_magnitude`), so that no variance overflows.
    """
    y = rescale_magnitude(y)
    bound = natural_bound(y) if len(y) <= EVIDENCE_MAX_ROWS else None
    if bound is None or comparison_due(previous, len(y), float(y.min()), bound):
        fitted, values, logged = _compare(model, X, active, y, features, bound)
        if logged is None:
            return fitted, values, None
        return fitted, values, WarpingChoice(logged, len(y), float(y.min()))
    assert previous is not None
    if not previous.logged:
        model.fit(X, active, y, features)
        return model, y, previous
    fallback = copy.deepcopy(model)
    logged = _fit_log_error(model, X, active, y, features, bound)
    if logged is None:
        fallback.fit(X, active, y, features)
        return fallback, y, None
    return model, logged, previous


def fit_by_evidence(
    model: Surrogate, X: np.ndarray, active: np.ndarray, y: np.ndarray, features: FeatureSpec
) -> tuple[Surrogate, np.ndarray]:
    """``(fitted model, the values it was fitted to)``: ``model`` fitted to ``y`` or to their
    log error (:func:`natural_bound`'s bound), whichever has the larger evidence (module docs).

    ``model`` must be unfitted; the log-error fit is made on a copy of it. If that fit fails
    (:class:`~condsamplers.models.fitting.NumericalError`, logged), the values are kept."""
    bound = natural_bound(y) if len(y) <= EVIDENCE_MAX_ROWS else None
    fitted, values, _ = _compare(model, X, active, y, features, bound)
    return fitted, values


def _compare(
    model: Surrogate,
    X: np.ndarray,
    active: np.ndarray,
    y: np.ndarray,
    features: FeatureSpec,
    bound: float | None,
) -> tuple[Surrogate, np.ndarray, bool | None]:
    """:func:`fit_by_evidence` with the bound given; the third item says whether the log
    error was kept (``None``: no comparison was made)."""
    logged_model = copy.deepcopy(model) if bound is not None else None
    model.fit(X, active, y, features)
    raw_evidence = model.log_evidence()
    if logged_model is None or raw_evidence is None or np.ptp(y) == 0:
        return model, y, None
    assert bound is not None
    logged = _fit_log_error(logged_model, X, active, y, features, bound)
    if logged is None:
        return model, y, None
    logged_evidence = logged_model.log_evidence()
    if logged_evidence is None or logged_evidence - float(logged.sum()) <= raw_evidence:
        return model, y, False
    return logged_model, logged, True


def _fit_log_error(
    model: Surrogate,
    X: np.ndarray,
    active: np.ndarray,
    y: np.ndarray,
    features: FeatureSpec,
    bound: float,
) -> np.ndarray | None:
    """Fit ``model`` to the log error of ``y`` and return it; ``None`` (logged) if the fit
    failed (:class:`~condsamplers.models.fitting.NumericalError`), the values to be kept."""
    logged = log_regret(y, bound)
    try:
        model.fit(X, active, logged, features)
    except NumericalError as error:
        _logger.info("The fit to the log error failed (%s); the values are kept.", error)
        return None
    return logged
