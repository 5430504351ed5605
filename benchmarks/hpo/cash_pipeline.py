"""Building the estimator of a CASH configuration (:mod:`benchmarks.hpo.cash_space`): the
preprocessing step, then the classifier or regressor, with the configuration's hyperparameters
and the constants hpsklearn fixes. The deviations numbered in the comments ("deviation 5") are
those listed in the docstring of :mod:`benchmarks.hpo.cash`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.decomposition import PCA
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MinMaxScaler, Normalizer, StandardScaler

from benchmarks.hpo.cash_space import CLASSIFIERS, REGRESSORS
from benchmarks.hpo.spec import Config

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


def fit_pipeline(job: tuple[Config, str, Any, Any]) -> Pipeline:
    """``build_pipeline(config, kind).fit(X, y)`` for ``job = (config, kind, X, y)``: one
    argument, so that :func:`benchmarks.hpo.time_limit.evaluate_within` can run it in a child
    process (this module imports no torch, so the child starts fast)."""
    config, kind, X, y = job
    return build_pipeline(config, kind).fit(X, y)
