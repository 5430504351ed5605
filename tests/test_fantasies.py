"""Monte-Carlo fantasies and the kriging believer's fantasy at pending points
(Snoek et al. 2012, sec. 3.3; DNGO, Snoek et al. 2015, sec. 3.3): joint samples, incumbents,
the averaged log-EI."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from condsamplers.acquisition import believed_fantasy, make_log_mc_ei, sample_fantasies
from condsamplers.models.gp import ExactGP
from condsamplers.space import FeatureSpec


def _toy_gp() -> ExactGP:
    X = np.array([[0.0], [0.3], [1.0]])
    y = np.array([0.0, 1.0, 0.0])
    model = ExactGP("matern", n_restarts=0, seed=0)
    return model.fit(X, np.ones_like(X, dtype=bool), y, FeatureSpec.numerical(1))


def test_fantasies_are_joint_samples() -> None:
    """Sequential sampling gives the marginal at each pending point and their correlation:
    near-identical points get near-identical fantasies, distant ones independent ones."""
    model = _toy_gp()
    X_pending = np.array([[0.6], [0.61], [5.0]])
    active = np.ones_like(X_pending, dtype=bool)
    fantasies = sample_fantasies(model, X_pending, active, 300, 0.0, np.random.default_rng(0))
    assert len(fantasies) == 300
    samples = np.array([f.values for f in fantasies])
    mean, var = model.predict(X_pending, active)
    assert np.abs(samples.mean(0) - mean).max() < 4 * np.sqrt(var.max() / 300)
    assert samples.var(0) == pytest.approx(var, rel=0.3)
    correlation = np.corrcoef(samples.T)
    assert correlation[0, 1] > 0.95
    assert abs(correlation[0, 2]) < 0.25
    # The incumbent of each fantasy includes the fantasised outcomes.
    assert all(f.best == min(0.0, *s) for f, s in zip(fantasies, samples, strict=True))


def test_kriging_believer_takes_a_believed_outcome_below_the_incumbent_as_incumbent() -> None:
    """A pending point the model predicts below the incumbent is, in the believer's fantasy, an
    observation there: the fantasy's incumbent is its believed value (as a Monte-Carlo
    fantasy's is its sampled one), so EI next to it is not its predicted improvement again."""
    model = _toy_gp()
    below = np.array([[0.0], [1.0]])  # predicted ~0, the toy's minimum; incumbent 0.5 here
    active = np.ones_like(below, dtype=bool)
    (fantasy,) = believed_fantasy(model, below, active, 0.5)
    mean = model.predict(below, active)[0]
    assert fantasy.best == pytest.approx(float(mean.min())) and fantasy.best < 0.5
    assert fantasy.values == pytest.approx(tuple(mean))
    above = np.array([[0.3]])  # predicted ~1: the incumbent stays
    (fantasy,) = believed_fantasy(model, above, np.array([[True]]), 0.5)
    assert fantasy.best == 0.5


def test_mc_ei_averages_ei_over_fantasies() -> None:
    model = _toy_gp()
    X_pending, active = np.array([[0.6]]), np.array([[True]])
    fantasies = sample_fantasies(model, X_pending, active, 5, 0.0, np.random.default_rng(1))
    X = torch.linspace(0, 1, 7, dtype=torch.float64)[:, None]
    A = torch.ones_like(X, dtype=torch.bool)
    log_mc = make_log_mc_ei(fantasies)(X, A)
    singles = torch.stack([make_log_mc_ei([f])(X, A) for f in fantasies])
    expected = torch.log(torch.exp(singles).mean(0))
    assert torch.allclose(log_mc, expected, atol=1e-10)
    # No pending point: the plain log-EI of the model.
    (only,) = sample_fantasies(model, X_pending[:0], active[:0], 5, 0.0, np.random.default_rng(1))
    assert only.model is model
