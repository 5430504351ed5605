"""The multi-objective problems of ``python -m benchmarks.pareto``, all objectives minimised.

- **branches_zdt** (synthetic, known front): three branches. Branch ``a`` is ZDT1 on two
  objectives (front ``f2 = 1 - sqrt(f1)``, ``f1`` in [0, 1]) behind two distractor
  parameters; branch ``b`` owns the front's right part (``f2 = 0.8 (1 - (f1 - 0.25) / 0.75)^2``,
  better than ``a`` for ``f1`` above about 0.4) behind an integer depth and a float; branch
  ``c`` is dominated everywhere (a decoy with a parameter of its own). The true front is the
  Pareto front of both branches' optimal curves; its hypervolume against the reference point
  (1.1, 1.1) is computed once on a fine grid.
- **digits_size** (real training): scikit-learn's digits, a fixed split (1198 training, 599
  validation images), six model families with their own hyperparameters (logistic
  regression, k-NN, RBF SVC, a decision tree, a random forest, an MLP of 1-3 layers with a
  width per layer): the validation error against the log10 of the fitted model's size in bytes
  (``pickle``), reference point (1.0, 7.0).
"""

from __future__ import annotations

import dataclasses
import math
import pickle
import warnings
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from benchmarks.hpo.spec import Config, Param
from condsamplers.hypervolume import hypervolume, pareto_mask


@dataclasses.dataclass(frozen=True)
class ParetoProblem:
    """A space, objectives to minimise, a fixed reference point and, when known, the
    hypervolume of the true front."""

    name: str
    space: tuple[Param, ...]
    evaluate: Callable[[Config], tuple[float, ...]]
    reference: tuple[float, ...]
    n_trials: int
    description: str
    objectives: tuple[str, ...]


# ---- branches_zdt ---------------------------------------------------------------------------
ZDT_SPACE = (
    Param("branch", "categorical", choices=("a", "b", "c")),
    Param("a_x", "float", 0.0, 1.0, parent="branch", values=("a",)),
    Param("a_u", "float", 0.0, 1.0, parent="branch", values=("a",)),
    Param("a_v", "float", 0.0, 1.0, parent="branch", values=("a",)),
    Param("b_x", "float", 0.0, 1.0, parent="branch", values=("b",)),
    Param("b_depth", "int", 1, 4, parent="branch", values=("b",)),
    Param("b_z", "float", 1e-3, 1.0, log=True, parent="branch", values=("b",)),
    Param("c_x", "float", 0.0, 1.0, parent="branch", values=("c",)),
)


def _front_a(f1: np.ndarray) -> np.ndarray:
    return 1.0 - np.sqrt(f1)


def _front_b(f1: np.ndarray) -> np.ndarray:
    return 0.8 * (1.0 - (f1 - 0.25) / 0.75) ** 2


def zdt_branches(config: Config) -> tuple[float, float]:
    branch = config["branch"]
    if branch == "a":
        g = 1.0 + 2.0 * ((config["a_u"] - 0.3) ** 2 + (config["a_v"] - 0.7) ** 2)
        f1 = config["a_x"]
        return f1, g * float(_front_a(np.array(f1)))
    if branch == "b":
        g = 1.0 + 0.5 * abs(config["b_depth"] - 3) + 0.5 * math.log10(config["b_z"] / 0.03) ** 2
        f1 = 0.25 + 0.75 * config["b_x"]
        return f1, g * float(_front_b(np.array(f1)))
    x = config["c_x"]
    return 0.5 + 0.5 * x, 0.6 + 0.4 * (1.0 - x)


@cache
def zdt_true_hypervolume() -> float:
    f1 = np.linspace(0.0, 1.0, 20_001)
    points = np.vstack(
        [
            np.column_stack([f1, _front_a(f1)]),
            np.column_stack([0.25 + 0.75 * f1, _front_b(0.25 + 0.75 * f1)]),
        ]
    )
    front = points[pareto_mask_2d(points)]
    return hypervolume_2d(front, np.array([1.1, 1.1]))


def pareto_mask_2d(points: np.ndarray) -> np.ndarray:
    """The non-dominated rows of 2-objective ``points`` in ``O(n log n)`` (sort by the first,
    keep the rows that lower the running minimum of the second)."""
    order = np.lexsort((points[:, 1], points[:, 0]))
    keep = np.zeros(len(points), dtype=bool)
    best = math.inf
    for i in order:
        if points[i, 1] < best:
            keep[i], best = True, points[i, 1]
    return keep


def hypervolume_2d(front: np.ndarray, ref: np.ndarray) -> float:
    """The area a 2-objective front dominates below ``ref``."""
    front = front[np.all(front < ref, axis=1)]
    front = front[np.argsort(front[:, 0])]
    area, previous = 0.0, ref[1]
    for f1, f2 in front:
        if f2 < previous:
            area += (ref[0] - f1) * (previous - f2)
            previous = f2
    return float(area)


