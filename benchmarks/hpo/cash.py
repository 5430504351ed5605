"""CASH tasks: hyperopt-sklearn's classic search space, declared as data, on small sklearn data.

The space is hyperopt-sklearn 1.1.1's ``HyperoptEstimator(classifier=any_classifier('c'),
preprocessing=any_preprocessing('p'))`` (and the same with ``any_regressor``): one
preprocessing step (``pca``, ``standard_scaler``, ``min_max_scaler``, ``normalizer``) and one
estimator (``svc`` / ``svr``, ``knn``, ``random_forest``, ``extra_trees``, ``ada_boost``,
``grad_boosting``, ``sgd``, ``xgboost``), with the ranges of hpsklearn's component files, read
parameter by parameter:

* ``hp.choice`` / ``hp.pchoice`` -> categorical (``None`` kept as a choice);
* ``hp.uniform`` / ``hp.loguniform`` -> float (``log=True`` for loguniform);
* ``scope.int(hp.qloguniform(log a, log b, 1))`` -> int ``round(a)..round(b)``, ``log=True``
  (e.g. ``qloguniform(log 9.5, log 3000.5, 1)`` -> 10..3000); ``scope.int(hp.uniform(a, b))``
  -> int ``a..b-1`` (``int`` truncates); ``scope.int(hp.loguniform(log a, log b))`` -> int
  ``a..b-1``, ``log=True``;
* a choice between a constant and a nested draw (``min_samples_leaf`` = 1 or a qloguniform,
  ``max_features`` = a named option or a uniform fraction) -> a categorical parent and a
  conditional child (``*.min_samples_leaf.gt1``, ``*.max_features.frac``);
* constants hpsklearn fixes are fixed in :func:`build_pipeline`, as hpsklearn does.

hpsklearn draws every parameter of a component whether or not the component uses it; where
sklearn ignores a parameter given another, the declaration makes it conditional instead, which
changes nothing the estimator computes: SVM ``degree`` only for ``kernel='poly'``, ``gamma``
for poly / rbf / sigmoid, ``coef0`` for poly / sigmoid; k-NN ``p`` only for
``metric='minkowski'`` and ``leaf_size`` only for the tree algorithms (auto / ball_tree /
kd_tree); SGD ``l1_ratio`` only for ``penalty='elasticnet'``, ``eta0`` only for the constant /
invscaling / adaptive schedules and ``power_t`` only for invscaling; gradient-boosting
regression ``alpha`` only for ``loss='huber'``.

What could not be translated exactly, and why (everything else is hpsklearn's):

1. **Searched random seeds dropped.** hpsklearn searches ``random_state`` as
   ``hp.randint(5)`` for svc/svr, forests, trees, AdaBoost, gradient boosting, SGD and XGBoost
   (``seed``). Here every estimator has ``random_state=0`` (a seed is not a hyperparameter of a
   benchmark and would only add noise).
2. **Normal and log-normal priors become (log-)uniform ranges over their central 95%**, mean
   +- 2 sd, since a declaration has bounded ranges only: ``svc.C`` / ``svr.C``
   (``hp.normal(1.0, 0.2)``) -> float 0.6..1.4; the learning rate of AdaBoost and gradient
   boosting (``hp.lognormal(log 0.01, log 10)``) -> float 1e-4..1, log.
3. **pchoice weights are dropped**: a categorical carries no prior, so e.g. forest
   ``max_depth`` (None 0.7, 2 / 3 / 4 0.1 each) is a uniform categorical (the space is the
   same; only the prior a random sampler draws from differs). Likewise the bins of hyperopt's
   ``q*`` distributions get the prior of an Optuna int (uniform, or log-uniform rounded) rather
   than hyperopt's exact bin masses (e.g. the last bin of a ``quniform`` has half width).
4. **Affine maps move into the builder.** ``pca.n_components`` is hyperopt's label: an int
   ``k`` in 1..30 (log) and PCA gets ``4 * k`` components, limited to
   ``min(n_samples, n_features)`` of the training fold at fit, as hpsklearn does.
   ``xgboost.n_estimators_div200`` is an int ``j`` in 1..30 and XGBoost gets ``200 * j`` trees
   (hpsklearn's ``quniform(100, 6000, 200)``: multiples of 200 from 200 to 6000).
   ``xgboost.learning_rate``, ``xgboost.gamma`` and ``xgboost.reg_alpha`` hold hpsklearn's
   log-uniform draw (1e-4..0.5, 1e-4..5, 1e-4..1) and the builder subtracts 1e-4, as hpsklearn
   does (``hp.loguniform(...) - 0.0001``), so each can reach 0.
5. ``*.max_features.frac`` is ``hp.uniform(0, 1)``; sklearn rejects a fraction of exactly 0,
   which the builder maps to its limit from above (one feature) so the range's boundary is
   not a failure.
6. ``n_jobs=1`` everywhere (hpsklearn gives XGBoost ``n_jobs=-1``).

Not deviations, but worth knowing: with the installed scikit-learn (1.9), gradient boosting's
``criterion`` is deprecated and has no effect, so ``grad_boosting.criterion`` stays in the
space (as hpsklearn searches it) but is not passed on; ``svc.decision_function_shape`` does not
change ``predict`` either, nor does the regression ``extra_trees.criterion`` (sklearn 1.9:
``friedman_mse`` "maps to squared_error as both were always equivalent"; the builder passes
``squared_error`` for it). These are inert dimensions of the real space.

The objective is not hpsklearn's loss: 3-fold cross-validation error (classification: 1 -
accuracy, stratified; regression: RMSE of the target standardised to unit variance), see
:func:`evaluate`. A failing configuration (an exception in fit / predict, or a non-finite
score) gets the worst value: 1.0 for classification, the RMSE of predicting the training mean
for regression. Some failures are hpsklearn's own: e.g. gradient boosting's
``loss='exponential'`` on a multi-class problem. Note that regression values are not capped:
a diverging SGD can score far above 1.

Evaluations are cached on disk (SQLite, :func:`cached`), keyed by task name and canonical
configuration; ``CONDSAMPLERS_BENCH_CACHE`` overrides the path.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
import sqlite3
import time
import warnings
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.decomposition import PCA
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MinMaxScaler, Normalizer, StandardScaler

from benchmarks.hpo.spec import Config, Param, Task, check_space

logger = logging.getLogger(__name__)

Evaluate = Callable[[Config], tuple[float, dict[str, float]]]

CLASSIFIERS = (
    "svc",
    "knn",
    "random_forest",
    "extra_trees",
    "ada_boost",
    "grad_boosting",
    "sgd",
    "xgboost",
)
REGRESSORS = ("svr", *CLASSIFIERS[1:])  # the same families, SVR for SVC
PREPROCESSORS = ("pca", "standard_scaler", "min_max_scaler", "normalizer")

BOOL = (True, False)


def _cat(name: str, choices: tuple[Any, ...], parent: str, *values: Any) -> Param:
    return Param(name, "categorical", choices=choices, parent=parent, values=values)


def _int(name: str, low: int, high: int, parent: str, *values: Any, log: bool = False) -> Param:
    return Param(name, "int", low=low, high=high, log=log, parent=parent, values=values)


def _float(
    name: str, low: float, high: float, parent: str, *values: Any, log: bool = False
) -> Param:
    return Param(name, "float", low=low, high=high, log=log, parent=parent, values=values)


# ---- the space ------------------------------------------------------------------------------


def _preprocessing_space() -> tuple[Param, ...]:
    """hpsklearn's ``any_preprocessing``: components/decomposition/_pca.py and
    components/preprocessing/_data.py."""
    root = "preprocessing"
    return (
        Param(root, "categorical", choices=PREPROCESSORS),
        # 4 * scope.int(qloguniform(log 0.51, log 30.5, 1)): k in 1..30, PCA gets 4k.
        _int("pca.n_components", 1, 30, root, "pca", log=True),
        _cat("pca.whiten", BOOL, root, "pca"),
        _cat("standard_scaler.with_mean", BOOL, root, "standard_scaler"),
        _cat("standard_scaler.with_std", BOOL, root, "standard_scaler"),
        # feature_range = (choice([-1.0, 0.0]), 1.0)
        _cat("min_max_scaler.feature_min", (-1.0, 0.0), root, "min_max_scaler"),
        _cat("min_max_scaler.clip", BOOL, root, "min_max_scaler"),
        _cat("normalizer.norm", ("l1", "l2", "max"), root, "normalizer"),
    )


def _svm_space(root: str, name: str, regression: bool) -> tuple[Param, ...]:
    """components/svm/_classes.py: ``svc`` (``_svc_hp_space``) or ``svr``
    (``_svr_one_class_hp_space``)."""
    kernel = f"{name}.kernel"
    params = [
        # hp.normal(1.0, 0.20): mean +- 2 sd (deviation 2).
        _float(f"{name}.C", 0.6, 1.4, root, name),
        _cat(kernel, ("linear", "poly", "rbf", "sigmoid"), root, name),
        _cat(f"{name}.degree", (1, 2, 3, 4, 5), kernel, "poly"),
        _cat(f"{name}.gamma", ("auto", "scale"), kernel, "poly", "rbf", "sigmoid"),
        _float(f"{name}.coef0", 0.0, 1.0, kernel, "poly", "sigmoid"),
        _cat(f"{name}.shrinking", BOOL, root, name),
        _float(f"{name}.tol", 1e-5, 1e-2, root, name, log=True),
    ]
    if regression:
        params.append(_float(f"{name}.epsilon", 0.05, 0.15, root, name))
    else:
        params.append(_cat(f"{name}.decision_function_shape", ("ovo", "ovr"), root, name))
    return tuple(params)


def _knn_space(root: str) -> tuple[Param, ...]:
    """components/neighbors/_regression.py ``neighbors_hp_space`` and ``k_neighbors_*``."""
    name = "knn"
    algorithm, metric = f"{name}.algorithm", f"{name}.metric"
    return (
        # scope.int(hp.uniform(1, 15))
        _int(f"{name}.n_neighbors", 1, 14, root, name),
        _cat(f"{name}.weights", ("uniform", "distance"), root, name),
        _cat(algorithm, ("auto", "ball_tree", "kd_tree", "brute"), root, name),
        # scope.int(hp.uniform(20, 40)); brute force has no leaves.
        _int(f"{name}.leaf_size", 20, 39, algorithm, "auto", "ball_tree", "kd_tree"),
        _cat(metric, ("cityblock", "l1", "l2", "minkowski", "euclidean", "manhattan"), root, name),
        _float(f"{name}.p", 1.0, 5.0, metric, "minkowski"),
    )


def _max_features(name: str, parent: str, *values: Any) -> tuple[Param, ...]:
    """pchoice(sqrt 0.2, log2 0.1, None 0.1, hp.uniform(0, 1) 0.6)."""
    return (
        _cat(f"{name}.max_features", ("sqrt", "log2", None, "frac"), parent, *values),
        _float(f"{name}.max_features.frac", 0.0, 1.0, f"{name}.max_features", "frac"),
    )


def _min_samples_leaf(name: str, root: str) -> tuple[Param, ...]:
    """choice(1, scope.int(qloguniform(log 1.5, log 50.5, 1)))."""
    return (
        _cat(f"{name}.min_samples_leaf", (1, "gt1"), root, name),
        _int(f"{name}.min_samples_leaf.gt1", 2, 50, f"{name}.min_samples_leaf", "gt1", log=True),
    )


_MAX_LEAF_NODES = (None, 5, 10, 15)
_MIN_IMPURITY_DECREASE = (0.0, 0.01, 0.02, 0.05)


def _forest_space(root: str, regression: bool) -> tuple[Param, ...]:
    """components/ensemble/_forest.py ``_forest_hp_space`` and ``random_forest_*``."""
    name = "random_forest"
    criterion = ("squared_error", "absolute_error") if regression else ("gini", "entropy")
    params = [
        # scope.int(qloguniform(log 9.5, log 3000.5, 1))
        _int(f"{name}.n_estimators", 10, 3000, root, name, log=True),
        _cat(f"{name}.criterion", criterion, root, name),
        _cat(f"{name}.max_depth", (None, 2, 3, 4), root, name),
        _cat(f"{name}.min_samples_split", (2, 3), root, name),
        *_min_samples_leaf(name, root),
        *_max_features(name, root, name),
        _cat(f"{name}.max_leaf_nodes", _MAX_LEAF_NODES, root, name),
        _cat(f"{name}.min_impurity_decrease", _MIN_IMPURITY_DECREASE, root, name),
        _cat(f"{name}.bootstrap", BOOL, root, name),
    ]
    if not regression:
        params.append(
            _cat(f"{name}.class_weight", ("balanced", "balanced_subsample", None), root, name)
        )
    return tuple(params)


def _extra_tree_space(root: str, regression: bool) -> tuple[Param, ...]:
    """components/tree/_classes.py ``_tree_hp_space`` and ``extra_tree_*``: any_classifier's
    ``extra_trees`` is one ``ExtraTreeClassifier`` (``extra_tree_classifier``), not the
    ensemble; ``_tree_hp_space`` fixes min_samples_split=2, min_samples_leaf=1,
    min_weight_fraction_leaf=0 and min_impurity_decrease=0 (its defaults are not None)."""
    name = "extra_trees"
    criterion = ("squared_error", "friedman_mse") if regression else ("gini", "entropy")
    return (
        _cat(f"{name}.criterion", criterion, root, name),
        _cat(f"{name}.splitter", ("best", "random"), root, name),
        _cat(f"{name}.max_depth", (None, 2, 3, 4), root, name),
        *_max_features(name, root, name),
        _cat(f"{name}.max_leaf_nodes", _MAX_LEAF_NODES, root, name),
    )


def _ada_boost_space(root: str, regression: bool) -> tuple[Param, ...]:
    """components/ensemble/_weight_boosting.py."""
    name = "ada_boost"
    params = [
        # scope.int(qloguniform(log 10.5, log 1000.5, 1))
        _int(f"{name}.n_estimators", 11, 1000, root, name, log=True),
        # hp.lognormal(log 0.01, log 10): mean +- 2 sd in log space (deviation 2).
        _float(f"{name}.learning_rate", 1e-4, 1.0, root, name, log=True),
    ]
    if regression:
        params.append(_cat(f"{name}.loss", ("linear", "square", "exponential"), root, name))
    return tuple(params)


def _grad_boosting_space(root: str, regression: bool) -> tuple[Param, ...]:
    """components/ensemble/_gb.py ``_gb_hp_space`` and ``gradient_boosting_*``."""
    name = "grad_boosting"
    loss = f"{name}.loss"
    if regression:
        head = (
            _cat(loss, ("squared_error", "absolute_error", "huber"), root, name),
            _float(f"{name}.alpha", 0.85, 0.95, loss, "huber"),
        )
    else:
        head = (_cat(loss, ("log_loss", "exponential"), root, name),)
    return (
        *head,
        # hp.lognormal(log 0.01, log 10): mean +- 2 sd in log space (deviation 2).
        _float(f"{name}.learning_rate", 1e-4, 1.0, root, name, log=True),
        # scope.int(qloguniform(log 10.5, log 1000.5, 1))
        _int(f"{name}.n_estimators", 11, 1000, root, name, log=True),
        _cat(f"{name}.criterion", ("friedman_mse", "squared_error"), root, name),
        _cat(f"{name}.min_samples_split", (2, 3), root, name),
        *_min_samples_leaf(name, root),
        _cat(f"{name}.max_depth", (2, 3, 4, 5), root, name),
        _cat(f"{name}.min_impurity_decrease", _MIN_IMPURITY_DECREASE, root, name),
        *_max_features(name, root, name),
        _cat(f"{name}.max_leaf_nodes", _MAX_LEAF_NODES, root, name),
    )


def _sgd_space(root: str, regression: bool) -> tuple[Param, ...]:
    """components/linear_model/_stochastic_gradient.py."""
    name = "sgd"
    if regression:
        losses: tuple[str, ...] = (
            "squared_error",
            "huber",
            "epsilon_insensitive",
            "squared_epsilon_insensitive",
        )
    else:
        losses = (
            "hinge",
            "log_loss",
            "modified_huber",
            "squared_hinge",
            "perceptron",
            "squared_error",
            "huber",
            "epsilon_insensitive",
            "squared_epsilon_insensitive",
        )
    penalty, schedule = f"{name}.penalty", f"{name}.learning_rate"
    return (
        _cat(f"{name}.loss", losses, root, name),
        _cat(penalty, ("l2", "l1", "elasticnet"), root, name),
        _float(f"{name}.alpha", 1e-6, 1e-1, root, name, log=True),
        _float(f"{name}.l1_ratio", 1e-7, 1.0, penalty, "elasticnet", log=True),
        # scope.int(hp.uniform(750, 1250))
        _int(f"{name}.max_iter", 750, 1249, root, name),
        _float(f"{name}.tol", 1e-5, 1e-2, root, name, log=True),
        _cat(schedule, ("optimal", "invscaling", "constant", "adaptive"), root, name),
        _float(
            f"{name}.eta0", 1e-5, 1e-1, schedule, "invscaling", "constant", "adaptive", log=True
        ),
        _float(f"{name}.power_t", 0.0, 1.0, schedule, "invscaling"),
        _cat(f"{name}.n_iter_no_change", (4, 5, 6), root, name),
    )


def _xgboost_space(root: str) -> tuple[Param, ...]:
    """components/xgboost.py ``_xgboost_hp_space``."""
    name = "xgboost"
    return (
        # scope.int(hp.uniform(1, 11))
        _int(f"{name}.max_depth", 1, 10, root, name),
        # hp.loguniform(log 1e-4, log 0.5) - 1e-4: the builder subtracts 1e-4 (deviation 4).
        _float(f"{name}.learning_rate", 1e-4, 0.5, root, name, log=True),
        # scope.int(hp.quniform(100, 6000, 200)): 200 * j trees (deviation 4).
        _int(f"{name}.n_estimators_div200", 1, 30, root, name),
        # hp.loguniform(log 1e-4, log 5) - 1e-4
        _float(f"{name}.gamma", 1e-4, 5.0, root, name, log=True),
        # scope.int(hp.loguniform(log 1, log 100))
        _int(f"{name}.min_child_weight", 1, 99, root, name, log=True),
        _float(f"{name}.subsample", 0.5, 1.0, root, name),
        _float(f"{name}.colsample_bytree", 0.5, 1.0, root, name),
        _float(f"{name}.colsample_bylevel", 0.5, 1.0, root, name),
        # hp.loguniform(log 1e-4, log 1) - 1e-4
        _float(f"{name}.reg_alpha", 1e-4, 1.0, root, name, log=True),
        _float(f"{name}.reg_lambda", 1.0, 4.0, root, name, log=True),
    )


def _estimator_space(regression: bool) -> tuple[Param, ...]:
    root = "regressor" if regression else "classifier"
    svm = "svr" if regression else "svc"
    return (
        Param(root, "categorical", choices=REGRESSORS if regression else CLASSIFIERS),
        *_svm_space(root, svm, regression),
        *_knn_space(root),
        *_forest_space(root, regression),
        *_extra_tree_space(root, regression),
        *_ada_boost_space(root, regression),
        *_grad_boosting_space(root, regression),
        *_sgd_space(root, regression),
        *_xgboost_space(root),
    )


def classifier_space() -> tuple[Param, ...]:
    """``any_preprocessing('p')`` then ``any_classifier('c')``."""
    space = _preprocessing_space() + _estimator_space(regression=False)
    check_space(space)
    return space


def regressor_space() -> tuple[Param, ...]:
    """``any_preprocessing('p')`` then ``any_regressor('r')``."""
    space = _preprocessing_space() + _estimator_space(regression=True)
    check_space(space)
    return space


# ---- the pipeline ---------------------------------------------------------------------------


class LimitedPCA(PCA):
    """PCA whose ``n_components`` is limited to ``min(n_samples, n_features)`` of the data it is
    fitted on, as hpsklearn's ``_run_preprocs`` does before fitting a PCA."""

    def _limit(self, X: Any) -> None:
        if isinstance(self.n_components, int):
            self.n_components = min(self.n_components, *np.shape(X))

    def fit(self, X: Any, y: Any = None) -> LimitedPCA:
        self._limit(X)
        return super().fit(X, y)

    def fit_transform(self, X: Any, y: Any = None) -> Any:
        self._limit(X)
        return super().fit_transform(X, y)


