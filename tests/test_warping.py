"""Output warping (condsamplers.warping): monotone, standard-scale, refitted at each step, and
an option of every sampler that reaches the model."""

from __future__ import annotations

import numpy as np
import optuna
import pytest

from condsamplers import TreeGPSampler
from condsamplers.warping import OUTPUT_WARPINGS, warp_outputs

HEAVY_TAILED = np.array([0.031, 0.042, 0.9, 0.05, 0.031, 0.62, 0.035, 0.044, 0.88, 0.039])


@pytest.mark.parametrize("method", OUTPUT_WARPINGS)
def test_every_warping_keeps_the_order_of_the_values(method: str) -> None:
    z = warp_outputs(HEAVY_TAILED, method)
    order = np.argsort(HEAVY_TAILED, kind="stable")
    assert np.all(np.diff(z[order]) >= 0)
    assert z[0] == z[4]  # equal values stay equal


def test_rank_warping_is_the_gaussian_copula_of_the_ranks() -> None:
    z = warp_outputs(np.array([3.0, 1.0, 2.0, 100.0]), "rank")
    from scipy.stats import norm

    assert np.allclose(z, norm.ppf((np.array([3, 1, 2, 4]) - 0.5) / 4))


@pytest.mark.parametrize("method", ["tail", "tail-rank", "rank", "yeo-johnson"])
def test_warping_spreads_the_good_region_that_outliers_flatten(method: str) -> None:
    """The gap between the best and the median value, relative to the whole range: a few
    catastrophic values make it tiny on the raw scale; the warped scale restores it."""

    def share(v: np.ndarray) -> float:
        return float((np.median(v) - v.min()) / np.ptp(v))

    assert share(warp_outputs(HEAVY_TAILED, method)) > 2 * share(HEAVY_TAILED)
    z = warp_outputs(HEAVY_TAILED, method)
    assert abs(z.mean()) < 0.05 and abs(z.std() - 1) < 0.2  # a standard scale


def test_tail_warping_keeps_the_better_half_affine() -> None:
    """Below the median the values keep their own metric (an affine map): a smooth objective
    near its optimum is modelled as if unwarped; above it they are log-compressed."""
    y = np.array([0.0, 0.1, 0.2, 0.3, 0.4, 10.0, 100.0])
    z = warp_outputs(y, "tail")
    good = y <= np.median(y)
    slope = np.diff(z[good]) / np.diff(y[good])
    assert np.allclose(slope, slope[0])
    raw_ratio = (y[-1] - y[-2]) / (y[-2] - y[-3])  # 90 / 9.6
    assert (z[-1] - z[-2]) / (z[-2] - z[-3]) < raw_ratio / 3  # the tail is compressed


def test_tail_rank_warping_keeps_the_better_half_affine_and_bounds_the_worse_half() -> None:
    """Below the median the values keep their metric; above it only their order counts, so a
    value of 1e13 lies as far above the median as the worst of any other values would."""
    y = np.array([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 1e13])
    z = warp_outputs(y, "tail-rank")
    good = y <= np.median(y)
    slope = np.diff(z[good]) / np.diff(y[good])
    assert np.allclose(slope, slope[0])
    gap = slope[0] * float(np.mean(np.median(y) - y[y < np.median(y)]))  # one mean gap
    assert z[-1] - z[good][-1] < 3 * gap
    milder = warp_outputs(np.where(y > 1e12, 0.8, y), "tail-rank")
    assert np.allclose(z, milder)  # the same order, the same warped values


def test_degenerate_values_pass_through() -> None:
    assert np.array_equal(warp_outputs(np.array([2.0, 2.0, 2.0]), "yeo-johnson"), [2.0] * 3)
    assert np.array_equal(warp_outputs(np.array([5.0]), "rank"), [5.0])


def test_bad_warping_names_the_option() -> None:
    with pytest.raises(ValueError, match="output_warping must be one of"):
        warp_outputs(HEAVY_TAILED, "log")
    with pytest.raises(ValueError, match="output_warping must be one of"):
        TreeGPSampler(output_warping="box-cox")


def test_the_model_is_fitted_to_the_warped_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sampler's option reaches the model: the values the tree GP is fitted to are the
    rank-warped objective values (as for every surrogate: the warp is in the pipeline)."""
    from condsamplers.models import tree_gp

    seen: list[np.ndarray] = []
    original = tree_gp.TreeGP.fit

    def spy(self, X, active, y, features):  # type: ignore[no-untyped-def]
        seen.append(np.array(y))
        return original(self, X, active, y, features)

    monkeypatch.setattr(tree_gp.TreeGP, "fit", spy)
    sampler = TreeGPSampler(seed=0, n_startup_trials=6, output_warping="rank")
    study = optuna.create_study(sampler=sampler)
    study.optimize(lambda t: t.suggest_float("x", 0, 1) ** 4, n_trials=7)
    values = np.array([t.value for t in study.trials[:6]])
    assert len(seen) == 1
    assert np.allclose(seen[0], warp_outputs(values, "rank"))