# ---- digits_size ----------------------------------------------------------------------------
FAMILIES = ("logreg", "knn", "svc", "tree", "forest", "mlp")
DIGITS_SPACE = (
    Param("family", "categorical", choices=FAMILIES),
    Param("logreg_C", "float", 1e-4, 1e2, log=True, parent="family", values=("logreg",)),
    Param("knn_k", "int", 1, 30, parent="family", values=("knn",)),
    Param("knn_weights", "categorical", choices=("uniform", "distance"), parent="family",
          values=("knn",)),
    Param("svc_C", "float", 1e-2, 1e3, log=True, parent="family", values=("svc",)),
    Param("svc_gamma", "float", 1e-5, 1e-1, log=True, parent="family", values=("svc",)),
    Param("tree_depth", "int", 1, 20, parent="family", values=("tree",)),
    Param("tree_leaf", "int", 1, 30, log=True, parent="family", values=("tree",)),
    Param("forest_trees", "int", 2, 100, log=True, parent="family", values=("forest",)),
    Param("forest_depth", "int", 2, 20, parent="family", values=("forest",)),
    Param("mlp_layers", "int", 1, 3, parent="family", values=("mlp",)),
    Param("mlp_width_1", "int", 4, 256, log=True, parent="mlp_layers", values=(1, 2, 3)),
    Param("mlp_width_2", "int", 4, 256, log=True, parent="mlp_layers", values=(2, 3)),
    Param("mlp_width_3", "int", 4, 256, log=True, parent="mlp_layers", values=(3,)),
    Param("mlp_alpha", "float", 1e-6, 1e-1, log=True, parent="family", values=("mlp",)),
)  # fmt: skip


@cache
def _digits_split() -> tuple[np.ndarray, ...]:
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    return tuple(train_test_split(X, y, test_size=599, random_state=0, stratify=y))


def _digits_model(config: Config) -> Any:
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.svm import SVC
    from sklearn.tree import DecisionTreeClassifier

    family = config["family"]
    if family == "logreg":
        return LogisticRegression(C=config["logreg_C"], max_iter=300)
    if family == "knn":
        return KNeighborsClassifier(config["knn_k"], weights=config["knn_weights"])
    if family == "svc":
        return SVC(C=config["svc_C"], gamma=config["svc_gamma"])
    if family == "tree":
        return DecisionTreeClassifier(
            max_depth=config["tree_depth"], min_samples_leaf=config["tree_leaf"], random_state=0
        )
    if family == "forest":
        return RandomForestClassifier(
            n_estimators=config["forest_trees"], max_depth=config["forest_depth"], random_state=0
        )
    widths = tuple(config[f"mlp_width_{i}"] for i in range(1, config["mlp_layers"] + 1))
    return MLPClassifier(widths, alpha=config["mlp_alpha"], max_iter=150, random_state=0)


def digits_size(config: Config) -> tuple[float, float]:
    """Validation error and log10 of the pickled model's bytes."""
    from sklearn.exceptions import ConvergenceWarning

    X_train, X_valid, y_train, y_valid = _digits_split()
    model = _digits_model(config)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X_train, y_train)
    error = float(np.mean(model.predict(X_valid) != y_valid))
    return error, math.log10(len(pickle.dumps(model)))


PROBLEMS: dict[str, ParetoProblem] = {
    "branches_zdt": ParetoProblem(
        "branches_zdt",
        ZDT_SPACE,
        zdt_branches,
        (1.1, 1.1),
        100,
        "three branches; ZDT1's front on one, the right part of the front on another, a decoy",
        ("f1", "f2"),
    ),
    "digits_size": ParetoProblem(
        "digits_size",
        DIGITS_SPACE,
        digits_size,
        (1.0, 7.0),
        100,
        "digits, six model families: validation error against log10 model bytes",
        ("validation error", "log10 bytes"),
    ),
}


def true_hypervolume(problem: ParetoProblem) -> float | None:
    """The hypervolume of the problem's true front (branches_zdt only)."""
    return zdt_true_hypervolume() if problem.name == "branches_zdt" else None


def front_hypervolume(values: np.ndarray, reference: tuple[float, ...]) -> float:
    """The hypervolume of the non-dominated rows of ``values`` against ``reference``."""
    values = np.asarray(values, dtype=float).reshape(-1, len(reference))
    if values.shape[1] == 2:
        return hypervolume_2d(values[pareto_mask_2d(values)], np.asarray(reference))
    return hypervolume(values[pareto_mask(values)], np.asarray(reference))