def _preprocessor(config: Config) -> Any:
    kind = config["preprocessing"]
    if kind == "pca":
        return LimitedPCA(
            n_components=4 * int(config["pca.n_components"]),
            whiten=bool(config["pca.whiten"]),
            copy=True,
        )
    if kind == "standard_scaler":
        return StandardScaler(
            copy=True,
            with_mean=bool(config["standard_scaler.with_mean"]),
            with_std=bool(config["standard_scaler.with_std"]),
        )
    if kind == "min_max_scaler":
        return MinMaxScaler(
            feature_range=(float(config["min_max_scaler.feature_min"]), 1.0),
            copy=True,
            clip=bool(config["min_max_scaler.clip"]),
        )
    if kind == "normalizer":
        return Normalizer(norm=config["normalizer.norm"], copy=True)
    raise ValueError(f"unknown preprocessing {kind!r}")


def _max_features_value(config: Config, name: str) -> Any:
    choice = config[f"{name}.max_features"]
    if choice != "frac":
        return choice
    frac = float(config[f"{name}.max_features.frac"])
    return frac if frac > 0.0 else 1  # 0 -> its limit from above: one feature (deviation 5)


def _min_samples_leaf_value(config: Config, name: str) -> int:
    choice = config[f"{name}.min_samples_leaf"]
    return 1 if choice == 1 else int(config[f"{name}.min_samples_leaf.gt1"])


