"""Conditional multi-fidelity problems: a configuration trains step by step, each step costs one
unit of budget, and the value after the last step (``MAX_STEP``) is what a study optimises.

- ``mlp_digits``: real training on scikit-learn's digits (1797 images; 1200 train, 597
  validation, standardised). Two families: an MLP with 1-3 hidden layers (a width per layer,
  conditional on the depth; Adam's learning rate, L2 alpha, batch size, activation) and a
  linear SGD classifier (loss, penalty, the elastic-net ratio under ``elasticnet``, alpha).
  One step is one epoch (``partial_fit``); the value is the validation error.
- ``curves_synthetic``: three branches whose learning curves differ in shape. ``fast`` (3
  parameters) converges within a few steps to a mediocre level (0.3 at best); ``slow`` (4
  parameters) ends best (0 at its centre) but looks worst early (its curve decays as
  ``step^-0.5``), so a pruner that compares values at low steps tends to stop it; ``depth``
  has an integer depth 1-3 with two nested parameters per level (0.05 at best, depth 3) and a
  curve of intermediate speed. The value at step ``s`` is ``final(x) + a(x) * decay(s)``.

Every problem declares its space with :class:`benchmarks.hpo.spec.Param`, so every peer reads
the same declaration.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

import numpy as np

from benchmarks.hpo.spec import Config, Param, check_space

#: Steps of a full training run (Hyperband's rungs at 1, 3, 9, 27 with reduction factor 3).
MAX_STEP = 27

#: A learning curve: the value after each step, one step at a time.
Curve = Iterator[float]


@dataclasses.dataclass(frozen=True)
class FidelityProblem:
    """A space, a learning curve per configuration, and the budget of a run (in steps)."""

    name: str
    space: tuple[Param, ...]
    curve: Callable[[Config], Curve]
    budget: int
    description: str


# ---- mlp_digits -----------------------------------------------------------------------------

MLP_DIGITS_SPACE = (
    Param("family", "categorical", choices=("mlp", "linear")),
    Param("n_layers", "int", 1, 3, parent="family", values=("mlp",)),
    Param("units_1", "int", 16, 256, log=True, parent="family", values=("mlp",)),
    Param("units_2", "int", 16, 256, log=True, parent="n_layers", values=(2, 3)),
    Param("units_3", "int", 16, 256, log=True, parent="n_layers", values=(3,)),
    Param("learning_rate_init", "float", 1e-4, 1e-1, log=True, parent="family", values=("mlp",)),
    Param("mlp_alpha", "float", 1e-6, 1e-1, log=True, parent="family", values=("mlp",)),
    Param(
        "batch_size", "categorical", choices=(32, 64, 128, 256), parent="family", values=("mlp",)
    ),
    Param("activation", "categorical", choices=("relu", "tanh"), parent="family", values=("mlp",)),
    Param(
        "loss",
        "categorical",
        choices=("hinge", "log_loss", "modified_huber"),
        parent="family",
        values=("linear",),
    ),
    Param(
        "penalty",
        "categorical",
        choices=("l2", "l1", "elasticnet"),
        parent="family",
        values=("linear",),
    ),
    Param("l1_ratio", "float", 0.0, 1.0, parent="penalty", values=("elasticnet",)),
    Param("sgd_alpha", "float", 1e-7, 1e-1, log=True, parent="family", values=("linear",)),
)


@cache
def _digits() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    X, y = load_digits(return_X_y=True)
    X_train, X_val, y_train, y_val = train_test_split(
        X, y, train_size=1200, random_state=0, stratify=y
    )
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_val), y_train, y_val


def _digits_model(config: Config) -> Any:
    from sklearn.linear_model import SGDClassifier
    from sklearn.neural_network import MLPClassifier

    if config["family"] == "mlp":
        widths = [config[f"units_{i}"] for i in range(1, config["n_layers"] + 1)]
        return MLPClassifier(
            hidden_layer_sizes=tuple(widths),
            learning_rate_init=config["learning_rate_init"],
            alpha=config["mlp_alpha"],
            batch_size=config["batch_size"],
            activation=config["activation"],
            random_state=0,
        )
    return SGDClassifier(
        loss=config["loss"],
        penalty=config["penalty"],
        l1_ratio=config.get("l1_ratio", 0.15),
        alpha=config["sgd_alpha"],
        random_state=0,
    )


def mlp_digits_curve(config: Config) -> Curve:
    """Validation error after each epoch of real training (``partial_fit``)."""
    X_train, X_val, y_train, y_val = _digits()
    model = _digits_model(config)
    classes = np.unique(y_train)
    shuffle = np.random.default_rng(0)
    for _ in range(MAX_STEP):
        order = shuffle.permutation(len(y_train))
        with warnings.catch_warnings():  # convergence and overflow warnings of bad configs
            warnings.simplefilter("ignore")
            model.partial_fit(X_train[order], y_train[order], classes=classes)
            error = float(1.0 - model.score(X_val, y_val))
        yield error


# ---- curves_synthetic ---------------------------------------------------------------------

#: Where each branch's final value is lowest (the ``slow`` branch's is the global optimum, 0).
FAST_CENTRE = (0.2, 0.8, 0.5)
SLOW_CENTRE = (0.7, 0.4, 0.25, 0.6)
DEPTH_CENTRE = 0.3

CURVES_SYNTHETIC_SPACE = (
    Param("branch", "categorical", choices=("fast", "slow", "depth")),
    *(
        Param(f"fast_{i}", "float", 0.0, 1.0, parent="branch", values=("fast",))
        for i in range(len(FAST_CENTRE))
    ),
    *(
        Param(f"slow_{i}", "float", 0.0, 1.0, parent="branch", values=("slow",))
        for i in range(len(SLOW_CENTRE))
    ),
    Param("depth", "int", 1, 3, parent="branch", values=("depth",)),
    Param("d1_a", "float", 0.0, 1.0, parent="branch", values=("depth",)),
    Param("d1_b", "float", 0.0, 1.0, parent="branch", values=("depth",)),
    Param("d2_a", "float", 0.0, 1.0, parent="depth", values=(2, 3)),
    Param("d2_b", "float", 0.0, 1.0, parent="depth", values=(2, 3)),
    Param("d3_a", "float", 0.0, 1.0, parent="depth", values=(3,)),
    Param("d3_b", "float", 0.0, 1.0, parent="depth", values=(3,)),
)


def _squared_distance(config: Config, names: list[str], centre: tuple[float, ...]) -> float:
    return sum((config[n] - c) ** 2 for n, c in zip(names, centre, strict=True))


def _synthetic_final_and_decay(config: Config) -> tuple[float, float, Callable[[int], float]]:
    """``(final value, amplitude, decay)`` of a configuration of ``curves_synthetic``."""
    branch = config["branch"]
    if branch == "fast":
        names = [f"fast_{i}" for i in range(len(FAST_CENTRE))]
        final = 0.3 + 0.5 * _squared_distance(config, names, FAST_CENTRE)
        return final, 0.5, lambda s: math.exp(-(s - 1) / 1.5)
    if branch == "slow":
        names = [f"slow_{i}" for i in range(len(SLOW_CENTRE))]
        final = 0.5 * _squared_distance(config, names, SLOW_CENTRE)
        return final, 1.0 + config["slow_1"], lambda s: s**-0.5
    depth = config["depth"]
    names = [f"d{level}_{p}" for level in range(1, depth + 1) for p in "ab"]
    spread = _squared_distance(config, names, (DEPTH_CENTRE,) * len(names)) / depth
    final = 0.05 + 0.1 * (3 - depth) + spread
    return final, 0.8, lambda s: 1.0 / s


def curves_synthetic_curve(config: Config) -> Curve:
    """``final + amplitude * decay(step)`` at steps 1..MAX_STEP, minus the decay at MAX_STEP so
    that the last step is the final value."""
    final, amplitude, decay = _synthetic_final_and_decay(config)
    for step in range(1, MAX_STEP + 1):
        yield final + amplitude * (decay(step) - decay(MAX_STEP))


#: The best final value of ``curves_synthetic`` (branch ``slow`` at ``SLOW_CENTRE``).
CURVES_SYNTHETIC_OPTIMUM = 0.0

PROBLEMS: dict[str, FidelityProblem] = {
    "curves_synthetic": FidelityProblem(
        "curves_synthetic",
        CURVES_SYNTHETIC_SPACE,
        curves_synthetic_curve,
        budget=40 * MAX_STEP,
        description="3 branches with learning curves of different shapes (synthetic)",
    ),
    "mlp_digits": FidelityProblem(
        "mlp_digits",
        MLP_DIGITS_SPACE,
        mlp_digits_curve,
        budget=40 * MAX_STEP,
        description="MLP (1-3 layers) or linear SGD on digits, epochs as steps (real training)",
    ),
}

for _problem in PROBLEMS.values():
    check_space(_problem.space)
