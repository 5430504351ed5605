"""Output warping: a monotone map of the objective values before the model sees them.

Real hyperparameter-search objectives are heavy-tailed: a few configurations fail badly (an
error of 0.9 beside a best of 0.03, a diverged RMSE) and set the model's output scale, so the
good region looks flat, EI keeps exploring, and a branch whose one trial failed is written
off. A monotone warp keeps the order of the values (the best configurations stay the best;
the incumbent and EI live in the warped space) and tames the tail. Fitted afresh at each step
from the values alone (DESIGN.md sec. 7); the model never sees the raw values.

Values whose spread would overflow or underflow when squared (``1e300``) are first mapped
affinely to ``[-1, 1]`` around their median (:func:`rescale_extreme`), whatever the warp.

Notation: ``y`` are the ``n`` values to *minimise*; the warped values ``z`` are returned on
a standard scale (mean 0, variance about 1).

- ``"none"``: ``z = y``.
- ``"tail"``: the worse half of the values compressed on a log scale, the better half kept
  as it is: with ``m`` the median and ``s`` the mean gap of the better half to ``m``,
  ``z = (y - m) / s`` where ``y <= m`` and ``z = log(1 + (y - m) / s)`` where ``y > m``
  (continuous, with slope 1 on both sides of ``m``), then standardised. Near the optimum the
  model sees the values' own metric, so a smooth objective is modelled as well as unwarped;
  a catastrophic value (an error of 1.0 beside a best of 0.03) moves the scale by a logarithm
  only, so it neither sets the output scale nor turns its branch into the most uncertain one.
- ``"tail-rank"``: as ``"tail"`` on the better half; the worse half replaced by its normal
  scores, ``z = sqrt(pi/2) Phi^-1(1/2 + (r_i - 1/2) / (2 k))`` for the ``r_i``-th smallest of
  the ``k`` values above ``m`` (a half-normal of mean gap 1, the better half's mean gap in its
  units), then standardised. Only the order of the worse half is kept, so no value above the
  median, however large (a diverged RMSE of 1e13 beside 0.7), lies more than about 3 gaps
  above it, while the better half keeps its metric.
- ``"rank"``: the Gaussian copula of Salinas et al. (2020, sec. 3): ``z_i = Phi^-1(
  (r_i - 1/2) / n)`` with ``r_i`` the rank of ``y_i`` (ties share their mean rank), so that
  only the order of the values is kept and every tail is Gaussian.
- ``"yeo-johnson"``: the power transform of Yeo and Johnson (2000), its ``lambda`` fitted by
  maximum likelihood on the standardised values, then standardised again (as HEBO, Cowen-Rivers
  et al. 2022, sec. 4.1, warps its outputs); monotone in ``y`` for every ``lambda``.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.special
import scipy.stats

from condsamplers.log import get_logger

OUTPUT_WARPINGS = ("none", "tail", "tail-rank", "rank", "yeo-johnson")

_logger = get_logger(__name__)


def warp_outputs(y: np.ndarray, method: str) -> np.ndarray:
    """``y`` (values to minimise) under the monotone warp ``method`` (see the module docs).

    Raises:
        ValueError: ``method`` is not one of :data:`OUTPUT_WARPINGS`, or ``y`` is not finite.
    """
    y = np.asarray(y, dtype=float)
    if method not in OUTPUT_WARPINGS:
        raise ValueError(f"output_warping must be one of {OUTPUT_WARPINGS}; got {method!r}.")
    if not np.all(np.isfinite(y)):
        raise ValueError("warp_outputs: the values must be finite.")
    y = rescale_extreme(y)
    if method == "none" or len(y) < 2 or np.ptp(y) == 0:
        return y
    if method == "tail":
        return log_upper_tail(y)
    if method == "tail-rank":
        return rank_upper_tail(y)
    if method == "rank":
        return rank_gaussian(y)
    return yeo_johnson(y)


def log_regret(y: np.ndarray, bound: float) -> np.ndarray:
    """``log(y - bound)``: minimisation values as the log of their gap to a value none can beat.

    The model then sees a loss on a log scale (the log error of an accuracy, the log of a squared
    error), on which the differences among good configurations are no longer dwarfed by those of
    the failures: on the raw scale a few configurations that fail badly (an accuracy of 0.1 beside
    a best of 0.97) set the output scale, the good region looks flat and EI keeps exploring. A gap
    of 0 (a value at the bound: a perfect score) is floored at half the smallest positive gap, one
    step beyond the best measured; all gaps 0 give zeros. Monotone, so the best configurations stay
    the best.

    Raises:
        ValueError: a value is below ``bound``.
    """
    y = np.asarray(y, dtype=float)
    gap = y - bound
    if (gap < 0).any():
        raise ValueError(
            f"log_regret: {int((gap < 0).sum())} value(s) are below the bound {bound!r}, "
            f"e.g. {float(y[gap < 0][0])!r}; the bound must be a value no observation can beat."
        )
    positive = gap[gap > 0]
    if len(positive) == 0:
        return np.zeros_like(gap)
    return np.log(np.maximum(gap, 0.5 * positive.min()))


#: Spreads of values beyond these are rescaled before anything squares them (``1e300 ** 2``
#: overflows to ``inf``, ``1e-300 ** 2`` underflows to 0).
EXTREME_SPREAD = (1e-100, 1e100)


def extreme_scale(y: np.ndarray) -> tuple[float, float]:
    """``(centre, spread)`` of the affine map ``(y - centre) / spread`` that
    :func:`rescale_extreme` applies: the median and ``max|y - median|`` where that spread is
    outside :data:`EXTREME_SPREAD`, ``(0, 1)`` (the identity) otherwise. A model fitted to the
    mapped values predicts ``mean * spread + centre`` and ``std * spread`` in ``y``'s units."""
    centre = float(np.median(y)) if len(y) else 0.0
    spread = float(np.max(np.abs(y - centre))) if len(y) else 0.0
    low, high = EXTREME_SPREAD
    if spread == 0.0 or low <= spread <= high:
        return 0.0, 1.0
    return centre, spread


