"""A multi-objective conditional study: validation error against model size on digits.

Three model families with their own hyperparameters (logistic regression, a decision tree, an
MLP of 1 to 3 hidden layers with a width per layer), trained on scikit-learn's digits; the
objectives are the validation error and the size of the fitted model in kilobytes (pickled),
both minimised. ``TreeGPSampler`` fits one tree GP per objective and proposes by expected
hypervolume improvement (docs/multi_objective.md); ``study.best_trials`` is the Pareto front.

Usage::

    python examples/pareto_study.py [--n-trials 60]
"""

from __future__ import annotations

import argparse
import pickle
import warnings

import numpy as np
import optuna
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.tree import DecisionTreeClassifier

from condsamplers import TreeGPSampler


def make_model(trial: optuna.Trial) -> object:
    family = trial.suggest_categorical("family", ["logreg", "tree", "mlp"])
    if family == "logreg":
        return LogisticRegression(C=trial.suggest_float("C", 1e-4, 1e2, log=True), max_iter=300)
    if family == "tree":
        depth = trial.suggest_int("max_depth", 1, 20)
        leaf = trial.suggest_int("min_samples_leaf", 1, 30, log=True)
        return DecisionTreeClassifier(max_depth=depth, min_samples_leaf=leaf, random_state=0)
    layers = trial.suggest_int("layers", 1, 3)
    widths = tuple(trial.suggest_int(f"width_{i}", 4, 128, log=True) for i in range(layers))
    alpha = trial.suggest_float("alpha", 1e-6, 1e-1, log=True)
    return MLPClassifier(widths, alpha=alpha, max_iter=100, random_state=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-trials", type=int, default=60)
    args = parser.parse_args()
    X, y = load_digits(return_X_y=True)
    X_train, X_valid, y_train, y_valid = train_test_split(
        X / 16.0, y, test_size=0.33, random_state=0, stratify=y
    )

    def objective(trial: optuna.Trial) -> tuple[float, float]:
        model = make_model(trial)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # MLP convergence warnings at few iterations
            model.fit(X_train, y_train)
        error = float(np.mean(model.predict(X_valid) != y_valid))
        return error, len(pickle.dumps(model)) / 1024

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(
        directions=["minimize", "minimize"], sampler=TreeGPSampler(seed=0, n_startup_trials=10)
    )
    study.optimize(objective, n_trials=args.n_trials)
    front = sorted(study.best_trials, key=lambda t: t.values[1])
    print(f"{len(study.trials)} trials, {len(front)} on the Pareto front:")
    for trial in front:
        error, kilobytes = trial.values
        print(f"  error {error:.4f}  size {kilobytes:8.1f} KB  {trial.params}")


if __name__ == "__main__":
    main()
