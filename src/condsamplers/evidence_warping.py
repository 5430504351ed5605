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

At each step, while no value to minimise is negative (bound ``0``) or every one lies in
``[-1, 0]`` (an accuracy maximised, negated: bound ``-1``; :func:`natural_bound`), the model
is fitted twice, to the values and to their log gap to the bound, and the fit with the larger
evidence is kept (twice the fitting time, or more). Otherwise, with more than
:data:`EVIDENCE_MAX_ROWS` observations, or with a model that reports no evidence, the values
are fitted as they are. A value at the bound, floored by
:func:`~condsamplers.warping.log_regret` at half the smallest positive gap, counts with the
slope at that floor.
"""

from __future__ import annotations

import copy

import numpy as np

from condsamplers.log import get_logger
from condsamplers.models.base import Surrogate
from condsamplers.models.fitting import NumericalError
from condsamplers.space import FeatureSpec
from condsamplers.warping import log_regret

_logger = get_logger(__name__)

#: The ``output_warping`` that chooses between the values and their log error by evidence.
AUTO_WARPING = "auto"
#: Beyond this many observations the values are fitted alone: the second fit costs several
#: times the time of one in long studies (``benchmarks/scaling.py`` on jenatton_large: 1.8 s
#: per suggestion at 1000 trials against 0.21 s with one fit).
EVIDENCE_MAX_ROWS = 1000


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


def fit_by_evidence(
    model: Surrogate, X: np.ndarray, active: np.ndarray, y: np.ndarray, features: FeatureSpec
) -> tuple[Surrogate, np.ndarray]:
    """``(fitted model, the values it was fitted to)``: ``model`` fitted to ``y`` or to their
    log error (:func:`natural_bound`'s bound), whichever has the larger evidence (module docs).

    ``model`` must be unfitted; the log-error fit is made on a copy of it. If that fit fails
    (:class:`~condsamplers.models.fitting.NumericalError`, logged), the values are kept."""
    bound = natural_bound(y) if len(y) <= EVIDENCE_MAX_ROWS else None
    logged_model = copy.deepcopy(model) if bound is not None else None
    model.fit(X, active, y, features)
    raw_evidence = model.log_evidence()
    if logged_model is None or raw_evidence is None or np.ptp(y) == 0:
        return model, y
    logged = log_regret(y, bound)
    try:
        logged_model.fit(X, active, logged, features)
    except NumericalError as error:
        _logger.info("The fit to the log error failed (%s); the values are kept.", error)
        return model, y
    logged_evidence = logged_model.log_evidence()
    if logged_evidence is None or logged_evidence - float(logged.sum()) <= raw_evidence:
        return model, y
    return logged_model, logged
