"""Tests of the scikit-learn regressors (``CondGPRegressor``, ``TreeGPRegressor``,
``DNGORegressor``, ``BOHAMIANNRegressor``): conformance and behaviour."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from conftest import with_stable_ids
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from condsamplers.models.gp import ExactGP
from condsamplers.sklearn import (
    BOHAMIANNRegressor,
    CondGPRegressor,
    DNGORegressor,
    TreeGPRegressor,
)

# Small problems: one thread is faster than several and keeps parallel test runs fair.
torch.set_num_threads(1)


@with_stable_ids(
    parametrize_with_checks(
        [
            CondGPRegressor(),
            CondGPRegressor(kernel="matern"),
            CondGPRegressor(kernel="bn"),
            TreeGPRegressor(),
            TreeGPRegressor(independent=True, leaf_inputs="leaf"),
            TreeGPRegressor(inner_basis="linear"),
            # Test-sized networks and budgets: the same code paths as the defaults.
            DNGORegressor(hidden_sizes=(10, 10), n_epochs=50, n_restarts=0),
            BOHAMIANNRegressor(hidden_sizes=(10, 10), n_burn_in=200, n_samples=10, keep_every=10),
        ]
    )
)
def test_sklearn_estimator_checks(estimator: CondGPRegressor, check) -> None:
    check(estimator)


def conditional_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A depth-dependent toy function: layer ``k`` features are ``NaN`` when depth < k.

    Columns: depth in {1, 2, 3}, ``a`` (always active), ``b`` (depth >= 2), ``c`` (depth 3).
    """
    rng = np.random.default_rng(seed)
    depth = rng.integers(1, 4, size=n).astype(float)
    a, b, c = rng.uniform(size=(3, n))
    y = np.sin(3.0 * a) + 0.5 * depth
    y = y + np.where(depth >= 2, 4.0 * (b - 0.5) ** 2, 0.0)
    y = y + np.where(depth >= 3, np.cos(4.0 * c), 0.0)
    b[depth < 2] = np.nan
    c[depth < 3] = np.nan
    return np.column_stack([depth, a, b, c]), y


@pytest.mark.parametrize("kernel", ["arc", "bn", "matern"])
def test_fits_conditional_function_better_than_the_mean(kernel: str) -> None:
    X, y = conditional_data(90, seed=0)
    X_test, y_test = conditional_data(60, seed=1)
    model = CondGPRegressor(kernel=kernel, n_restarts=1, random_state=0).fit(X, y)
    mse = np.mean((model.predict(X_test) - y_test) ** 2)
    assert mse < 0.2 * np.var(y_test)


def test_bn_kernel_nests_each_nan_column_in_the_column_that_decides_it() -> None:
    """``b`` exists iff depth >= 2 and ``c`` iff depth = 3: both nested in depth (column 0),
    with one correlation parameter per depth value (Zhang et al., Definition 1)."""
    X, y = conditional_data(60, seed=0)
    model = CondGPRegressor(kernel="bn", n_restarts=0, random_state=0).fit(X, y)
    features = model.features_
    assert features.parents == (-1, -1, 0, 0)
    assert [len(v) for v in features.branch_values] == [0, 0, 2, 1]
    assert len(model.model_.params_["log_phi"]) == 3


def test_bn_kernel_takes_a_nested_column_before_the_column_that_decides_it() -> None:
    """The same data with depth as the last column (it raised a KeyError): the same fit."""
    X, y = conditional_data(60, seed=0)
    X_test, _ = conditional_data(20, seed=1)
    last = [1, 2, 3, 0]
    ordered = CondGPRegressor(kernel="bn", n_restarts=0, random_state=0).fit(X, y)
    reordered = CondGPRegressor(kernel="bn", n_restarts=0, random_state=0).fit(X[:, last], y)
    assert reordered.features_.parents == (-1, 3, 3, -1)
    np.testing.assert_allclose(
        reordered.predict(X_test[:, last]), ordered.predict(X_test), rtol=1e-4, atol=1e-6
    )


def test_return_std_is_positive_and_shaped() -> None:
    X, y = conditional_data(40, seed=0)
    model = CondGPRegressor(n_restarts=0, random_state=0).fit(X, y)
    mean, std = model.predict(X[:7], return_std=True)
    assert mean.shape == std.shape == (7,)
    assert np.all(std > 0.0)
    np.testing.assert_array_equal(mean, model.predict(X[:7]))


def test_same_random_state_gives_identical_predictions() -> None:
    X, y = conditional_data(40, seed=0)
    X_test, _ = conditional_data(10, seed=1)
    first = CondGPRegressor(n_restarts=2, random_state=3).fit(X, y).predict(X_test)
    second = CondGPRegressor(n_restarts=2, random_state=3).fit(X, y).predict(X_test)
    np.testing.assert_array_equal(first, second)


