"""A conditional study with Optuna's HyperbandPruner: the tree GP learns from every pruned trial.

An MLP (1 to 3 hidden layers, a width per layer) or a linear SGD classifier on scikit-learn's
digits, trained epoch by epoch; each epoch's validation error is reported with
``trial.report`` and Hyperband stops the unpromising trials early. ``TreeGPSampler`` reads each
pruned trial's last reported error at its epoch (the epoch is one more input of its model) and
proposes configurations for a full training (docs/pruning.md).

Usage::

    python examples/pruned_study.py [--n-trials 40] [--epochs 27]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import optuna
from sklearn.datasets import load_digits
from sklearn.linear_model import SGDClassifier
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler

from condsamplers import TreeGPSampler


def make_model(trial: optuna.Trial) -> MLPClassifier | SGDClassifier:
    """The conditional space: a family, then the family's own parameters."""
    if trial.suggest_categorical("family", ["mlp", "linear"]) == "mlp":
        n_layers = trial.suggest_int("n_layers", 1, 3)
        widths = [trial.suggest_int(f"units_{i}", 16, 256, log=True) for i in range(n_layers)]
        return MLPClassifier(
            hidden_layer_sizes=tuple(widths),
            learning_rate_init=trial.suggest_float("learning_rate_init", 1e-4, 1e-1, log=True),
            alpha=trial.suggest_float("mlp_alpha", 1e-6, 1e-1, log=True),
            random_state=0,
        )
    return SGDClassifier(
        loss=trial.suggest_categorical("loss", ["hinge", "log_loss", "modified_huber"]),
        alpha=trial.suggest_float("sgd_alpha", 1e-7, 1e-1, log=True),
        random_state=0,
    )


def main(argv: list[str] | None = None) -> optuna.Study:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-trials", type=int, default=40)
    parser.add_argument("--epochs", type=int, default=27)
    args = parser.parse_args(argv)

    X, y = load_digits(return_X_y=True)
    X_train, X_val, y_train, y_val = train_test_split(X, y, train_size=1200, random_state=0)
    scaler = StandardScaler().fit(X_train)
    X_train, X_val = scaler.transform(X_train), scaler.transform(X_val)
    classes = np.unique(y)

    def objective(trial: optuna.Trial) -> float:
        model = make_model(trial)
        error = 1.0
        for epoch in range(1, args.epochs + 1):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.partial_fit(X_train, y_train, classes=classes)
            error = 1.0 - model.score(X_val, y_val)
            trial.report(error, epoch)
            if epoch < args.epochs and trial.should_prune():
                raise optuna.TrialPruned()
        return error

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(
        study_name="pruned-example",  # Hyperband assigns brackets by a hash of the name
        sampler=TreeGPSampler(seed=0),
        pruner=optuna.pruners.HyperbandPruner(min_resource=1, max_resource=args.epochs),
    )
    study.optimize(objective, n_trials=args.n_trials)
    states = [t.state for t in study.trials]
    epochs = sum(max(t.intermediate_values, default=0) for t in study.trials)
    print(
        f"{len(states)} trials: {states.count(optuna.trial.TrialState.COMPLETE)} complete, "
        f"{states.count(optuna.trial.TrialState.PRUNED)} pruned; {epochs} epochs trained "
        f"({epochs / args.epochs:.1f} full trainings)"
    )
    print(f"best validation error {study.best_value:.4f} with {study.best_params}")
    return study


if __name__ == "__main__":
    main()