def _svm(config: Config, regression: bool) -> Any:
    from sklearn.svm import SVC, SVR

    name = "svr" if regression else "svc"
    kernel = config[f"{name}.kernel"]
    common = dict(
        C=float(config[f"{name}.C"]),
        kernel=kernel,
        # sklearn's defaults where the kernel ignores the parameter (inactive)
        degree=int(config.get(f"{name}.degree", 3)),
        gamma=config.get(f"{name}.gamma", "scale"),
        coef0=float(config.get(f"{name}.coef0", 0.0)),
        shrinking=bool(config[f"{name}.shrinking"]),
        tol=float(config[f"{name}.tol"]),
        cache_size=200,
        verbose=False,
        max_iter=-1,
    )
    if regression:
        return SVR(epsilon=float(config["svr.epsilon"]), **common)
    return SVC(
        # probability=False: sklearn's default (passing it warns from sklearn 1.9 on)
        class_weight=None,
        decision_function_shape=config["svc.decision_function_shape"],
        break_ties=False,
        random_state=0,
        **common,
    )


def _knn(config: Config, regression: bool) -> Any:
    from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor

    cls = KNeighborsRegressor if regression else KNeighborsClassifier
    return cls(
        n_neighbors=int(config["knn.n_neighbors"]),
        weights=config["knn.weights"],
        algorithm=config["knn.algorithm"],
        leaf_size=int(config.get("knn.leaf_size", 30)),
        p=float(config.get("knn.p", 2.0)),
        metric=config["knn.metric"],
        metric_params=None,
        n_jobs=1,
    )