@pytest.mark.parametrize("scale", [1e-13, 1e6])
def test_fit_does_not_depend_on_the_units_of_y(scale: float) -> None:
    """A target in tiny units is standardised like any other (only a spread within rounding of
    the mean counts as constant), as scikit-learn's GaussianProcessRegressor(normalize_y=True)."""
    X, y = conditional_data(40, seed=0)
    X_test, _ = conditional_data(10, seed=1)
    unit = CondGPRegressor(n_restarts=0, random_state=0).fit(X, y).predict(X_test)
    scaled = CondGPRegressor(n_restarts=0, random_state=0).fit(X, y * scale).predict(X_test)
    np.testing.assert_allclose(scaled / scale, unit, rtol=1e-4, atol=1e-4 * np.std(y))


@pytest.mark.parametrize("scale", [1e-300, 1e-160, 1e154, 1e300])
@pytest.mark.parametrize(
    "regressor",
    [
        CondGPRegressor(n_restarts=0, random_state=0),
        TreeGPRegressor(n_restarts=0, random_state=0),
        DNGORegressor(hidden_sizes=(10, 10), n_epochs=50, n_restarts=0, random_state=0),
        BOHAMIANNRegressor(
            hidden_sizes=(10, 10), n_burn_in=200, n_samples=10, keep_every=10, random_state=0
        ),
    ],
    ids=lambda r: type(r).__name__,
)
def test_extreme_scales_of_y_predict_in_its_units(regressor, scale: float) -> None:
    """Targets whose squares overflow or underflow are fitted on an affine rescaling and
    predicted back in their own units: the unit-scale predictions times the scale, finite, with
    a positive std, and no overflow warning."""
    X, y = conditional_data(30, seed=0)
    X_test, _ = conditional_data(8, seed=1)
    unit_mean, unit_std = clone(regressor).fit(X, y).predict(X_test, return_std=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        mean, std = clone(regressor).fit(X, y * scale).predict(X_test, return_std=True)
    assert np.all(np.isfinite(mean)) and np.all(np.isfinite(std)) and np.all(std > 0)
    np.testing.assert_allclose(mean / scale, unit_mean, rtol=1e-3, atol=1e-3 * np.std(y))
    np.testing.assert_allclose(std / scale, unit_std, rtol=1e-3, atol=1e-3 * np.std(y))


def test_nan_means_inactive() -> None:
    X, y = conditional_data(40, seed=0)
    # Scaling ignores inactive rows: column b's minimum is that of its active values.
    arc = CondGPRegressor(n_restarts=0, random_state=0).fit(X, y)
    assert arc.data_min_[2] == np.nanmin(X[:, 2])
    inactive = X[X[:, 0] == 1][:1].copy()
    at_min = inactive.copy()
    at_min[0, 2] = arc.data_min_[2]
    # Matern baseline: an inactive feature is imputed by 0, the encoding of the column minimum.
    matern = CondGPRegressor(kernel="matern", n_restarts=0, random_state=0).fit(X, y)
    np.testing.assert_allclose(matern.predict(inactive), matern.predict(at_min))
    # Arc kernel: an inactive feature is not a value (eq. 3: it embeds at the origin).
    assert abs(arc.predict(inactive)[0] - arc.predict(at_min)[0]) > 1e-6
    assert np.all(np.isfinite(arc.predict(np.full((3, 4), np.nan))))


@pytest.mark.parametrize("categorical", [None, [4]])
def test_column_never_active_is_allowed(categorical: list[int] | None) -> None:
    X, y = conditional_data(30, seed=0)
    X = np.column_stack([X, np.full(len(y), np.nan)])
    model = CondGPRegressor(categorical_features=categorical, n_restarts=0, random_state=0)
    assert np.all(np.isfinite(model.fit(X, y).predict(X)))


def test_predictions_are_clipped_beyond_the_training_range() -> None:
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(30, 1))
    y = np.sin(6.0 * X[:, 0])
    model = CondGPRegressor(n_restarts=0, random_state=0).fit(X, y)
    top = X.max()
    np.testing.assert_allclose(model.predict([[top + 5.0]]), model.predict([[top]]))


def test_categorical_codes_are_mapped_and_unseen_codes_rejected() -> None:
    rng = np.random.default_rng(0)
    codes = rng.choice([3.0, 7.0, 10.0], size=60)
    x = rng.uniform(size=60)
    y = np.select([codes == 3, codes == 7], [0.0, 2.0], -1.0) + 0.3 * x
    X = np.column_stack([x, codes])
    model = CondGPRegressor(categorical_features=[1], n_restarts=0, random_state=0).fit(X, y)
    np.testing.assert_array_equal(model.categories_[1], [3.0, 7.0, 10.0])
    assert model.features_.n_categories.tolist() == [0, 3]
    assert np.mean((model.predict(X) - y) ** 2) < 0.05 * np.var(y)
    with pytest.raises(ValueError, match=r"column 1 .*\[5\.0\]"):
        model.predict([[0.5, 5.0]])


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"kernel": "rbf"}, "kernel='rbf'"),
        ({"n_restarts": -1}, "n_restarts=-1"),
        ({"n_restarts": 1.5}, "n_restarts=1.5"),
        ({"min_noise": 0.0}, "min_noise=0.0"),
        ({"categorical_features": [4]}, "categorical_features index 4"),
        ({"categorical_features": [0, 0]}, "categorical_features lists column 0 twice"),
        ({"categorical_features": ["a"]}, "categorical_features must be a list"),
        ({"categorical_features": 2}, "categorical_features must be None or a list"),
        ({"categorical_features": [1]}, "categorical column 1 must hold non-negative integer"),
    ],
)
def test_bad_parameters_raise_clear_errors(params: dict, match: str) -> None:
    X, y = conditional_data(10, seed=0)
    with pytest.raises(ValueError, match=match):
        CondGPRegressor(**params).fit(X, y)


