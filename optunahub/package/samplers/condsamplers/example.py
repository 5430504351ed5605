"""A conditional study with the tree GP, loaded from OptunaHub: which model, then the
parameters that exist only for that model (a depth-dependent number of layer widths)."""

from __future__ import annotations

import math

import optuna
import optunahub


def objective(trial: optuna.Trial) -> float:
    model = trial.suggest_categorical("model", ["linear", "kernel", "net"])
    rate = trial.suggest_float("rate", 1e-4, 1.0, log=True)  # shared by every model
    loss = (math.log10(rate) + 2.0) ** 2 / 4.0
    if model == "linear":
        return 1.0 + loss + (trial.suggest_float("l2", 0.0, 1.0) - 0.3) ** 2
    if model == "kernel":
        gamma = trial.suggest_float("gamma", 1e-3, 1e1, log=True)
        return 0.5 + loss + (math.log10(gamma) + 1.0) ** 2 / 8.0
    depth = trial.suggest_int("depth", 1, 3)
    widths = [trial.suggest_int(f"width_{i}", 8, 256, log=True) for i in range(1, depth + 1)]
    return 0.2 * abs(depth - 2) + loss + sum((math.log2(w) - 6.0) ** 2 for w in widths) / 40.0


def main(n_trials: int = 30) -> optuna.Study:
    module = optunahub.load_module("samplers/condsamplers")
    sampler = module.TreeGPSampler(seed=0)
    study = optuna.create_study(sampler=sampler)
    study.optimize(objective, n_trials=n_trials)
    print(sampler.conditional_space(study).describe())
    print(f"best value {study.best_value:.4f} with {study.best_params}")
    return study


if __name__ == "__main__":
    main()