def _random_forest(config: Config, regression: bool) -> Any:
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    name = "random_forest"
    kwargs: dict[str, Any] = dict(
        n_estimators=int(config[f"{name}.n_estimators"]),
        criterion=config[f"{name}.criterion"],
        max_depth=config[f"{name}.max_depth"],
        min_samples_split=int(config[f"{name}.min_samples_split"]),
        min_samples_leaf=_min_samples_leaf_value(config, name),
        min_weight_fraction_leaf=0.0,
        max_features=_max_features_value(config, name),
        max_leaf_nodes=config[f"{name}.max_leaf_nodes"],
        min_impurity_decrease=float(config[f"{name}.min_impurity_decrease"]),
        bootstrap=bool(config[f"{name}.bootstrap"]),
        oob_score=False,
        n_jobs=1,
        random_state=0,
        verbose=0,
        warm_start=False,
        ccp_alpha=0.0,
        max_samples=None,
    )
    if regression:
        return RandomForestRegressor(**kwargs)
    return RandomForestClassifier(class_weight=config[f"{name}.class_weight"], **kwargs)


def _extra_tree(config: Config, regression: bool) -> Any:
    from sklearn.tree import ExtraTreeClassifier, ExtraTreeRegressor

    name = "extra_trees"
    criterion = config[f"{name}.criterion"]
    if criterion == "friedman_mse":
        # sklearn 1.9 deprecates it for trees: "maps to squared_error as both were always
        # equivalent"; passing the equivalent avoids the warning.
        criterion = "squared_error"
    kwargs: dict[str, Any] = dict(
        criterion=criterion,
        splitter=config[f"{name}.splitter"],
        max_depth=config[f"{name}.max_depth"],
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        max_features=_max_features_value(config, name),
        random_state=0,
        min_impurity_decrease=0.0,
        max_leaf_nodes=config[f"{name}.max_leaf_nodes"],
        ccp_alpha=0.0,
    )
    if regression:
        return ExtraTreeRegressor(**kwargs)
    return ExtraTreeClassifier(class_weight=None, **kwargs)


