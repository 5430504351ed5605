"""Hyperparameter marginalisation: the slice sampler, the tree GP's samples and the integrated
acquisition (EI averaged over the samples) in the sampler."""

from __future__ import annotations

import logging

import numpy as np
import optuna
import pytest
import torch

from condsamplers import TreeGPSampler
from condsamplers.models.fitting import RAW_BOUND, slice_sample
from condsamplers.models.tree_gp import TreeGP
from condsamplers.space import FeatureSpec

optuna.logging.set_verbosity(optuna.logging.WARNING)

MEAN = np.array([1.0, -2.0])
SD = np.array([0.5, 2.0])


def _gaussian(params: dict[str, torch.Tensor]) -> torch.Tensor:
    x = torch.cat([params["a"], params["b"]])
    return -0.5 * (((x - torch.as_tensor(MEAN)) / torch.as_tensor(SD)) ** 2).sum()


def _start() -> dict[str, torch.Tensor]:
    return {"a": torch.zeros(1, dtype=torch.float64), "b": torch.zeros(1, dtype=torch.float64)}


def _as_array(samples: list[dict[str, torch.Tensor]]) -> np.ndarray:
    return np.array([[float(s["a"][0]), float(s["b"][0])] for s in samples])


def test_slice_samples_have_the_moments_of_the_target_density() -> None:
    draws = _as_array(slice_sample(_gaussian, _start(), 3000, 10, 1, seed=0))
    np.testing.assert_allclose(draws.mean(axis=0), MEAN, atol=0.15)
    np.testing.assert_allclose(draws.std(axis=0), SD, rtol=0.1)


def test_slice_samples_are_reproducible_and_stay_in_the_box() -> None:
    def flat(params: dict[str, torch.Tensor]) -> torch.Tensor:
        return torch.zeros((), dtype=torch.float64)

    first = _as_array(slice_sample(flat, _start(), 200, 0, 2, seed=3))
    again = _as_array(slice_sample(flat, _start(), 200, 0, 2, seed=3))
    np.testing.assert_array_equal(first, again)
    assert np.all(np.abs(first) <= RAW_BOUND)
    assert first.std() > 3.0  # a flat density on [-12, 12]: the chain wanders over the box


def test_slice_sampler_keeps_a_start_without_density_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def nowhere(params: dict[str, torch.Tensor]) -> torch.Tensor:
        return torch.tensor(float("nan"))

    with caplog.at_level(logging.WARNING, logger="optuna.condsamplers.models"):
        draws = _as_array(slice_sample(nowhere, _start(), 3, 1, 1, seed=0))
    np.testing.assert_array_equal(draws, 0.0)
    assert "no finite density" in caplog.text


def test_slice_sampler_rejects_bad_counts() -> None:
    with pytest.raises(ValueError, match="n_samples"):
        slice_sample(_gaussian, _start(), 0, 1, 1, seed=0)


def _tree_data() -> tuple[np.ndarray, np.ndarray, np.ndarray, FeatureSpec]:
    rng = np.random.default_rng(0)
    n = 16
    branch = rng.integers(2, size=n)
    X = np.column_stack([branch, rng.random(n), rng.random(n)])
    active = np.column_stack([np.ones(n, bool), branch == 0, branch == 1])
    X[~active] = 0.0
    y = np.where(branch == 0, np.sin(6 * X[:, 1]), 1.0 + X[:, 2] ** 2)
    return X, active, y, FeatureSpec(np.array([2, 0, 0]))


def test_tree_gp_samples_differ_from_each_other_and_predict_finite_values() -> None:
    X, active, y, features = _tree_data()
    model = TreeGP(seed=0, max_iter=50, hyperparameter_samples=4).fit(X, active, y, features)
    members = model.hyperparameter_models()
    assert len(members) == 4 and all(m is not model for m in members)
    omegas = np.array([m.params_["log_omega"].numpy() for m in members])
    assert np.unique(omegas, axis=0).shape[0] == 4
    for member in members:
        mean, var = member.predict(X, active)
        assert np.all(np.isfinite(mean)) and np.all(var > 0)
        # Every sample keeps the data: its posterior mean follows the observations.
        assert np.corrcoef(mean, y)[0, 1] > 0.9
    again = TreeGP(seed=0, max_iter=50, hyperparameter_samples=4).fit(X, active, y, features)
    np.testing.assert_array_equal(
        omegas, [m.params_["log_omega"].numpy() for m in again.hyperparameter_models()]
    )


def test_tree_gp_without_samples_is_its_own_single_model() -> None:
    X, active, y, features = _tree_data()
    model = TreeGP(seed=0, max_iter=50).fit(X, active, y, features)
    assert model.hyperparameter_models() == [model]


def test_bad_hyperparameter_samples_name_the_parameter() -> None:
    with pytest.raises(ValueError, match="hyperparameter_samples"):
        TreeGP(hyperparameter_samples=-1)
    with pytest.raises(ValueError, match="hyperparameter_samples"):
        TreeGPSampler(hyperparameter_samples=1.5)  # type: ignore[arg-type]


def _conditional(trial: optuna.Trial) -> float:
    kind = trial.suggest_categorical("kind", ["a", "b"])
    x = trial.suggest_float(f"x_{kind}", -1, 1)
    return (0.0 if kind == "a" else 0.5) + (x - 0.3) ** 2


def _suggestions(seed: int) -> list[dict]:
    sampler = TreeGPSampler(
        seed=seed,
        acquisition="joint",
        hyperparameter_samples=3,
        n_startup_trials=5,
        n_candidates=64,
        n_local_search=1,
        n_restarts=0,
    )
    study = optuna.create_study(sampler=sampler)
    study.optimize(_conditional, n_trials=10)
    return [t.params for t in study.trials]


def test_sampler_with_hyperparameter_samples_is_deterministic_and_optimises() -> None:
    first = _suggestions(0)
    assert first == _suggestions(0)
    best = min(_conditional(optuna.trial.FixedTrial(p)) for p in first)
    assert best < 0.05
