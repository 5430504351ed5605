"""A worker to copy: several processes (or machines) optimise one study on a shared storage.

Start as many workers as you like, each with its own ``--worker`` number (its seed), on one
storage. Each model-based proposal is recorded on its trial, so the other workers treat it as
pending (docs/batch.md): no two workers evaluate the same configuration, and each one's
proposals account for what the others are evaluating.

Storages:
- a journal file, for processes on one machine (or a shared file system):
  ``--storage journal.log``
- a database server, for several machines (PostgreSQL, MySQL): an SQLAlchemy URL such as
  ``--storage postgresql://user:password@host/db`` (``pip install psycopg2-binary``)
- SQLite (``sqlite:///study.db``) works for a few local workers; it locks under many.

Usage (four workers on one machine, 10 trials each)::

    for i in 0 1 2 3; do
        python examples/parallel_workers.py --storage journal.log --worker $i --n-trials 10 &
    done; wait

A worker killed mid-trial leaves its trial RUNNING; with ``--heartbeat`` Optuna marks it FAIL
once the others see no heartbeat for ``grace`` seconds (optuna.storages.RDBStorage's
``heartbeat_interval``/``grace_period``; database storages only).
"""

from __future__ import annotations

import argparse
import math

import optuna
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend

from condsamplers import TreeGPSampler


def objective(trial: optuna.Trial) -> float:
    """A conditional objective (replace it with yours): a model choice, a shared learning rate,
    and a depth-dependent number of layer widths."""
    model = trial.suggest_categorical("model", ["linear", "net"])
    rate = trial.suggest_float("rate", 1e-4, 1.0, log=True)
    loss = (math.log10(rate) + 2.0) ** 2 / 4.0
    if model == "linear":
        return 0.6 + loss + (trial.suggest_float("l2", 0.0, 1.0) - 0.3) ** 2
    depth = trial.suggest_int("depth", 1, 3)
    widths = [trial.suggest_int(f"width_{i}", 8, 256, log=True) for i in range(1, depth + 1)]
    return 0.2 * abs(depth - 2) + loss + sum((math.log2(w) - 6.0) ** 2 for w in widths) / 40.0


def make_storage(spec: str, heartbeat: bool) -> optuna.storages.BaseStorage | str:
    """A URL (``sqlite:///``, ``postgresql://``...) is an RDB storage; anything else is the
    path of a journal file."""
    if "://" in spec:
        if not heartbeat:
            return spec
        return optuna.storages.RDBStorage(spec, heartbeat_interval=10, grace_period=30)
    return JournalStorage(JournalFileBackend(spec))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--storage", default="journal.log")
    parser.add_argument("--study-name", default="conditional-workers")
    parser.add_argument("--worker", type=int, default=0, help="this worker's number (its seed)")
    parser.add_argument("--n-trials", type=int, default=10, help="trials this worker runs")
    parser.add_argument("--heartbeat", action="store_true", help="RDB storages: fail stale trials")
    args = parser.parse_args()

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(
        study_name=args.study_name,
        storage=make_storage(args.storage, args.heartbeat),
        sampler=TreeGPSampler(seed=args.worker),  # one seed per worker
        load_if_exists=True,
    )
    study.optimize(objective, n_trials=args.n_trials)
    finished = [t for t in study.trials if t.state.is_finished()]
    print(f"worker {args.worker}: done; {len(finished)} finished trials in the study", end="")
    print(f", best value {study.best_value:.4f}")


if __name__ == "__main__":
    main()