def _ada_boost(config: Config, regression: bool) -> Any:
    from sklearn.ensemble import AdaBoostClassifier, AdaBoostRegressor

    kwargs: dict[str, Any] = dict(
        estimator=None,
        n_estimators=int(config["ada_boost.n_estimators"]),
        learning_rate=float(config["ada_boost.learning_rate"]),
        random_state=0,
    )
    if regression:
        return AdaBoostRegressor(loss=config["ada_boost.loss"], **kwargs)
    return AdaBoostClassifier(**kwargs)


def _grad_boosting(config: Config, regression: bool) -> Any:
    from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor

    name = "grad_boosting"
    kwargs: dict[str, Any] = dict(
        loss=config[f"{name}.loss"],
        learning_rate=float(config[f"{name}.learning_rate"]),
        n_estimators=int(config[f"{name}.n_estimators"]),
        subsample=1.0,
        # grad_boosting.criterion is searched (hpsklearn) but not passed: sklearn 1.9 ignores
        # it (deprecated, "has no effect"), and passing it warns.
        min_samples_split=int(config[f"{name}.min_samples_split"]),
        min_samples_leaf=_min_samples_leaf_value(config, name),
        min_weight_fraction_leaf=0.0,
        max_depth=int(config[f"{name}.max_depth"]),
        min_impurity_decrease=float(config[f"{name}.min_impurity_decrease"]),
        init=None,
        random_state=0,
        max_features=_max_features_value(config, name),
        verbose=0,
        max_leaf_nodes=config[f"{name}.max_leaf_nodes"],
        warm_start=False,
        validation_fraction=0.1,
        n_iter_no_change=None,
        tol=1e-4,
        ccp_alpha=0.0,
    )
    if regression:
        return GradientBoostingRegressor(alpha=float(config.get(f"{name}.alpha", 0.9)), **kwargs)
    return GradientBoostingClassifier(**kwargs)


