"""Spaces of the suggestion-time benchmark (``benchmarks/speed.py``) beside those of
:mod:`benchmarks.problems`: a CASH-shaped conditional space with a cheap analytic objective,
and a flat 10-dimensional space (Hartmann6 with four inert dimensions).

``cash_synthetic``: a preprocessing (none, PCA, quantile transform) and one of eight model
families, each with its own hyperparameters, some nested (an SVC's ``gamma`` only for the RBF
kernel, an SGD's ``l1_ratio`` only for the elastic net, an MLP's second width only for two
layers): 48 parameters, 33 paths, as a model-selection study over scikit-learn estimators has.
The value is a family's level plus its preprocessing's, plus a quadratic bowl in each active
numerical parameter (in unit-cube coordinates: log scale where the parameter is log-scaled)
around a fixed centre, plus a penalty for each categorical choice but the best: minimised,
optimum 0 (the first family and preprocessing, every parameter at its centre).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import optuna

from benchmarks.problems import Params, Problem, hartmann6, suggest_unit_floats


@dataclass(frozen=True)
class Numeric:
    """A float (or an integer with ``integer=True``) with the centre of its bowl."""

    low: float
    high: float
    centre: float
    log: bool = False
    integer: bool = False

    def suggest(self, trial: optuna.Trial, name: str) -> float:
        if self.integer:
            return trial.suggest_int(name, int(self.low), int(self.high), log=self.log)
        return trial.suggest_float(name, self.low, self.high, log=self.log)

    def unit(self, value: float) -> float:
        """``value`` in ``[0, 1]``, on a log scale where the parameter is log-scaled."""
        scale = math.log if self.log else float
        return (scale(value) - scale(self.low)) / (scale(self.high) - scale(self.low))

    def bowl(self, value: float) -> float:
        return (self.unit(value) - self.unit(self.centre)) ** 2


#: A categorical parameter: its choices, the first the best, each other one ``penalty`` worse.
Categorical = tuple[tuple[str, ...], float]
Spec = Numeric | Categorical


def _forest(prefix: str) -> dict[str, Spec]:
    return {
        f"{prefix}_n_estimators": Numeric(10, 500, 120, log=True, integer=True),
        f"{prefix}_max_depth": Numeric(2, 30, 12, integer=True),
        f"{prefix}_max_features": Numeric(0.05, 1.0, 0.4),
        f"{prefix}_min_samples_leaf": Numeric(1, 20, 2, integer=True),
        f"{prefix}_min_samples_split": Numeric(2, 20, 4, integer=True),
        f"{prefix}_bootstrap": (("false", "true"), 0.02),
    }


#: Each family's level and its unconditional parameters.
FAMILIES: dict[str, tuple[float, dict[str, Spec]]] = {
    "svc": (
        0.0,
        {
            "svc_C": Numeric(1e-2, 1e3, 20.0, log=True),
            "svc_kernel": (("rbf", "linear"), 0.05),
            "svc_tol": Numeric(1e-5, 1e-1, 1e-3, log=True),
        },
    ),
    "knn": (
        0.04,
        {
            "knn_n_neighbors": Numeric(1, 50, 7, log=True, integer=True),
            "knn_weights": (("distance", "uniform"), 0.01),
            "knn_p": Numeric(1, 3, 2, integer=True),
            "knn_leaf_size": Numeric(5, 60, 30, integer=True),
        },
    ),
    "rf": (0.02, _forest("rf")),
    "et": (0.03, _forest("et")),
    "gbm": (
        0.01,
        {
            "gbm_learning_rate": Numeric(1e-3, 1.0, 0.08, log=True),
            "gbm_n_estimators": Numeric(20, 500, 200, log=True, integer=True),
            "gbm_max_depth": Numeric(1, 10, 4, integer=True),
            "gbm_subsample": Numeric(0.3, 1.0, 0.8),
            "gbm_max_features": Numeric(0.1, 1.0, 0.6),
            "gbm_min_samples_leaf": Numeric(1, 30, 5, integer=True),
            "gbm_loss": (("log_loss", "exponential"), 0.02),
        },
    ),
    "sgd": (
        0.06,
        {
            "sgd_alpha": Numeric(1e-7, 1e-1, 1e-4, log=True),
            "sgd_penalty": (("elasticnet", "l2"), 0.02),
            "sgd_loss": (("hinge", "log_loss", "modified_huber"), 0.03),
            "sgd_eta0": Numeric(1e-4, 1.0, 1e-2, log=True),
            "sgd_average": (("true", "false"), 0.01),
        },
    ),
    "ada": (
        0.05,
        {
            "ada_n_estimators": Numeric(10, 500, 100, log=True, integer=True),
            "ada_learning_rate": Numeric(1e-3, 2.0, 0.5, log=True),
            "ada_algorithm": (("SAMME", "SAMME.R"), 0.02),
        },
    ),
    "mlp": (
        0.02,
        {
            "mlp_n_layers": Numeric(1, 2, 2, integer=True),
            "mlp_width_1": Numeric(8, 512, 128, log=True, integer=True),
            "mlp_alpha": Numeric(1e-6, 1e-1, 1e-4, log=True),
            "mlp_learning_rate_init": Numeric(1e-4, 1e-1, 3e-3, log=True),
            "mlp_activation": (("relu", "tanh"), 0.02),
        },
    ),
}
#: Nested parameters: ``(name, spec, parent, the parent values that make it active)``.
NESTED: tuple[tuple[str, Spec, str, tuple[Any, ...]], ...] = (
    ("svc_gamma", Numeric(1e-5, 10.0, 1e-2, log=True), "svc_kernel", ("rbf",)),
    ("sgd_l1_ratio", Numeric(0.0, 1.0, 0.15), "sgd_penalty", ("elasticnet",)),
    ("mlp_width_2", Numeric(8, 512, 64, log=True, integer=True), "mlp_n_layers", (2,)),
)
#: Each preprocessing's level and its parameters.
PREPROCESSINGS: dict[str, tuple[float, dict[str, Spec]]] = {
    "none": (0.0, {}),
    "pca": (
        0.02,
        {
            "pca_n_components": Numeric(0.5, 1.0, 0.9),
            "pca_whiten": (("false", "true"), 0.01),
        },
    ),
    "quantile": (
        0.01,
        {
            "quantile_n_quantiles": Numeric(10, 2000, 500, log=True, integer=True),
            "quantile_output_distribution": (("uniform", "normal"), 0.01),
        },
    ),
}


def _suggest(trial: optuna.Trial, specs: Mapping[str, Spec]) -> None:
    for name, spec in specs.items():
        if isinstance(spec, Numeric):
            spec.suggest(trial, name)
        else:
            trial.suggest_categorical(name, list(spec[0]))
        for nested, nested_spec, parent, values in NESTED:
            if parent == name and trial.params[name] in values:
                _suggest(trial, {nested: nested_spec})


def _suggest_cash(trial: optuna.Trial) -> dict[str, Any]:
    preprocessing = trial.suggest_categorical("preprocessing", list(PREPROCESSINGS))
    _suggest(trial, PREPROCESSINGS[preprocessing][1])
    family = trial.suggest_categorical("family", list(FAMILIES))
    _suggest(trial, FAMILIES[family][1])
    return dict(trial.params)


def _all_specs() -> dict[str, Spec]:
    specs: dict[str, Spec] = {}
    for _, family_specs in (*FAMILIES.values(), *PREPROCESSINGS.values()):
        specs.update(family_specs)
    specs.update({name: spec for name, spec, _, _ in NESTED})
    return specs


_SPECS = _all_specs()


def _value_cash(params: Params) -> float:
    value = FAMILIES[params["family"]][0] + PREPROCESSINGS[params["preprocessing"]][0]
    for name, given in params.items():
        spec = _SPECS.get(name)
        if isinstance(spec, Numeric):
            value += 0.1 * spec.bowl(float(given))
        elif spec is not None:
            value += spec[1] * (spec[0].index(given) > 0)
    return float(value)


def _cash_tree() -> dict[str, Any]:
    tree: dict[str, Any] = {"preprocessing": None, "family": None}
    for parent, table in (("preprocessing", PREPROCESSINGS), ("family", FAMILIES)):
        for choice, (_, specs) in table.items():
            tree.update({name: (parent, (choice,)) for name in specs})
    tree.update({name: (parent, values) for name, _, parent, values in NESTED})
    return tree


def _cash_optimum_params() -> dict[str, Any]:
    params: dict[str, Any] = {"preprocessing": "none", "family": "svc"}
    for name, spec in {**FAMILIES["svc"][1], "svc_gamma": NESTED[0][1]}.items():
        params[name] = spec.centre if isinstance(spec, Numeric) else spec[0][0]
    return params


def cash_synthetic() -> Problem:
    """A CASH-shaped conditional space (module docstring): 48 parameters, 33 paths,
    minimised, optimum 0."""
    return Problem(
        name="cash_synthetic",
        direction="minimize",
        n_trials=100,
        optimum=0.0,
        optimal_params=_cash_optimum_params(),
        expected_tree=_cash_tree(),
        suggest=_suggest_cash,
        value=_value_cash,
        description="CASH-shaped: 3 preprocessings x 8 families, 48 parameters, 33 paths",
    )


def _suggest_hartmann6_padded(trial: optuna.Trial) -> dict[str, Any]:
    return suggest_unit_floats(trial, 10)


def hartmann6_padded() -> Problem:
    """Hartmann 6-d on the first six of ten unit-interval parameters (the last four inert):
    a flat space, no conditions."""
    optimal = {**hartmann6().optimal_params, **{f"x{j}": 0.5 for j in range(7, 11)}}
    return Problem(
        name="hartmann6_padded",
        direction="minimize",
        n_trials=100,
        optimum=hartmann6().optimum,
        optimal_params=optimal,
        expected_tree={name: None for name in optimal},
        suggest=_suggest_hartmann6_padded,
        value=hartmann6().value,  # reads x1 to x6 only
        description="Hartmann 6-d plus 4 inert dimensions, 10 continuous parameters, flat",
    )


SPEED_PROBLEMS: dict[str, Problem] = {
    problem.name: problem for problem in (cash_synthetic(), hartmann6_padded())
}
