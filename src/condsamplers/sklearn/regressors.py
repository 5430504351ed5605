"""scikit-learn regressors over conditional inputs, wrapping the models of :mod:`condsamplers`.

In the scikit-learn API an inactive feature (a parameter that does not exist for that row, such
as the units of the third layer of a two-layer network) is ``NaN``. :class:`CondGPRegressor`
turns such a matrix into the encoding the models use (see :mod:`condsamplers.space`): numerical
columns scaled to [0, 1], categorical columns as a choice index ``0..K-1``, inactive entries 0,
and a boolean ``active`` mask; then it fits the very same
:class:`~condsamplers.models.gp.ExactGP` object the Optuna samplers use. The adapter holds no
maths: the kernel (arc kernel of Swersky et al. 2014, eq. 3-4, branching-and-nested kernel of
Zhang et al., or the Matern "GP" baseline) and the hyperparameter fit live in
:mod:`condsamplers.kernels` and :mod:`condsamplers.models.gp`. :class:`TreeGPRegressor`,
:class:`DNGORegressor` and :class:`BOHAMIANNRegressor` wrap
:class:`~condsamplers.models.tree_gp.TreeGP`, :class:`~condsamplers.models.dngo.DNGO` and
:class:`~condsamplers.models.bohamiann.BOHAMIANN` the same way.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from condsamplers.kernels import KERNELS
from condsamplers.models.base import Surrogate
from condsamplers.models.bohamiann import BOHAMIANN
from condsamplers.models.dngo import DNGO
from condsamplers.models.gp import MIN_NOISE, ExactGP
from condsamplers.models.threads import single_threaded
from condsamplers.models.tree_gp import INNER_BASES, LEAF_INPUTS, TreeGP
from condsamplers.space import FeatureSpec, infer_parents
from condsamplers.validation import is_integer
from condsamplers.warping import extreme_scale

__all__ = ["BOHAMIANNRegressor", "CondGPRegressor", "DNGORegressor", "TreeGPRegressor"]


class _ConditionalRegressor(RegressorMixin, BaseEstimator):
    """What every condsamplers regressor shares: ``NaN`` = inactive, the encoding of ``X`` into
    the models' columns and active mask, validation, and ``predict(return_std)``.

    A subclass stores ``categorical_features`` and ``random_state`` (and its model's options)
    in ``__init__`` and implements :meth:`_make_model` and :meth:`_check_model_params`.
    """

    categorical_features: Sequence[int] | None
    random_state: int | np.random.RandomState | None

    def _make_model(self, seed: int) -> Surrogate:
        raise NotImplementedError

    def _check_model_params(self) -> None:
        """Validate the subclass's own parameters (``ValueError`` naming the parameter)."""

    def _leaf_patterns(self, active: np.ndarray) -> tuple[frozenset[int], ...] | None:
        """The tree's paths as sets of active columns, when the estimator is told them."""
        return None

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    # -- fitting -------------------------------------------------------------------------
    @single_threaded()
    def fit(self, X: Any, y: Any) -> Any:
        """Fit the model (hyperparameters included) to ``X`` (``NaN`` = inactive) and ``y``."""
        self._check_params()
        X, y = validate_data(self, X, y, ensure_all_finite="allow-nan", y_numeric=True)
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        self.is_categorical_ = self._categorical_mask(X.shape[1])
        self._fit_encoding(X)
        X_enc, active = self._encode(X)
        parents, branch_values = infer_parents(X_enc, active, self.features_.n_categories)
        self.features_ = FeatureSpec(
            self.features_.n_categories,
            leaf_patterns=self._leaf_patterns(active),
            parents=parents,
            branch_values=branch_values,
        )
        seed = int(check_random_state(self.random_state).randint(2**31))
        self.model_ = self._make_model(seed)
        # Values whose spread squares to inf or 0 (1e154, 1e-160) are fitted on an affine
        # rescaling, as the samplers do, and predicted back in y's units.
        self.y_centre_, self.y_spread_ = extreme_scale(y)
        self.model_.fit(X_enc, active, (y - self.y_centre_) / self.y_spread_, self.features_)
        return self

    def _check_params(self) -> None:
        self._check_model_params()

    def _check_gp_params(self) -> None:
        """``n_restarts`` and ``min_noise`` of the GP regressors."""
        name = type(self).__name__
        n = self.n_restarts  # type: ignore[attr-defined]
        if not is_integer(n) or n < 0:
            raise ValueError(f"{name}: n_restarts={n!r} must be a non-negative integer.")
        noise = self.min_noise  # type: ignore[attr-defined]
        if isinstance(noise, bool) or not isinstance(noise, numbers.Real) or not noise > 0:
            raise ValueError(f"{name}: min_noise={noise!r} must be a positive number.")

    def _categorical_mask(self, n_features: int) -> np.ndarray:
        """Boolean mask of the columns named by ``categorical_features`` (validated)."""
        mask = np.zeros(n_features, dtype=bool)
        indices = self.categorical_features
        if indices is None:
            return mask
        if isinstance(indices, (str, bytes)) or not isinstance(indices, Iterable):
            raise ValueError(
                f"{type(self).__name__}: categorical_features must be None or a list of column "
                f"indices; got {indices!r}."
            )
        for index in indices:
            if isinstance(index, (bool, np.bool_)) or not isinstance(index, numbers.Integral):
                raise ValueError(
                    f"{type(self).__name__}: categorical_features must be a list of column "
                    f"indices; got {index!r} in {self.categorical_features!r}."
                )
            if not 0 <= int(index) < n_features:
                raise ValueError(
                    f"{type(self).__name__}: categorical_features index {index} is out of "
                    f"range for X with {n_features} columns."
                )
            if mask[int(index)]:
                raise ValueError(
                    f"{type(self).__name__}: categorical_features lists column {index} twice."
                )
            mask[int(index)] = True
        return mask

    def _fit_encoding(self, X: np.ndarray) -> None:
        """Store the per-column scaling (numerical) and code lists (categorical)."""
        d = X.shape[1]
        self.data_min_ = np.full(d, np.nan)
        self.data_range_ = np.full(d, np.nan)
        self.categories_: list[np.ndarray] = []
        for j in range(d):
            column = X[:, j]
            observed = column[~np.isnan(column)]
            if self.is_categorical_[j]:
                _check_codes(observed, j, type(self).__name__)
                self.categories_.append(np.unique(observed))
                continue
            self.categories_.append(np.empty(0))
            if observed.size:
                self.data_min_[j] = observed.min()
                self.data_range_[j] = observed.max() - observed.min()
        # A categorical column never active still needs one category to embed (always inactive).
        pairs = zip(self.categories_, self.is_categorical_.tolist(), strict=True)
        n_categories = [max(1, len(codes)) if cat else 0 for codes, cat in pairs]
        self.features_ = FeatureSpec(np.array(n_categories, dtype=int))

    # -- encoding ------------------------------------------------------------------------
    def _encode(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Encoded matrix (inactive entries 0) and the ``active = ~isnan(X)`` mask."""
        active = ~np.isnan(X)
        X_enc = np.zeros_like(X, dtype=np.float64)
        for j in range(X.shape[1]):
            rows = active[:, j]
            if self.is_categorical_[j]:
                X_enc[rows, j] = self._encode_codes(X[rows, j], j)
            else:
                X_enc[rows, j] = self._scale(X[rows, j], j)
        return X_enc, active

    def _scale(self, values: np.ndarray, j: int) -> np.ndarray:
        """Min-max scaling of column ``j`` to [0, 1], clipped; constant (or unseen) -> 0.5."""
        low, width = self.data_min_[j], self.data_range_[j]
        if not np.isfinite(width) or width <= 0.0:
            return np.full(values.shape, 0.5)
        return np.clip((values - low) / width, 0.0, 1.0)

    def _encode_codes(self, values: np.ndarray, j: int) -> np.ndarray:
        """Category codes of column ``j`` -> choice index ``0..K-1``; unseen codes raise."""
        known = self.categories_[j]
        index = np.searchsorted(known, values)
        found = index < len(known)
        found[found] = known[index[found]] == values[found]
        if not np.all(found):
            unseen = np.unique(values[~found])
            raise ValueError(
                f"{type(self).__name__}: column {j} (categorical) holds codes {unseen.tolist()} "
                f"not seen in fit (seen: {known.tolist()})."
            )
        return index.astype(np.float64)

    # -- prediction ----------------------------------------------------------------------
    @single_threaded()
    def predict(self, X: Any, return_std: bool = False) -> np.ndarray | tuple[np.ndarray, ...]:
        """Posterior mean of the latent ``f`` at ``X`` and, if ``return_std``, its std.

        The std is that of the latent function (observation noise excluded), in the units of
        ``y``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, ensure_all_finite="allow-nan")
        X_enc, active = self._encode(np.asarray(X, dtype=np.float64))
        mean, var = self.model_.predict(X_enc, active)
        mean = mean * self.y_spread_ + self.y_centre_
        if return_std:
            return mean, np.sqrt(var) * self.y_spread_
        return mean


class CondGPRegressor(_ConditionalRegressor):
    """Gaussian-process regressor for conditional inputs, where ``NaN`` means *inactive*.

    The model is :class:`~condsamplers.models.gp.ExactGP`: ``y = f(x) + eps`` with
    ``f ~ GP(beta, s * R(x, x'))`` (``R`` the kernel's correlation) on standardised ``y``,
    hyperparameters fit by maximising the log marginal likelihood plus log priors (Rasmussen &
    Williams 2006, eq. 2.30) from several L-BFGS-B starts. The constant ``beta`` is the mean of
    ``y``, except with ``kernel="bn"``: there, as in Zhang et al.'s model (eq. 1) and in
    ``BNGPSampler``, its generalised-least-squares estimate, whose uncertainty the predictive
    variance includes.

    Args:
        kernel: ``"arc"``: the arc kernel (Swersky et al. 2014, eq. 3-4), where two rows that
            both lack a feature agree on it and a row that has it differs from one that lacks it
            by a learnt distance ``omega_i``; ``"bn"``: the branching-and-nested kernel of Zhang
            et al. (eq. 4-5, Definition 1), with each ``NaN``-able column nested in the discrete
            column whose values decide when it is present
            (:func:`~condsamplers.space.infer_parents`); ``"matern"``: the paper's "GP"
            baseline, an ARD Matern-5/2 kernel on the encoding with inactive features imputed
            (by 0, the value the encoding stores for them).
        n_restarts: random restarts of the hyperparameter fit, besides the default start.
        categorical_features: indices of the columns that hold category codes (non-negative
            integers, ``NaN`` when inactive); ``None``: every column is numerical.
        random_state: seed (int, ``RandomState`` or ``None``) of the random restarts.
        min_noise: floor of the noise variance in units of the standardised ``y`` (like
            scikit-learn's ``alpha``); raise it (e.g. to 0.03) for noisy data whose fit would
            otherwise interpolate.

    Attributes:
        model_: the fitted :class:`~condsamplers.models.gp.ExactGP`.
        n_features_in_: number of columns of ``X`` seen in :meth:`fit`.
        features_: the :class:`~condsamplers.space.FeatureSpec` of the encoded columns.
        is_categorical_: boolean mask of the categorical columns.
        data_min_: per column, the minimum of the active training values (``NaN`` for
            categorical columns and for columns never active).
        data_range_: per column, the range of the active training values (0 for a constant
            column, which is mapped to 0.5; ``NaN`` for categorical columns).
        categories_: per column, the sorted category codes seen in training (an empty array
            for numerical columns); code ``categories_[j][k]`` is encoded as choice ``k``.

    Notes:
        Numerical values seen at predict time outside the training range are clipped to it
        (to [0, 1] after scaling). The arc embedding of eq. 3,
        ``omega_i [sin(pi rho_i x_i), cos(pi rho_i x_i)]``, is periodic in ``x_i`` with period
        ``2 / rho_i``: unclipped, a value far beyond the range would alias onto a value inside
        it. Clipping makes the prediction constant beyond the range instead.
    """

    def __init__(
        self,
        kernel: str = "arc",
        n_restarts: int = 2,
        categorical_features: Sequence[int] | None = None,
        random_state: int | np.random.RandomState | None = None,
        min_noise: float = MIN_NOISE,
    ) -> None:
        self.kernel = kernel
        self.n_restarts = n_restarts
        self.categorical_features = categorical_features
        self.random_state = random_state
        self.min_noise = min_noise

    def _make_model(self, seed: int) -> Surrogate:
        return ExactGP(
            kernel=self.kernel,
            n_restarts=int(self.n_restarts),
            seed=seed,
            min_noise=float(self.min_noise),
        )

    def _check_model_params(self) -> None:
        self._check_gp_params()
        if not isinstance(self.kernel, str) or self.kernel not in KERNELS:
            raise ValueError(
                f"CondGPRegressor: kernel={self.kernel!r} is not known; "
                f"use one of {sorted(KERNELS)}."
            )


class TreeGPRegressor(_ConditionalRegressor):
    """Jenatton et al.'s (2017) tree-structured GP as a regressor; ``NaN`` means *inactive*.

    The model is :class:`~condsamplers.models.tree_gp.TreeGP` (eq. 1 with the random linear
    inner-node functions of sec. 2.4): one Matern-5/2 GP per leaf of the tree, plus linear
    functions of the shared features at the inner nodes (their values and, by default, random
    Fourier features of them, sec. 4.3), whose weights are integrated out
    (eq. 3-4). The tree's leaves are the distinct patterns of active (non-``NaN``) columns of
    the training ``X``, or ``paths`` if given; inner nodes hold the columns active on several
    leaves. A row at predict time whose pattern is no leaf gets the prior of its inner nodes.

    Args:
        leaf_inputs: ``"path"``: each leaf GP sees every column active on that leaf;
            ``"leaf"``: only the columns active on that leaf alone (shared ones act linearly).
        independent: ``c = 0``: independent GPs per leaf (the paper's baseline).
        inner_basis: ``"linear"`` (sec. 2.4) or ``"fourier"`` (sec. 4.3: random Fourier
            features of each shared numerical column, with a variance of its own, so shared
            columns act non-linearly across leaves).
        paths: the leaves, as lists of column indices active together (one list per leaf);
            leaves without training rows are allowed. ``None``: the patterns seen in ``fit``.
        n_restarts: as for :class:`CondGPRegressor`.
        categorical_features: as for :class:`CondGPRegressor`.
        random_state: as for :class:`CondGPRegressor`.
        min_noise: as for :class:`CondGPRegressor`.

    Attributes:
        model_: the fitted :class:`~condsamplers.models.tree_gp.TreeGP`
            (``model_.structure_.describe()`` prints the tree).
        n_features_in_, features_, is_categorical_, data_min_, data_range_, categories_: as
            for :class:`CondGPRegressor`.
    """

    def __init__(
        self,
        leaf_inputs: str = "path",
        independent: bool = False,
        inner_basis: str = "fourier",
        paths: Sequence[Sequence[int]] | None = None,
        n_restarts: int = 2,
        categorical_features: Sequence[int] | None = None,
        random_state: int | np.random.RandomState | None = None,
        min_noise: float = MIN_NOISE,
    ) -> None:
        self.leaf_inputs = leaf_inputs
        self.independent = independent
        self.inner_basis = inner_basis
        self.paths = paths
        self.n_restarts = n_restarts
        self.categorical_features = categorical_features
        self.random_state = random_state
        self.min_noise = min_noise

    def _make_model(self, seed: int) -> Surrogate:
        return TreeGP(
            leaf_inputs=self.leaf_inputs,
            independent=bool(self.independent),
            inner_basis=self.inner_basis,
            n_restarts=int(self.n_restarts),
            seed=seed,
            min_noise=float(self.min_noise),
        )

    def _check_model_params(self) -> None:
        self._check_gp_params()
        if self.leaf_inputs not in LEAF_INPUTS:
            raise ValueError(
                f"TreeGPRegressor: leaf_inputs={self.leaf_inputs!r} is not known; "
                f"use one of {LEAF_INPUTS}."
            )
        if self.inner_basis not in INNER_BASES:
            raise ValueError(
                f"TreeGPRegressor: inner_basis={self.inner_basis!r} is not known; "
                f"use one of {INNER_BASES}."
            )
        if not isinstance(self.independent, (bool, np.bool_)):
            raise ValueError(
                f"TreeGPRegressor: independent={self.independent!r} must be True or False."
            )

    def _leaf_patterns(self, active: np.ndarray) -> tuple[frozenset[int], ...] | None:
        if self.paths is None:
            return None
        d = active.shape[1]
        if isinstance(self.paths, (str, bytes)) or not isinstance(self.paths, Iterable):
            raise ValueError(
                "TreeGPRegressor: paths must be None or a list of lists of column indices; "
                f"got {self.paths!r}."
            )
        patterns = []
        for path in self.paths:
            if isinstance(path, (str, bytes)) or not isinstance(path, Iterable):
                raise ValueError(
                    f"TreeGPRegressor: each entry of paths must be a list of column indices; "
                    f"got {path!r}."
                )
            columns = list(path)
            if not all(
                isinstance(j, numbers.Integral)
                and not isinstance(j, (bool, np.bool_))
                and 0 <= int(j) < d
                for j in columns
            ):
                raise ValueError(
                    f"TreeGPRegressor: paths entry {columns!r} must hold column indices in "
                    f"[0, {d - 1}]."
                )
            patterns.append(frozenset(int(j) for j in columns))
        return tuple(patterns)


class DNGORegressor(_ConditionalRegressor):
    """Snoek et al.'s (2015) DNGO as a regressor over conditional inputs; ``NaN`` = inactive.

    The model is :class:`~condsamplers.models.dngo.DNGO`: a tanh network trained by MAP on
    ``(X, y)``, whose last hidden layer is the basis of a Bayesian linear regression (eq. 4-8)
    with ``alpha``, ``beta`` maximising the marginal likelihood. The network sees each
    column's scaled value (0 when inactive), one-hot codes of categorical columns and the
    active flags. Fitting costs ``O(n)``; ``random_state`` fixes the initial network, the
    mini-batches and the restarts, so a fit is reproducible.

    Args:
        hidden_sizes: widths of the hidden layers (the paper's 3 x 50).
        n_epochs: training epochs of the network.
        max_updates: cap on the Adam steps of one fit.
        batch_size: mini-batch size.
        learning_rate: initial Adam step size.
        weight_decay: L2 penalty on the network weights.
        integrate_hyperparameters: average over a posterior grid of ``(alpha, beta)``.
        quadratic_prior_mean: the quadratic prior mean of eq. 9 (a bowl centred in the box of
            the scaled training range).
        n_restarts: random restarts of the ``alpha``, ``beta`` fit.
        categorical_features: as for :class:`CondGPRegressor`.
        random_state: as for :class:`CondGPRegressor`.
        device: ``"cpu"`` or ``"cuda"``.

    Attributes:
        model_: the fitted :class:`~condsamplers.models.dngo.DNGO`.
        n_features_in_, features_, is_categorical_, data_min_, data_range_, categories_: as
            for :class:`CondGPRegressor`.
    """

    def __init__(
        self,
        hidden_sizes: Sequence[int] = (50, 50, 50),
        n_epochs: int = 500,
        max_updates: int = 3000,
        batch_size: int = 16,
        learning_rate: float = 1e-2,
        weight_decay: float = 1e-5,
        integrate_hyperparameters: bool = False,
        quadratic_prior_mean: bool = False,
        n_restarts: int = 2,
        categorical_features: Sequence[int] | None = None,
        random_state: int | np.random.RandomState | None = None,
        device: str = "cpu",
    ) -> None:
        self.hidden_sizes = hidden_sizes
        self.n_epochs = n_epochs
        self.max_updates = max_updates
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.integrate_hyperparameters = integrate_hyperparameters
        self.quadratic_prior_mean = quadratic_prior_mean
        self.n_restarts = n_restarts
        self.categorical_features = categorical_features
        self.random_state = random_state
        self.device = device

    def _make_model(self, seed: int = 0) -> Surrogate:
        return DNGO(
            hidden_sizes=self.hidden_sizes,
            n_epochs=self.n_epochs,
            max_updates=self.max_updates,
            batch_size=self.batch_size,
            learning_rate=self.learning_rate,
            weight_decay=self.weight_decay,
            integrate_hyperparameters=_check_bool(self, "integrate_hyperparameters"),
            quadratic_prior_mean=_check_bool(self, "quadratic_prior_mean"),
            n_restarts=self.n_restarts,
            seed=seed,
            device=self.device,
        )

    def _check_model_params(self) -> None:
        _check_model_options(self, "DNGO")


class BOHAMIANNRegressor(_ConditionalRegressor):
    """Springenberg et al.'s (2016) BOHAMIANN as a regressor; ``NaN`` = inactive.

    The model is :class:`~condsamplers.models.bohamiann.BOHAMIANN`: a Bayesian tanh network
    whose weights, weight precision and noise are sampled by scale-adapted SGHMC (supplement
    D.1). ``predict`` returns the mean over the kept samples and, with ``return_std``, the
    standard deviation of the latent function across them (noise excluded; it is
    ``model_.noise_variance()``). The samples are drawn in ``fit`` with ``random_state``, so
    predictions are deterministic and a fit is reproducible.

    Args:
        hidden_sizes: widths of the hidden layers (D.1: 3 x 50).
        n_burn_in: burn-in steps of the chain.
        n_samples: samples kept.
        keep_every: steps between two kept samples.
        step_size: SGHMC step size.
        batch_size: mini-batch size.
        noise_prior_median: the median of the log-normal prior on the noise variance
            (standardised ``y``).
        noise_prior_log_var: the variance of ``log sigma^2`` under that prior.
        categorical_features: as for :class:`CondGPRegressor`.
        random_state: as for :class:`CondGPRegressor`.
        device: ``"cpu"`` or ``"cuda"``.

    Attributes:
        model_: the fitted :class:`~condsamplers.models.bohamiann.BOHAMIANN`.
        n_features_in_, features_, is_categorical_, data_min_, data_range_, categories_: as
            for :class:`CondGPRegressor`.
    """

    def __init__(
        self,
        hidden_sizes: Sequence[int] = (50, 50, 50),
        n_burn_in: int = 5000,
        n_samples: int = 50,
        keep_every: int = 50,
        step_size: float = 1e-2,
        batch_size: int = 20,
        noise_prior_median: float = 1e-2,
        noise_prior_log_var: float = 1.0,
        categorical_features: Sequence[int] | None = None,
        random_state: int | np.random.RandomState | None = None,
        device: str = "cpu",
    ) -> None:
        self.hidden_sizes = hidden_sizes
        self.n_burn_in = n_burn_in
        self.n_samples = n_samples
        self.keep_every = keep_every
        self.step_size = step_size
        self.batch_size = batch_size
        self.noise_prior_median = noise_prior_median
        self.noise_prior_log_var = noise_prior_log_var
        self.categorical_features = categorical_features
        self.random_state = random_state
        self.device = device

    def _make_model(self, seed: int = 0) -> Surrogate:
        return BOHAMIANN(
            hidden_sizes=self.hidden_sizes,
            n_burn_in=self.n_burn_in,
            n_samples=self.n_samples,
            keep_every=self.keep_every,
            step_size=self.step_size,
            batch_size=self.batch_size,
            noise_prior_median=self.noise_prior_median,
            noise_prior_log_var=self.noise_prior_log_var,
            seed=seed,
            device=self.device,
        )

    def _check_model_params(self) -> None:
        _check_model_options(self, "BOHAMIANN")


def _check_bool(estimator: _ConditionalRegressor, name: str) -> bool:
    value = getattr(estimator, name)
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{type(estimator).__name__}: {name}={value!r} must be True or False.")
    return bool(value)


def _check_model_options(estimator: _ConditionalRegressor, model_name: str) -> None:
    """Build the model once to validate its options; its ValueError names the parameter,
    re-raised under the estimator's name."""
    try:
        estimator._make_model()
    except ValueError as error:
        message = str(error).replace(f"{model_name}: ", "", 1)
        raise ValueError(f"{type(estimator).__name__}: {message}") from None


def _check_codes(values: np.ndarray, j: int, estimator: str) -> None:
    """Category codes must be non-negative integers."""
    if np.any(values < 0) or np.any(values != np.round(values)):
        bad = values[(values < 0) | (values != np.round(values))]
        raise ValueError(
            f"{estimator}: categorical column {j} must hold non-negative integer codes "
            f"(NaN when inactive); got {np.unique(bad)[:5].tolist()}."
        )