def _sgd(config: Config, regression: bool) -> Any:
    from sklearn.linear_model import SGDClassifier, SGDRegressor

    name = "sgd"
    kwargs: dict[str, Any] = dict(
        loss=config[f"{name}.loss"],
        penalty=config[f"{name}.penalty"],
        alpha=float(config[f"{name}.alpha"]),
        # sklearn's defaults where the schedule / penalty ignores the parameter (inactive)
        l1_ratio=float(config.get(f"{name}.l1_ratio", 0.15)),
        fit_intercept=True,
        max_iter=int(config[f"{name}.max_iter"]),
        tol=float(config[f"{name}.tol"]),
        shuffle=True,
        verbose=0,
        epsilon=0.1,
        random_state=0,
        learning_rate=config[f"{name}.learning_rate"],
        eta0=float(config.get(f"{name}.eta0", 0.01)),
        power_t=float(config.get(f"{name}.power_t", 0.5)),
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=int(config[f"{name}.n_iter_no_change"]),
        warm_start=False,
        average=False,
    )
    if regression:
        return SGDRegressor(**kwargs)
    return SGDClassifier(n_jobs=1, class_weight=None, **kwargs)


def _xgboost(config: Config, regression: bool) -> Any:
    import xgboost

    name = "xgboost"
    kwargs: dict[str, Any] = dict(
        max_depth=int(config[f"{name}.max_depth"]),
        learning_rate=float(config[f"{name}.learning_rate"]) - 1e-4,
        n_estimators=200 * int(config[f"{name}.n_estimators_div200"]),
        gamma=float(config[f"{name}.gamma"]) - 1e-4,
        min_child_weight=int(config[f"{name}.min_child_weight"]),
        max_delta_step=0,
        subsample=float(config[f"{name}.subsample"]),
        colsample_bytree=float(config[f"{name}.colsample_bytree"]),
        colsample_bylevel=float(config[f"{name}.colsample_bylevel"]),
        reg_alpha=float(config[f"{name}.reg_alpha"]) - 1e-4,
        reg_lambda=float(config[f"{name}.reg_lambda"]),
        # scale_pos_weight=1: xgboost's default (passing it warns on multi-class data)
        base_score=0.5,
        random_state=0,
        n_jobs=1,
    )
    if regression:
        return xgboost.XGBRegressor(objective="reg:squarederror", **kwargs)
    # xgboost switches a multi-class fit to multi:softprob itself, as under hpsklearn.
    return xgboost.XGBClassifier(objective="binary:logistic", **kwargs)


