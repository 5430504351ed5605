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

The space is declared in :mod:`benchmarks.hpo.cash_space` and the estimators are built in
:mod:`benchmarks.hpo.cash_pipeline`; this module holds the data, the objective, the
evaluation cache and the tasks, and re-exports the names of both (``classifier_space``,
``build_pipeline``, ...), so that they keep importing from here.
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
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import KFold, StratifiedKFold

from benchmarks.hpo.cash_pipeline import LimitedPCA, _check_kind, build_pipeline
from benchmarks.hpo.cash_space import (
    BOOL,
    CLASSIFIERS,
    PREPROCESSORS,
    REGRESSORS,
    classifier_space,
    regressor_space,
)
from benchmarks.hpo.spec import Config, Task
from benchmarks.hpo.time_limit import evaluate_within

#: This module's names, and those of cash_space.py and cash_pipeline.py re-exported here.
__all__ = [
    "BOOL",
    "CLASSIFIERS",
    "DATASETS",
    "DEFAULT_CACHE",
    "PREPROCESSORS",
    "REGRESSORS",
    "TIME_LIMITS",
    "Evaluate",
    "LimitedPCA",
    "build_pipeline",
    "cache_path",
    "cached",
    "cash_tasks",
    "classifier_space",
    "config_key",
    "evaluate",
    "evaluate_with_time_limit",
    "load_dataset",
    "regressor_space",
    "worst_value",
]

logger = logging.getLogger(__name__)

Evaluate = Callable[[Config], tuple[float, dict[str, float]]]


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


def evaluate_with_time_limit(
    config: Config, dataset: str, kind: str, seconds: float
) -> tuple[float, dict[str, float]]:
    """:func:`evaluate` stopped at ``seconds`` of wall time (hyperopt-sklearn's
    ``trial_timeout``): a configuration that has not finished by then (or whose process died
    without a result) gets
    :func:`worst_value` and ``extras = {"failed": 1, "timed_out": 1, "seconds": seconds}``."""
    result = evaluate_within(
        functools.partial(evaluate, dataset=dataset, kind=kind), config, seconds
    )
    if result is not None:
        return result
    logger.info(
        "%s on %s: a configuration ran past %g s; scored as failed", kind, dataset, seconds
    )
    return worst_value(dataset, kind), {"failed": 1.0, "timed_out": 1.0, "seconds": seconds}


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


#: dataset -> seconds per evaluation (three folds) after which a configuration counts as
#: failed (:func:`evaluate_with_time_limit`). Only where some configurations do not finish:
#: ``SVC(max_iter=-1)`` on unscaled breast-cancer features ran over 10 minutes, and digits'
#: 10 classes multiply the boosting ensembles. The evaluations that finish on the other data
#: sets are all under 150 s, most under 1 s.
TIME_LIMITS: dict[str, float] = {"breast_cancer": 60.0, "digits": 60.0}


def _evaluation(name: str, dataset: str, kind: str) -> Evaluate:
    """The task's cached objective; with a time limit, the limit is part of the cache's key
    (``cash_digits@60s``), so that results under another limit are never mixed in."""
    limit = TIME_LIMITS.get(dataset)
    if limit is None:
        return cached(name, functools.partial(evaluate, dataset=dataset, kind=kind))
    bounded = functools.partial(
        evaluate_with_time_limit, dataset=dataset, kind=kind, seconds=limit
    )
    return cached(f"{name}@{limit:g}s", bounded)


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
    if dataset in TIME_LIMITS:
        description += f" An evaluation over {TIME_LIMITS[dataset]:g} s counts as failed."
    return Task(
        name=name,
        space=space,
        evaluate=_evaluation(name, dataset, kind),
        n_trials=60,
        description=description,
        value_name="3-fold CV RMSE (standardised y)" if regression else "3-fold CV error",
    )


def cash_tasks() -> dict[str, Task]:
    """The CASH tasks by name: ``cash_iris``, ``cash_wine``, ``cash_digits``,
    ``cash_breast_cancer`` (classification) and ``cash_diabetes`` (regression)."""
    return {f"cash_{d}": _task(d) for d in ("iris", "wine", "digits", "breast_cancer", "diabetes")}
