"""TreeGPSampler as the sampler of Ray Tune's ``OptunaSearch``, on a conditional space.

Ray Tune runs the trials (here on a local Ray cluster of this machine); Optuna's define-by-run
space function tells it the conditions, and the condsamplers sampler proposes each
configuration. Needs ``pip install condsamplers[distributed]`` (Ray Tune)::

    python examples/ray_tune.py --n-trials 20

``max_concurrent`` trials run at once: their configurations are the sampler's pending points
(recorded proposals, docs/batch.md), so concurrent trials do not repeat each other.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

import optuna
import ray
from ray import tune
from ray.tune.search import ConcurrencyLimiter
from ray.tune.search.optuna import OptunaSearch

from condsamplers import TreeGPSampler


def define_space(trial: optuna.Trial) -> None:
    """The conditional space, define-by-run: a model choice, a shared rate, and the
    parameters of the chosen model only."""
    model = trial.suggest_categorical("model", ["linear", "net"])
    trial.suggest_float("rate", 1e-4, 1.0, log=True)
    if model == "linear":
        trial.suggest_float("l2", 0.0, 1.0)
    else:
        depth = trial.suggest_int("depth", 1, 3)
        for i in range(1, depth + 1):
            trial.suggest_int(f"width_{i}", 8, 256, log=True)


def trainable(config: dict[str, Any]) -> dict[str, float]:
    """Stands for a training run: the loss of ``config`` (replace it with yours)."""
    loss = (math.log10(config["rate"]) + 2.0) ** 2 / 4.0
    if config["model"] == "linear":
        return {"loss": 0.6 + loss + (config["l2"] - 0.3) ** 2}
    widths = [config[f"width_{i}"] for i in range(1, config["depth"] + 1)]
    penalty = 0.2 * abs(config["depth"] - 2)
    return {"loss": penalty + loss + sum((math.log2(w) - 6.0) ** 2 for w in widths) / 40.0}


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-trials", type=int, default=20)
    parser.add_argument("--max-concurrent", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--storage", default=None, help="an Optuna storage URL to keep the study")
    args = parser.parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    search = OptunaSearch(
        space=define_space,
        metric="loss",
        mode="min",
        sampler=TreeGPSampler(seed=args.seed, n_startup_trials=8),
        storage=None if args.storage is None else optuna.storages.RDBStorage(args.storage),
        study_name="ray-tune",
    )
    ray.init(num_cpus=args.max_concurrent, include_dashboard=False, log_to_driver=False)
    try:
        tuner = tune.Tuner(
            trainable,
            tune_config=tune.TuneConfig(
                search_alg=ConcurrencyLimiter(search, max_concurrent=args.max_concurrent),
                num_samples=args.n_trials,
            ),
            run_config=tune.RunConfig(verbose=0),
        )
        results = tuner.fit()
    finally:
        ray.shutdown()
    best = results.get_best_result(metric="loss", mode="min")
    configs = [tuple(sorted(r.config.items())) for r in results]
    print(f"{len(results)} trials, {len(set(configs))} distinct configurations")
    print(f"best loss {best.metrics['loss']:.4f} at {best.config}")
    return float(best.metrics["loss"])


if __name__ == "__main__":
    main()
