"""Seconds per importance evaluation: SobolImportanceEvaluator against Optuna's evaluators.

The study is a typical new user's: 30 random trials over three families of seven float
parameters each (22 parameters, 21 of them conditional). Each evaluator is timed on its first
call in a fresh process (what a user waits for), ``--repeats`` times, and the median printed::

    python benchmarks/importance_timing.py
    python benchmarks/importance_timing.py --trials 100 --repeats 5
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

EVALUATORS = ("sobol", "fanova", "ped_anova")


def conditional_study(n_trials: int, seed: int = 0):  # noqa: ANN201 (optuna imported lazily)
    """A study of ``n_trials`` random trials: a family among three, then its 7 floats."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)

    def objective(trial: optuna.Trial) -> float:
        family = trial.suggest_categorical("family", ["a", "b", "c"])
        value = {"a": 0.0, "b": 1.0, "c": 2.0}[family]
        for i in range(7):
            value += (trial.suggest_float(f"{family}_x{i}", -1.0, 1.0) - 0.1 * i) ** 2
        return value

    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=seed))
    study.optimize(objective, n_trials=n_trials)
    return study


def time_one(evaluator_name: str, n_trials: int) -> float:
    """Seconds of the first ``get_param_importances`` call with ``evaluator_name``."""
    import optuna

    from condsamplers.importance import SobolImportanceEvaluator

    study = conditional_study(n_trials)
    evaluator = {
        "sobol": lambda: SobolImportanceEvaluator(seed=0),
        "fanova": lambda: optuna.importance.FanovaImportanceEvaluator(seed=0),
        "ped_anova": lambda: optuna.importance.PedAnovaImportanceEvaluator(),
    }[evaluator_name]()
    start = time.perf_counter()
    optuna.importance.get_param_importances(study, evaluator=evaluator)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--evaluators", nargs="+", choices=EVALUATORS, default=list(EVALUATORS))
    parser.add_argument("--one", choices=EVALUATORS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:  # a child process: time one first call, print the seconds
        print(f"{time_one(args.one, args.trials):.4f}")
        return
    print(
        f"{args.trials} trials, 22 parameters; first call in a fresh process, median of "
        f"{args.repeats}\n"
    )
    print("| evaluator | seconds (median) | all |")
    print("|---|---|---|")
    for name in args.evaluators:
        times = []
        for _ in range(args.repeats):
            done = subprocess.run(
                [sys.executable, __file__, "--one", name, "--trials", str(args.trials)],
                capture_output=True,
                text=True,
                check=True,
            )
            times.append(float(done.stdout.strip().splitlines()[-1]))
        listed = ", ".join(f"{t:.2f}" for t in times)
        print(f"| {name} | {statistics.median(times):.2f} | {listed} |")


if __name__ == "__main__":
    main()
