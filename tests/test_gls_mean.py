"""The ordinary-kriging constant mean of Zhang et al. (eq. 1 and the s_0^2 formula after eq. 3)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from condsamplers import ArcGPSampler, BNGPSampler
from condsamplers.models.gp import ExactGP
from condsamplers.sklearn import CondGPRegressor
from condsamplers.space import FeatureSpec


def _clustered_data() -> tuple[np.ndarray, np.ndarray]:
    """Eight high observations near x = 0.5 (a sampler exploiting) and six low ones spread out."""
    rng = np.random.default_rng(0)
    x = np.concatenate([0.5 + 0.01 * rng.standard_normal(8), np.linspace(0.0, 1.0, 6)])
    y = np.where(np.abs(x - 0.5) < 0.05, 1.0, 0.0) + 0.01 * rng.standard_normal(len(x))
    return x[:, None], y


def _fit(mean: str | None, kernel: str = "matern") -> ExactGP:
    x, y = _clustered_data()
    return ExactGP(kernel, n_restarts=1, seed=0, mean=mean).fit(
        x, np.ones_like(x, dtype=bool), y, FeatureSpec.numerical(1)
    )


def test_gls_posterior_is_the_flat_prior_limit_of_a_random_constant() -> None:
    """Universal kriging = the GP posterior with beta ~ N(0, c), c -> infinity."""
    gp = _fit("gls")
    X = torch.tensor([[0.05], [0.3], [0.5], [0.77], [1.0]], dtype=torch.float64)
    on = torch.ones_like(X, dtype=torch.bool)
    mean, var = gp.posterior(X, on)

    c = 1e5  # prior variance of the constant, in standardised units
    K = gp._train_covariance(gp.params_).detach().numpy() + c
    k_star = gp._covariance(X, on, gp.params_).detach().numpy() + c
    amplitude = float(np.exp(gp.params_["log_amplitude"].detach().numpy()[0]))
    z = gp.z_.numpy()
    limit_mean = k_star @ np.linalg.solve(K, z)
    limit_var = amplitude + c - np.einsum("ij,ji->i", k_star, np.linalg.solve(K, k_star.T))
    np.testing.assert_allclose(
        mean.detach().numpy(), limit_mean * gp.y_std_ + gp.y_mean_, rtol=1e-4, atol=1e-6
    )
    np.testing.assert_allclose(var.detach().numpy(), limit_var * gp.y_std_**2, rtol=1e-3)


def test_gls_mean_discounts_a_cluster_of_correlated_observations() -> None:
    x, y = _clustered_data()
    gls, sample = _fit("gls"), _fit("sample")
    assert sample.prior_mean() == pytest.approx(y.mean())
    assert gls.prior_mean() < y.mean() - 0.1


def test_gls_adds_the_uncertainty_of_the_constant_to_the_variance() -> None:
    gls = _fit("gls")
    plain = copy.copy(gls)  # the same fit, without the constant's uncertainty
    plain.mean = "sample"
    plain._factorise()
    X = torch.linspace(0.0, 1.0, 21, dtype=torch.float64)[:, None]
    on = torch.ones_like(X, dtype=torch.bool)
    assert torch.all(gls.posterior(X, on)[1] >= plain.posterior(X, on)[1] - 1e-12)


def test_condition_on_keeps_the_fitted_constant() -> None:
    gls = _fit("gls")
    X = np.array([[0.2], [0.9]])
    conditioned = gls.condition_on(X, np.ones_like(X, dtype=bool), np.array([5.0, 5.0]))
    assert conditioned.prior_mean() == pytest.approx(gls.prior_mean())
    assert conditioned.mean == "gls"


def test_the_branching_nested_kernel_uses_the_gls_mean_by_default() -> None:
    assert ExactGP("bn").mean == "gls"
    assert ExactGP("arc").mean == "sample"
    assert ExactGP("matern").mean == "sample"
    assert ExactGP("bn", mean="sample").mean == "sample"


@pytest.mark.parametrize("sampler_cls", [ArcGPSampler, BNGPSampler])
def test_the_exact_gp_samplers_fit_the_gls_mean_with_augmented_ei(sampler_cls) -> None:
    """Both exact-GP samplers model a study by ordinary kriging (Zhang et al. eq. 1-3) with
    augmented EI (Huang et al. 2006), while the arc regressor keeps the sample mean of its
    kernel."""
    sampler = sampler_cls(seed=0)
    assert sampler._make_model(0, None).mean == "gls"
    assert sampler._settings.noise_penalty
    x, y = _clustered_data()
    assert CondGPRegressor(kernel="arc", random_state=0).fit(x, y).model_.mean == "sample"


def test_an_unknown_mean_is_refused() -> None:
    with pytest.raises(ValueError, match="mean must be one of"):
        ExactGP("bn", mean="zero")