def rescale_extreme(y: np.ndarray) -> np.ndarray:
    """``(y - median) / max|y - median|`` where that spread is outside :data:`EXTREME_SPREAD`
    (values of 1e300, or all within 1e-100 of each other), ``y`` itself otherwise: an affine
    map, so the order and every warp below are unchanged, but a variance can be computed."""
    centre, spread = extreme_scale(y)
    return (y - centre) / spread


def rescale_magnitude(y: np.ndarray) -> np.ndarray:
    """``y / max|y|`` where that magnitude is outside :data:`EXTREME_SPREAD`, ``y`` itself
    otherwise: a scaling without a shift, so the signs stay and with them a natural bound of
    0 (:func:`condsamplers.evidence_warping.natural_bound`); the log error moves by a constant
    and the comparison of evidences is unchanged."""
    magnitude = float(np.max(np.abs(y))) if len(y) else 0.0
    low, high = EXTREME_SPREAD
    if magnitude == 0.0 or low <= magnitude <= high:
        return y
    return y / magnitude


def log_upper_tail(y: np.ndarray) -> np.ndarray:
    """``(y - m) / s`` below the median ``m``, ``log(1 + (y - m) / s)`` above it, standardised;
    ``s`` as in :func:`_gaps_from_median`."""
    u = _gaps_from_median(y)
    if u is None:
        return (y - y.mean()) / y.std()
    z = np.where(u > 0, np.log1p(np.maximum(u, 0.0)), u)
    return (z - z.mean()) / z.std()


def _gaps_from_median(y: np.ndarray) -> np.ndarray | None:
    """``(y - m) / s``: ``m`` the median, ``s`` the mean gap of the values below ``m`` to ``m``
    (of all values if none is below, the upper half then holding everything); ``None`` where
    ``s`` is 0."""
    m = float(np.median(y))
    below = y[y < m]
    s = float(np.mean(m - below)) if len(below) else float(np.mean(np.abs(y - m)))
    return (y - m) / s if s > 0 else None


def rank_upper_tail(y: np.ndarray) -> np.ndarray:
    """``(y - m) / s`` at or below the median ``m``; above it, the half-normal scores
    ``sqrt(pi/2) Phi^-1(1/2 + (r - 1/2) / (2k))`` of the ``k`` values there by their rank ``r``
    (ties share their mean rank); standardised. ``s`` as in :func:`_gaps_from_median`."""
    z = _gaps_from_median(y)
    if z is None:
        return (y - y.mean()) / y.std()
    upper = z > 0
    if upper.any():
        ranks = scipy.stats.rankdata(y[upper])
        quantiles = 0.5 + (ranks - 0.5) / (2.0 * upper.sum())
        z[upper] = np.sqrt(np.pi / 2.0) * scipy.special.ndtri(quantiles)
    return (z - z.mean()) / z.std()


def rank_gaussian(y: np.ndarray) -> np.ndarray:
    """The Gaussian copula transform ``Phi^-1((r_i - 1/2) / n)`` (Salinas et al. 2020)."""
    ranks = scipy.stats.rankdata(y)  # ties share their mean rank
    return scipy.special.ndtri((ranks - 0.5) / len(y))


def yeo_johnson(y: np.ndarray) -> np.ndarray:
    """Standardise, apply the Yeo-Johnson transform with its maximum-likelihood ``lambda``,
    standardise again. Falls back to the standardised values (logged once per call) where the
    fit fails or gives a non-finite or constant result."""
    z = (y - y.mean()) / y.std()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            warped, _ = scipy.stats.yeojohnson(z)
        except (ValueError, FloatingPointError, OverflowError) as error:
            _logger.info(
                "Yeo-Johnson warping failed (%s); the values are only standardised.", error
            )
            return z
    if not np.all(np.isfinite(warped)) or np.ptp(warped) == 0:
        _logger.info("Yeo-Johnson warping gave degenerate values; they are only standardised.")
        return z
    return (warped - warped.mean()) / warped.std()
