"""hyperopt-sklearn 1.1.1's CASH space, declared as data: ``any_preprocessing`` then
``any_classifier`` or ``any_regressor``, one :class:`~benchmarks.hpo.spec.Param` per
hyperparameter, conditional on the component that uses it (or on the parameter it depends on).

How each hpsklearn distribution is transcribed, and the deviations numbered in the comments
below ("deviation 2"), are listed in the docstring of :mod:`benchmarks.hpo.cash`, the module
that builds the CASH tasks on this space (and re-exports it)."""

from __future__ import annotations

from typing import Any

from benchmarks.hpo.spec import Param, check_space

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
