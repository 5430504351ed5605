"""The main job: a real conditional study with TreeGPSampler, stored in SQLite.

Model selection on scikit-learn's digits data: an SVC (with a kernel-dependent ``gamma`` or
``degree``), a random forest or a small neural network (with 1 to 3 layers, each with its own
width). Which parameters exist depends on earlier choices; the sampler reconstructs that tree
from the trials themselves. The study lives in ``condsamplers_example.db``: run the script again
to resume it, or inspect it with ``optuna-dashboard`` / ``optuna.load_study``.

Usage::

    python examples/conditional_study.py [--n-trials 30] [--storage sqlite:///condsamplers_example.db]
"""

from __future__ import annotations

import argparse
import warnings

import optuna
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import cross_val_score
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

from condsamplers import TreeGPSampler


def make_model(trial: optuna.Trial):
    """Define-by-run conditional space: which parameters exist depends on earlier choices."""
    kind = trial.suggest_categorical("classifier", ["svc", "forest", "mlp"])
    if kind == "svc":
        kernel = trial.suggest_categorical("svc_kernel", ["rbf", "poly"])
        c = trial.suggest_float("svc_C", 1e-2, 1e3, log=True)
        if kernel == "rbf":
            gamma = trial.suggest_float("svc_gamma", 1e-5, 1e-1, log=True)
            return make_pipeline(StandardScaler(), SVC(C=c, kernel="rbf", gamma=gamma))
        degree = trial.suggest_int("svc_degree", 2, 4)
        return make_pipeline(StandardScaler(), SVC(C=c, kernel="poly", degree=degree))
    if kind == "forest":
        return RandomForestClassifier(
            n_estimators=trial.suggest_int("rf_n_estimators", 10, 100, log=True),
            max_depth=trial.suggest_int("rf_max_depth", 2, 24, log=True),
            random_state=0,
            n_jobs=1,
        )
    n_layers = trial.suggest_int("mlp_n_layers", 1, 3)
    widths = [trial.suggest_int(f"mlp_width_{i}", 8, 64, log=True) for i in range(1, n_layers + 1)]
    return make_pipeline(
        StandardScaler(),
        MLPClassifier(
            hidden_layer_sizes=tuple(widths),
            alpha=trial.suggest_float("mlp_alpha", 1e-6, 1e-1, log=True),
            max_iter=25,
            random_state=0,
        ),
    )


def objective(trial: optuna.Trial) -> float:
    X, y = load_digits(return_X_y=True)
    X, y = X[:900], y[:900]  # a smaller sample keeps the example to about a minute
    with warnings.catch_warnings(), threadpool_limits(limits=1):
        warnings.simplefilter("ignore", ConvergenceWarning)
        return float(cross_val_score(make_model(trial), X, y, cv=3, n_jobs=1).mean())


def report_trial(study: optuna.Study, trial: optuna.trial.FrozenTrial) -> None:
    """One progress line per finished trial: its accuracy, the best so far, its model."""
    if trial.value is None:
        print(f"  trial {trial.number:3d}: {trial.state.name}")
        return
    print(
        f"  trial {trial.number:3d}: accuracy {trial.value:.4f}  "
        f"(best {study.best_value:.4f})  {trial.params['classifier']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-trials", type=int, default=30)
    parser.add_argument("--storage", default="sqlite:///condsamplers_example.db")
    parser.add_argument("--study-name", default="digits-model-selection")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    # A CV accuracy lies in [0, 1]: at each step the model fits either the accuracies or the
    # log error log(1 - accuracy), whichever its evidence prefers (output_warping="auto").
    sampler = TreeGPSampler(seed=args.seed)
    study = optuna.create_study(
        study_name=args.study_name,
        storage=args.storage,
        direction="maximize",
        sampler=sampler,
        load_if_exists=True,
    )
    done = len(study.trials)
    print(f"{args.n_trials} trials of TreeGPSampler ({done} already in the study):")
    study.optimize(objective, n_trials=args.n_trials, callbacks=[report_trial])

    print(
        f"Study {args.study_name!r} in {args.storage}: {len(study.trials)} trials "
        f"({done} resumed)."
    )
    print("\nConditional structure inferred from the trials:")
    print(sampler.conditional_space(study).describe())
    best = study.best_trial
    print(f"\nBest trial #{best.number}: 3-fold CV accuracy {best.value:.4f}")
    for name, value in best.params.items():
        print(f"  {name} = {value}")


if __name__ == "__main__":
    main()
