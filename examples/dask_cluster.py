"""TreeGPSampler on a Dask cluster: workers of a ``dask.distributed`` cluster optimise one study
through optuna-integration's ``DaskStorage`` (the study lives on the scheduler).

Here the cluster is a ``LocalCluster`` of processes on this machine; with a real cluster pass
its scheduler address to ``Client``. Needs ``pip install condsamplers[distributed]``::

    python examples/dask_cluster.py --workers 2 --n-trials 20

Each Dask task runs ``study.optimize`` with its own TreeGPSampler (its own seed); the recorded
proposals make the tasks' running trials each other's pending points (docs/batch.md).
"""

from __future__ import annotations

import argparse
import math
import warnings

import optuna
from dask.distributed import Client, LocalCluster, wait
from optuna_integration import DaskStorage

from condsamplers import TreeGPSampler


def objective(trial: optuna.Trial) -> float:
    """A conditional objective (replace it with yours): examples/parallel_workers.py's, written
    here because Dask ships a function of the main script to its workers by value, and the
    workers could not import it from another example."""
    model = trial.suggest_categorical("model", ["linear", "net"])
    rate = trial.suggest_float("rate", 1e-4, 1.0, log=True)
    loss = (math.log10(rate) + 2.0) ** 2 / 4.0
    if model == "linear":
        return 0.6 + loss + (trial.suggest_float("l2", 0.0, 1.0) - 0.3) ** 2
    depth = trial.suggest_int("depth", 1, 3)
    widths = [trial.suggest_int(f"width_{i}", 8, 256, log=True) for i in range(1, depth + 1)]
    return 0.2 * abs(depth - 2) + loss + sum((math.log2(w) - 6.0) ** 2 for w in widths) / 40.0


def optimize_on_worker(storage_name: str, seed: int, n_trials: int) -> None:
    """One Dask task: its own sampler, the shared study through the scheduler's storage."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    study = optuna.load_study(
        study_name="dask", storage=DaskStorage(name=storage_name), sampler=TreeGPSampler(seed=seed)
    )
    study.optimize(objective, n_trials=n_trials)


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--n-trials", type=int, default=20, help="in all")
    args = parser.parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    with (
        LocalCluster(
            n_workers=args.workers, threads_per_worker=1, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        storage = DaskStorage(client=client)
        study = optuna.create_study(storage=storage, study_name="dask")
        per_worker = math.ceil(args.n_trials / args.workers)
        futures = [
            client.submit(optimize_on_worker, storage.name, seed, per_worker, pure=False)
            for seed in range(args.workers)
        ]
        wait(futures)
        for future in futures:
            future.result()  # raises a task's error here
        trials = study.get_trials(states=(optuna.trial.TrialState.COMPLETE,))
        configs = {tuple(sorted(t.params.items())) for t in trials}
        print(f"{len(trials)} trials, {len(configs)} distinct configurations")
        print(f"best value {study.best_value:.4f} at {study.best_params}")
        return float(study.best_value)


if __name__ == "__main__":
    main()
