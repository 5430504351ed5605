"""Many worker processes on one study: trials lost or stuck, duplicate proposals, fallbacks to
independent sampling, and seconds per suggestion as the worker count grows, on JournalStorage
(file backend), SQLite and a local PostgreSQL server.

Each worker is a separate OS process running ``study.optimize`` on a conditional objective
(a model choice, a shared rate, depth-dependent layer widths) with a short sleep standing for
training. With ``--kill``, worker 0 is SIGKILLed in its third trial; the database storages have
a heartbeat (interval 1 s, grace 3 s), the journal has none (Optuna's JournalStorage has no
heartbeat). Counted at the end, before any clean-up::

    python benchmarks/workers.py          # 8 workers, TreeGP, every storage
    python benchmarks/workers.py --workers 2 4 8 --samplers treegp dngo --kill

``fallbacks``: trials started once ``N_STARTUP`` trials were COMPLETE that have no recorded
model-based proposal (the independent sampler chose them); ``near dup.``: pairs of COMPLETE
trials with the same choices and every float within ``NEAR_SHARE`` (1e-6) of its range.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import dataclasses  # noqa: E402
import itertools  # noqa: E402
import math  # noqa: E402
import signal  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import optuna  # noqa: E402
from optuna.trial import FrozenTrial, TrialState  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.local_postgres import PostgresUnavailable, local_postgres  # noqa: E402
from condsamplers import DNGOSampler, TreeGPSampler  # noqa: E402
from condsamplers.samplers.proposals import (  # noqa: E402
    NEAR_SHARE,
    Configuration,
    near_configuration,
    params_key,
    read_proposal,
)

STORAGES = ("journal", "sqlite", "postgres")
SAMPLERS = ("treegp", "dngo")
STUDY = "workers"
N_STARTUP = 10
HEARTBEAT = {"heartbeat_interval": 1, "grace_period": 3}
KILLED_TRIAL = 3
# Worker 0 is killed this long after its third trial starts: more than a heartbeat interval, so
# the trial has a heartbeat on record (killed before its first heartbeat, a trial is invisible to
# Optuna's stale-trial check, which reads the heartbeat table).
KILL_WAIT_SECONDS = 2.0 * HEARTBEAT["heartbeat_interval"]


def objective(trial: optuna.Trial, sleep: float) -> float:
    """The conditional objective of examples/parallel_workers.py, timed: ``suggest_seconds`` is
    the time from the trial's creation (when the sampler's relative step runs) to its last
    suggestion."""
    model = trial.suggest_categorical("model", ["linear", "net"])
    rate = trial.suggest_float("rate", 1e-4, 1.0, log=True)
    value = (math.log10(rate) + 2.0) ** 2 / 4.0
    if model == "linear":
        value += 0.6 + (trial.suggest_float("l2", 0.0, 1.0) - 0.3) ** 2
    else:
        depth = trial.suggest_int("depth", 1, 3)
        widths = [trial.suggest_int(f"width_{i}", 8, 256, log=True) for i in range(1, depth + 1)]
        value += 0.2 * abs(depth - 2) + sum((math.log2(w) - 6.0) ** 2 for w in widths) / 40.0
    started = trial.study.trials[trial.number].datetime_start
    assert started is not None
    trial.set_user_attr("suggest_seconds", time.time() - started.timestamp())
    time.sleep(sleep)
    return value


def make_sampler(name: str, seed: int, fast: bool) -> optuna.samplers.BaseSampler:
    options: dict[str, Any] = dict(seed=seed, n_startup_trials=N_STARTUP)
    if fast:
        options.update(n_candidates=128, n_local_search=1, n_restarts=0)
    if name == "dngo":
        return DNGOSampler(**options, **({"n_epochs": 100} if fast else {}))
    return TreeGPSampler(**options)


def open_storage(url: str) -> optuna.storages.BaseStorage:
    if url.startswith("journal:"):
        from optuna.storages import JournalStorage
        from optuna.storages.journal import JournalFileBackend

        return JournalStorage(JournalFileBackend(url[len("journal:") :]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return optuna.storages.RDBStorage(url, **HEARTBEAT)


def run_worker(args: argparse.Namespace) -> None:
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    study = optuna.load_study(
        study_name=STUDY,
        storage=open_storage(args.storage_url),
        sampler=make_sampler(args.sampler, args.worker, args.fast),
    )

    started = 0

    def tagged(trial: optuna.Trial) -> float:
        nonlocal started
        started += 1
        trial.set_user_attr("worker", args.worker)
        doomed = args.kill and args.worker == 0 and started == KILLED_TRIAL
        # The doomed trial trains until the SIGKILL comes: it dies mid-training.
        return objective(trial, KILL_WAIT_SECONDS * 10 if doomed else args.sleep)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study.optimize(tagged, n_trials=args.trials)


@dataclasses.dataclass
class Outcome:
    storage: str
    sampler: str
    workers: int
    complete: int
    failed: int
    running: int
    exact_duplicates: int
    near_duplicates: int
    fallbacks: int
    suggest_median: float
    wall: float
    recovered: str


@contextlib.contextmanager
def storage_url(kind: str, folder: Path) -> Iterator[str]:
    if kind == "journal":
        yield f"journal:{folder / 'journal.log'}"
    elif kind == "sqlite":
        yield f"sqlite:///{folder / 'study.db'}"
    else:
        with local_postgres() as url:
            yield url


def _complete_before(trials: list[FrozenTrial], trial: FrozenTrial) -> int:
    """Trials that were COMPLETE when ``trial`` started: past the startup phase from
    :data:`N_STARTUP` on, its proposal should come from the model."""
    start = trial.datetime_start
    return sum(
        t.state == TrialState.COMPLETE
        and t.datetime_complete is not None
        and start is not None
        and t.datetime_complete < start
        for t in trials
    )


def count_pairs(trials: list[FrozenTrial], near: float) -> int:
    """Pairs of ``trials`` with the same configuration (``near = 0``) or the same up to ``near``
    of every float's range (the sampler's own test, ``near_configuration``)."""
    if near == 0.0:
        keys = [params_key(t.params) for t in trials]
        return sum(a == b for a, b in itertools.combinations(keys, 2))
    configurations = [Configuration(dict(t.params), dict(t.distributions)) for t in trials]
    return sum(
        near_configuration(a, b.params, near) for a, b in itertools.combinations(configurations, 2)
    )


def measure(
    kind: str, sampler: str, n_workers: int, trials: int, kill: bool, sleep: float, fast: bool
) -> Outcome:
    with tempfile.TemporaryDirectory() as tmp, storage_url(kind, Path(tmp)) as url:
        storage = open_storage(url)
        optuna.create_study(study_name=STUDY, storage=storage)
        command = [sys.executable, __file__, "--worker-of", url, "--samplers", sampler]
        command += ["--trials", str(trials), "--sleep", str(sleep)] + (["--fast"] if fast else [])
        command += ["--kill"] if kill else []
        start = time.perf_counter()
        processes = [
            subprocess.Popen([*command, "--worker", str(i)], stderr=subprocess.PIPE, text=True)
            for i in range(n_workers)
        ]
        study = optuna.load_study(study_name=STUDY, storage=storage)
        if kill:
            _kill_in_third_trial(study, processes[0])
        for process in processes:
            _, err = process.communicate()
            if process.returncode not in (0, -signal.SIGKILL):
                raise RuntimeError(f"a worker failed: {err[-2000:]}")
        wall = time.perf_counter() - start
        every = study.get_trials(deepcopy=False)
        complete = [t for t in every if t.state == TrialState.COMPLETE]
        running = [t for t in every if t.state == TrialState.RUNNING]
        recovered = "-"
        if running and kind != "journal":
            time.sleep(HEARTBEAT["grace_period"] + 1)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                optuna.storages.fail_stale_trials(study)
            left = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
            recovered = f"{len(running) - len(left)} of {len(running)} by fail_stale_trials"
        model_phase = [t for t in complete if _complete_before(every, t) >= N_STARTUP]
        seconds = [t.user_attrs["suggest_seconds"] for t in model_phase]
        return Outcome(
            storage=kind,
            sampler=sampler,
            workers=n_workers,
            complete=len(complete),
            failed=sum(t.state == TrialState.FAIL for t in every),
            running=len(running),
            exact_duplicates=count_pairs(complete, 0.0),
            near_duplicates=count_pairs(complete, NEAR_SHARE),
            fallbacks=sum(read_proposal(t) is None for t in model_phase),
            suggest_median=statistics.median(seconds) if seconds else float("nan"),
            wall=wall,
            recovered=recovered,
        )


def _kill_in_third_trial(study: optuna.Study, process: subprocess.Popen) -> None:
    """SIGKILL ``process`` (worker 0) ``KILL_WAIT_SECONDS`` into its third trial."""
    deadline = time.time() + 600
    while time.time() < deadline and process.poll() is None:
        mine = [t for t in study.get_trials(deepcopy=False) if t.user_attrs.get("worker") == 0]
        if len(mine) >= KILLED_TRIAL and mine[-1].state == TrialState.RUNNING:
            time.sleep(KILL_WAIT_SECONDS)
            process.send_signal(signal.SIGKILL)
            return
        time.sleep(0.05)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--storages", nargs="+", choices=STORAGES, default=list(STORAGES))
    parser.add_argument("--samplers", nargs="+", choices=SAMPLERS, default=["treegp"])
    parser.add_argument("--workers", nargs="+", type=int, default=[8])
    parser.add_argument("--trials", type=int, default=10, help="trials per worker")
    parser.add_argument("--sleep", type=float, default=0.2, help="seconds of 'training'")
    parser.add_argument("--kill", action="store_true", help="SIGKILL worker 0 in its 3rd trial")
    parser.add_argument("--fast", action="store_true", help="cheaper acquisition (tests)")
    parser.add_argument("--worker-of", help=argparse.SUPPRESS)
    parser.add_argument("--worker", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker_of:
        args.storage_url, args.sampler = args.worker_of, args.samplers[0]
        run_worker(args)
        return
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    print(
        f"{args.trials} trials per worker, {args.sleep} s of training each"
        + (", worker 0 killed in its third trial" if args.kill else "")
        + "\n"
    )
    print(
        "| storage | sampler | workers | COMPLETE | FAIL | RUNNING | exact dup. | near dup. "
        "| fallbacks | s / suggestion (median) | wall s | stale trial recovered |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for kind, sampler, n in itertools.product(args.storages, args.samplers, args.workers):
        try:
            o = measure(kind, sampler, n, args.trials, args.kill, args.sleep, args.fast)
        except PostgresUnavailable as why:
            print(f"| {kind} | {sampler} | {n} | skipped: {why} |")
            continue
        print(
            f"| {o.storage} | {o.sampler} | {o.workers} | {o.complete} | {o.failed} | "
            f"{o.running} | {o.exact_duplicates} | {o.near_duplicates} | {o.fallbacks} | "
            f"{o.suggest_median:.3f} | {o.wall:.1f} | {o.recovered} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