def test_infinite_input_is_rejected() -> None:
    X, y = conditional_data(20, seed=0)
    bad = X.copy()
    bad[0, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        CondGPRegressor(n_restarts=0).fit(bad, y)
    model = CondGPRegressor(n_restarts=0, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="infinity"):
        model.predict(bad)


@pytest.mark.parametrize(
    "options",
    [{}, {"independent": True}, {"inner_basis": "linear"}],
    ids=["tree", "independent", "linear"],
)
def test_tree_regressor_fits_conditional_function_better_than_the_mean(options: dict) -> None:
    X, y = conditional_data(90, seed=0)
    X_test, y_test = conditional_data(60, seed=1)
    model = TreeGPRegressor(n_restarts=1, random_state=0, **options).fit(X, y)
    mse = np.mean((model.predict(X_test) - y_test) ** 2)
    assert mse < 0.2 * np.var(y_test)
    assert len(model.model_.structure_.leaves) == 3


def test_tree_regressor_takes_given_paths_and_predicts_an_unseen_leaf() -> None:
    """A fourth leaf (depth with ``a`` and ``c`` but no ``b``) never seen in training."""
    X, y = conditional_data(60, seed=0)
    paths = [[0, 1], [0, 1, 2], [0, 1, 2, 3], [0, 1, 3]]
    model = TreeGPRegressor(paths=paths, n_restarts=0, random_state=0).fit(X, y)
    assert len(model.model_.structure_.leaves) == 4
    unseen = np.array([[3.0, 0.5, np.nan, 0.2]])
    mean, std = model.predict(unseen, return_std=True)
    assert np.isfinite(mean).all() and (std > 0).all()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"leaf_inputs": "nodes"}, "leaf_inputs"),
        ({"inner_basis": "cubic"}, "inner_basis"),
        ({"independent": "yes"}, "independent"),
        ({"paths": [[0, 9]]}, "paths"),
        ({"paths": "0,1"}, "paths"),
    ],
)
def test_tree_regressor_rejects_bad_parameters(options: dict, message: str) -> None:
    X, y = conditional_data(20, seed=0)
    with pytest.raises(ValueError, match=message):
        TreeGPRegressor(**options).fit(X, y)


@pytest.mark.parametrize(
    "regressor",
    [
        DNGORegressor(hidden_sizes=(20, 20), n_epochs=200, random_state=0),
        BOHAMIANNRegressor(
            hidden_sizes=(20, 20), n_burn_in=1500, n_samples=20, keep_every=20, random_state=0
        ),
    ],
    ids=["dngo", "bohamiann"],
)
def test_neural_regressors_fit_conditional_function_better_than_the_mean(regressor) -> None:
    X, y = conditional_data(90, seed=0)
    X_test, y_test = conditional_data(60, seed=1)
    model = regressor.fit(X, y)
    mean, std = model.predict(X_test, return_std=True)
    assert np.mean((mean - y_test) ** 2) < 0.2 * np.var(y_test)
    assert np.all(std > 0)


@pytest.mark.parametrize(
    ("regressor", "match"),
    [
        (DNGORegressor(hidden_sizes=(10, 0)), "DNGORegressor: hidden_sizes"),
        (DNGORegressor(n_epochs=0), "DNGORegressor: n_epochs=0"),
        (DNGORegressor(integrate_hyperparameters="yes"), "integrate_hyperparameters='yes'"),
        (DNGORegressor(categorical_features=[7]), "categorical_features index 7"),
        (BOHAMIANNRegressor(step_size=0.0), "BOHAMIANNRegressor: step_size=0.0"),
        (BOHAMIANNRegressor(n_samples=1.5), "n_samples=1.5"),
    ],
)
def test_neural_regressors_reject_bad_parameters(regressor, match: str) -> None:
    X, y = conditional_data(10, seed=0)
    with pytest.raises(ValueError, match=match):
        regressor.fit(X, y)


def test_fit_and_predict_run_on_one_thread_and_restore_the_callers_threads(monkeypatch) -> None:
    """Small models run on one thread (many threads only oversubscribe the cores); the
    caller's thread count comes back after ``fit`` and ``predict``."""
    seen: list[int] = []
    original = ExactGP.fit

    def recording_fit(self, *args, **kwargs):
        seen.append(torch.get_num_threads())
        return original(self, *args, **kwargs)

    monkeypatch.setattr(ExactGP, "fit", recording_fit)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        X, y = conditional_data(30, seed=0)
        model = CondGPRegressor(n_restarts=0, random_state=0).fit(X, y)
        assert seen == [1] and torch.get_num_threads() == 2
        model.predict(X)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