_BUILDERS: dict[str, Callable[[Config, bool], Any]] = {
    "svc": _svm,
    "svr": _svm,
    "knn": _knn,
    "random_forest": _random_forest,
    "extra_trees": _extra_tree,
    "ada_boost": _ada_boost,
    "grad_boosting": _grad_boosting,
    "sgd": _sgd,
    "xgboost": _xgboost,
}


def _check_kind(kind: str) -> bool:
    """True for regression."""
    if kind not in ("classification", "regression"):
        raise ValueError(f"kind must be 'classification' or 'regression', not {kind!r}")
    return kind == "regression"


def build_pipeline(config: Config, kind: str) -> Pipeline:
    """The preprocessing step, then the estimator, with ``config``'s hyperparameters (a
    configuration of :func:`classifier_space` or :func:`regressor_space`)."""
    regression = _check_kind(kind)
    root = "regressor" if regression else "classifier"
    estimator = config[root]
    if estimator not in (REGRESSORS if regression else CLASSIFIERS):
        raise ValueError(f"unknown {root} {estimator!r}")
    return Pipeline(
        [
            ("preprocessing", _preprocessor(config)),
            (root, _BUILDERS[estimator](config, regression)),
        ]
    )


# ---- data and the objective -----------------------------------------------------------------

#: dataset name -> (sklearn loader name, kind)
DATASETS: dict[str, tuple[str, str]] = {
    "iris": ("load_iris", "classification"),
    "wine": ("load_wine", "classification"),
    "digits": ("load_digits", "classification"),
    "breast_cancer": ("load_breast_cancer", "classification"),
    "diabetes": ("load_diabetes", "regression"),
}


@functools.cache
def load_dataset(name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of dataset ``name`` (see :data:`DATASETS`), loaded on first use: features as
    float64; a regression target standardised to mean 0, variance 1."""
    import sklearn.datasets

    loader, kind = DATASETS[name]
    X, y = getattr(sklearn.datasets, loader)(return_X_y=True)
    X = np.asarray(X, dtype=np.float64)
    if kind == "regression":
        y = np.asarray(y, dtype=np.float64)
        y = (y - y.mean()) / y.std()
    return X, y


def _splits(dataset: str, kind: str) -> list[tuple[np.ndarray, np.ndarray]]:
    X, y = load_dataset(dataset)
    if kind == "classification":
        return list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    return list(KFold(3, shuffle=True, random_state=0).split(X))


def _rmse(y: np.ndarray, pred: np.ndarray) -> float:
    with np.errstate(all="ignore"):
        return float(np.sqrt(np.mean((np.asarray(y) - np.asarray(pred, dtype=np.float64)) ** 2)))


@functools.cache
def worst_value(dataset: str, kind: str) -> float:
    """The value of a failed configuration: 1.0 for classification; for regression the 3-fold
    RMSE of predicting the training mean (about 1 on the standardised target)."""
    if not _check_kind(kind):
        return 1.0
    _, y = load_dataset(dataset)
    return float(
        np.mean(
            [
                _rmse(y[test], np.full(len(test), y[train].mean()))
                for train, test in _splits(dataset, kind)
            ]
        )
    )


_LOGGED: set[tuple[str, str]] = set()


def evaluate(config: Config, dataset: str, kind: str) -> tuple[float, dict[str, float]]:
    """Mean 3-fold CV error of ``build_pipeline(config, kind)`` on ``dataset``: 1 - accuracy
    (``StratifiedKFold(3, shuffle=True, random_state=0)``) or the RMSE of the standardised
    target (``KFold(3, shuffle=True, random_state=0)``). A configuration that raises, or scores
    a non-finite value, gets :func:`worst_value` and ``extras["failed"] = 1``. ``extras``
    holds ``failed`` (0 or 1) and ``seconds`` (the wall time of the three fits and
    predictions)."""
    regression = _check_kind(kind)
    X, y = load_dataset(dataset)
    start = time.perf_counter()
    try:
        scores = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            for train, test in _splits(dataset, kind):
                model = build_pipeline(config, kind)
                model.fit(X[train], y[train])
                pred = model.predict(X[test])
                if regression:
                    scores.append(_rmse(y[test], pred))
                else:
                    scores.append(1.0 - float(np.mean(pred == y[test])))
        value = float(np.mean(scores))
        if not math.isfinite(value):
            raise FloatingPointError(f"non-finite CV score {value}")
    except ImportError as exc:  # a missing package is not a failing configuration
        raise ImportError(
            f"{exc}: the CASH tasks need xgboost (pip install -e '.[bench]')"
        ) from exc
    except Exception as exc:  # a failing configuration, not a failing benchmark
        estimator = config.get("regressor" if regression else "classifier", "?")
        key = (type(exc).__name__, str(estimator))
        if key not in _LOGGED:
            _LOGGED.add(key)
            logger.warning(
                "%s on %s: %s in %s (%s); scored as failed (logged once per error type and "
                "estimator)",
                kind,
                dataset,
                type(exc).__name__,
                estimator,
                str(exc).splitlines()[0][:200] if str(exc) else "",
            )
        seconds = time.perf_counter() - start
        return worst_value(dataset, kind), {"failed": 1.0, "seconds": seconds}
    return value, {"failed": 0.0, "seconds": time.perf_counter() - start}


# ---- the disk cache -------------------------------------------------------------------------

DEFAULT_CACHE = Path(__file__).resolve().parent / ".cache" / "evaluations.sqlite"


def cache_path() -> Path:
    """The SQLite file of the evaluation cache: ``CONDSAMPLERS_BENCH_CACHE`` if set, else
    ``benchmarks/hpo/.cache/evaluations.sqlite``."""
    override = os.environ.get("CONDSAMPLERS_BENCH_CACHE")
    return Path(override) if override else DEFAULT_CACHE


def _plain(value: Any) -> Any:
    """A JSON-able Python scalar for a configuration value (numpy scalars included)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    raise TypeError(f"cannot key a configuration value {value!r} of type {type(value)}")


def config_key(config: Config) -> str:
    """Canonical JSON of ``config``: sorted keys, floats as their repr (round-trip exact)."""
    return json.dumps(
        {k: _plain(v) for k, v in config.items()}, sort_keys=True, separators=(",", ":")
    )


def _connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), timeout=120.0)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA busy_timeout=120000")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS evaluations (task TEXT NOT NULL, config TEXT NOT NULL, "
        "value REAL NOT NULL, extras TEXT NOT NULL, PRIMARY KEY (task, config))"
    )
    conn.commit()
    return conn


