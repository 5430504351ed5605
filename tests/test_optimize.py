"""The acquisition optimiser's local search (condsamplers.optimize.local_search)."""

from __future__ import annotations

import numpy as np
import optuna
import pytest
import torch

from condsamplers import infer_space
from condsamplers.optimize import OptimizerSettings, local_search, maximize_acquisition

optuna.logging.set_verbosity(optuna.logging.WARNING)


def _space_and_rows():
    def objective(trial: optuna.Trial) -> float:
        kind = trial.suggest_categorical("kind", ["a", "b"])
        return trial.suggest_float(f"x_{kind}", -1, 1) + trial.suggest_float("shared", 0, 1)

    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(objective, n_trials=8)
    space = infer_space(study.trials)
    X, active, _ = space.encode_trials(study.trials)
    return space, X, active


def _sum_of_active_columns(X: torch.Tensor, active: torch.Tensor) -> torch.Tensor:
    """An acquisition that grows with every active column: its maximum is the cube's corner."""
    return (X * active).sum(dim=1)


def _numerical_active(space, active: np.ndarray) -> np.ndarray:
    numerical = np.array([not (n.is_categorical or n.is_discrete) for n in space.nodes])
    return active & numerical[None, :]


@pytest.mark.parametrize("radius", [0.05, 0.3])
def test_local_search_moves_each_start_at_most_the_radius(radius: float) -> None:
    space, X0, active = _space_and_rows()
    moved = local_search(_sum_of_active_columns, space, X0, active, 100, radius=radius)
    free = _numerical_active(space, active)
    np.testing.assert_allclose(moved[free], np.minimum(1.0, X0[free] + radius), atol=1e-9)
    np.testing.assert_array_equal(moved[~free], X0[~free])


def test_the_default_radius_is_the_whole_cube() -> None:
    space, X0, active = _space_and_rows()
    moved = local_search(_sum_of_active_columns, space, X0, active, 100)
    np.testing.assert_allclose(moved[_numerical_active(space, active)], 1.0, atol=1e-9)


def _best_value(space, settings: OptimizerSettings) -> float:
    """The largest acquisition value the optimiser reports."""
    _, _, values = maximize_acquisition(
        _sum_of_active_columns, space, np.random.default_rng(0), settings
    )
    return float(values[0])


def test_the_settings_radius_reaches_the_optimiser() -> None:
    space, _, _ = _space_and_rows()
    near = OptimizerSettings(n_candidates=64, n_local_search=2, local_search_radius=0.01)
    far = OptimizerSettings(n_candidates=64, n_local_search=2)
    assert _best_value(space, near) < _best_value(space, far)  # the corner is out of reach


def _narrow_ridge(space, centre: np.ndarray, widths: np.ndarray):
    """A log-EI-like bump around ``centre`` with a width per column (inactive columns ignored)."""

    def acquisition(X: torch.Tensor, active: torch.Tensor) -> torch.Tensor:
        z = (X - torch.as_tensor(centre)) / torch.as_tensor(widths)
        return -0.5 * ((z * active) ** 2).sum(dim=1)

    return acquisition


@pytest.mark.parametrize("use_scales", [False, True])
def test_the_local_search_reaches_a_maximum_of_very_unequal_widths(use_scales: bool) -> None:
    space, X0, active = _space_and_rows()
    free = _numerical_active(space, active)
    centre = np.full(X0.shape[1], 0.4)
    widths = np.where(np.arange(X0.shape[1]) % 2 == 0, 0.01, 3.0)
    scales = widths if use_scales else None
    acquisition = _narrow_ridge(space, centre, widths)
    moved = local_search(acquisition, space, X0, active, 200, length_scales=scales)
    np.testing.assert_allclose(moved[free], 0.4, atol=0.03)
    assert (moved >= 0.0).all() and (moved <= 1.0).all()


def test_length_scales_of_the_wrong_shape_are_refused() -> None:
    space, X0, active = _space_and_rows()
    with pytest.raises(ValueError, match="length_scales"):
        local_search(
            _sum_of_active_columns, space, X0, active, 10, length_scales=np.ones(X0.shape[1] + 1)
        )


def test_length_scales_that_are_not_positive_numbers_count_as_one() -> None:
    space, X0, active = _space_and_rows()
    scales = np.full(X0.shape[1], np.nan)
    scales[0] = -1.0
    moved = local_search(_sum_of_active_columns, space, X0, active, 100, length_scales=scales)
    np.testing.assert_allclose(moved[_numerical_active(space, active)], 1.0, atol=1e-9)
