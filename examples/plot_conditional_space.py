"""Draw the conditional tree that TreeGPSampler infers from a define-by-run study.

The objective is the one of ``docs/conditional_spaces.md``: a classifier among an SVC (with a
kernel-dependent ``svc_gamma`` or ``svc_degree``), a random forest or a small neural network
(1 to 3 layers, each with its own width), with a cheap synthetic error in place of the training.
After the trials, ``plot_conditional_space`` draws the tree inferred from them: parameters as
boxes, conditions on the edges, and each path with its number of trials and its best error.

Usage (needs matplotlib: ``pip install condsamplers[plot]``)::

    python examples/plot_conditional_space.py [--out conditional_space.png] [--n-trials 40]
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import optuna  # noqa: E402

from condsamplers import TreeGPSampler  # noqa: E402
from condsamplers.visualization import plot_conditional_space  # noqa: E402


def objective(trial: optuna.Trial) -> float:
    """A synthetic validation error: each branch has its own optimum and its own floor."""
    kind = trial.suggest_categorical("classifier", ["svc", "forest", "mlp"])
    if kind == "svc":
        c = trial.suggest_float("svc_C", 1e-2, 1e3, log=True)
        kernel = trial.suggest_categorical("svc_kernel", ["rbf", "poly"])
        error = 0.04 + 0.01 * (math.log10(c) - 1.0) ** 2
        if kernel == "rbf":
            gamma = trial.suggest_float("svc_gamma", 1e-5, 1e-1, log=True)
            return error + 0.02 * (math.log10(gamma) + 3.0) ** 2
        degree = trial.suggest_int("svc_degree", 2, 5)
        return error + 0.05 + 0.02 * (degree - 3) ** 2
    if kind == "forest":
        depth = trial.suggest_int("rf_max_depth", 2, 24, log=True)
        return 0.08 + 0.3 / depth
    n_layers = trial.suggest_int("mlp_n_layers", 1, 3)
    widths = [trial.suggest_int(f"mlp_width_{i}", 8, 64, log=True) for i in range(1, n_layers + 1)]
    return 0.06 + 0.02 * abs(n_layers - 2) + sum(0.5 / w for w in widths) / n_layers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("conditional_space.png"))
    parser.add_argument("--n-trials", type=int, default=40)
    args = parser.parse_args()

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=TreeGPSampler(seed=0))
    study.optimize(objective, n_trials=args.n_trials)
    print(f"{len(study.trials)} trials, best error {study.best_value:.4f}")

    ax = plot_conditional_space(study)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    ax.figure.savefig(args.out, dpi=100, bbox_inches="tight")
    plt.close(ax.figure)
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