def cached(task_name: str, evaluate_fn: Evaluate) -> Evaluate:
    """``evaluate_fn`` behind the disk cache: a configuration of ``task_name`` seen before (by
    any process) is read back, else evaluated and stored. Safe for concurrent processes
    (WAL journal, a busy timeout; the first writer of a key wins, the rest are equal)."""

    @functools.wraps(evaluate_fn)
    def wrapper(config: Config) -> tuple[float, dict[str, float]]:
        key = config_key(config)
        path = cache_path()
        with closing(_connect(path)) as conn:
            row = conn.execute(
                "SELECT value, extras FROM evaluations WHERE task = ? AND config = ?",
                (task_name, key),
            ).fetchone()
        if row is not None:
            return float(row[0]), {k: float(v) for k, v in json.loads(row[1]).items()}
        value, extras = evaluate_fn(config)
        with closing(_connect(path)) as conn, conn:
            conn.execute(
                "INSERT OR IGNORE INTO evaluations (task, config, value, extras) "
                "VALUES (?, ?, ?, ?)",
                (task_name, key, float(value), json.dumps(extras, sort_keys=True)),
            )
        return value, extras

    return wrapper


# ---- the tasks ------------------------------------------------------------------------------

_DATA_NOTES = {
    "iris": "iris (150 samples, 4 features, 3 classes)",
    "wine": "wine (178 samples, 13 features, 3 classes)",
    "digits": "digits (1797 samples, 64 features, 10 classes)",
    "breast_cancer": "breast cancer Wisconsin (569 samples, 30 features, 2 classes)",
    "diabetes": "diabetes (442 samples, 10 features, a continuous target)",
}


def _task(dataset: str) -> Task:
    kind = DATASETS[dataset][1]
    regression = kind == "regression"
    name = f"cash_{dataset}"
    space = regressor_space() if regression else classifier_space()
    n_conditional = sum(p.parent is not None for p in space)
    what = "any_regressor" if regression else "any_classifier"
    objective = (
        "3-fold CV RMSE of the standardised target"
        if regression
        else "3-fold stratified CV error (1 - accuracy)"
    )
    description = (
        f"CASH on sklearn's {_DATA_NOTES[dataset]}: hyperopt-sklearn 1.1.1's "
        f"any_preprocessing + {what} space ({len(space)} parameters, {n_conditional} "
        f"conditional; 4 preprocessors x 8 estimators); {objective}."
    )
    return Task(
        name=name,
        space=space,
        evaluate=cached(name, functools.partial(evaluate, dataset=dataset, kind=kind)),
        n_trials=60,
        description=description,
        value_name="3-fold CV RMSE (standardised y)" if regression else "3-fold CV error",
    )


def cash_tasks() -> dict[str, Task]:
    """The CASH tasks by name: ``cash_iris``, ``cash_wine``, ``cash_digits``,
    ``cash_breast_cancer`` (classification) and ``cash_diabetes`` (regression)."""
    return {f"cash_{d}": _task(d) for d in ("iris", "wine", "digits", "breast_cancer", "diabetes")}
