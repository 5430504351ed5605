"""Suggestion time against the number of trials, several samplers in one run.

For each study size ``n`` the study is filled with the first ``n`` trials of one fixed history
(``--history random``: Optuna's RandomSampler, so every path of the tree gets its share;
``tpe``: multivariate TPE, which concentrates trials on good paths as a real study does). A fresh
sampler then makes one untimed suggestion (its first, cold hyperparameter fit) and
``--repeats`` timed ones, each told before the next, so the timed suggestions are those of a
running study (warm-started fits). Only the sampler's own methods are clocked
(:class:`run.TimedSampler`); the median is reported.

Example (from the repository root)::

    python benchmarks/scaling.py --samplers treegp arcgp gp --sizes 50 100 200 500 1000 2000 \\
        --out benchmarks/results/scaling

``--memory`` runs each cell in a fresh process (the history drawn there) and reports its
peak resident memory beside the time (the whole process: Python, torch, the study and the
fit)::

    python benchmarks/scaling.py --samplers treegp dngo --sizes 1000 5000 10000 --memory

``--max-seconds S`` stops timing a sampler at the larger sizes once its median suggestion time
at some size exceeded ``S`` (an O(n^3) GP at 5000 trials would take hours); the table leaves
those cells empty and says so below it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shlex
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import optuna
from optuna.trial import FrozenTrial

try:
    from benchmarks.problems import PROBLEMS, get_problem
    from benchmarks.run import SAMPLERS, TimedSampler, _init_worker, make_sampler
except ModuleNotFoundError:  # run as a script: ``python benchmarks/scaling.py``
    from problems import PROBLEMS, get_problem  # type: ignore[no-redef]
    from run import SAMPLERS, TimedSampler, _init_worker, make_sampler  # type: ignore[no-redef]

RESULTS_FILE = "scaling.json"
HISTORIES = ("random", "tpe")


def history(problem_name: str, kind: str, n: int, seed: int = 0) -> list[FrozenTrial]:
    """``n`` COMPLETE trials of ``problem_name`` drawn by the ``kind`` sampler."""
    problem = get_problem(problem_name)
    if kind == "random":
        sampler: optuna.samplers.BaseSampler = optuna.samplers.RandomSampler(seed=seed)
    else:
        sampler = optuna.samplers.TPESampler(multivariate=True, group=True, seed=seed)
    study = optuna.create_study(direction=problem.direction, sampler=sampler)
    study.optimize(problem.objective, n_trials=n)
    return study.get_trials(deepcopy=False)


def time_suggestions(
    problem_name: str, sampler_name: str, trials: list[FrozenTrial], repeats: int, seed: int
) -> list[float]:
    """Sampler seconds of ``repeats`` suggestions after ``len(trials)`` trials (one warm-up)."""
    problem = get_problem(problem_name)
    timed = TimedSampler(make_sampler(sampler_name, seed, problem.n_startup_trials))
    study = optuna.create_study(direction=problem.direction, sampler=timed)
    study.add_trials(trials)
    times = []
    for i in range(repeats + 1):
        trial = study.ask()
        study.tell(trial, problem.objective(trial))
        if i > 0:
            times.append(timed.times[trial.number])
    return times


def cell_in_fresh_process(
    problem_name: str, kind: str, sampler_name: str, n: int, repeats: int
) -> tuple[list[float], float]:
    """``time_suggestions`` in this (fresh) process on a history drawn here; the times and the
    process's peak resident memory in MB."""
    import resource

    _init_worker()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    times = time_suggestions(
        problem_name, sampler_name, history(problem_name, kind, n), repeats, 0
    )
    return times, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def measure_in_fresh_process(
    problem_name: str, kind: str, sampler_name: str, n: int, repeats: int
) -> tuple[list[float], float]:
    import concurrent.futures
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
        job = pool.submit(cell_in_fresh_process, problem_name, kind, sampler_name, n, repeats)
        return job.result()


def markdown_table(records: Sequence[dict[str, Any]], key: str = "median") -> str:
    """Median suggestion time (s) per sampler (rows) and study size (columns); ``key="peak_mb"``:
    the peak memory (MB) of each cell's process instead."""
    sizes = sorted({r["n_trials"] for r in records if key in r})
    samplers = list(dict.fromkeys(r["sampler"] for r in records if key in r))
    cell = {(r["sampler"], r["n_trials"]): r[key] for r in records if key in r}
    lines = [
        "| sampler | " + " | ".join(f"{n} trials" for n in sizes) + " |",
        "|---" * (len(sizes) + 1) + "|",
    ]
    for name in samplers:
        values = [f"{cell[(name, n)]:.3g}" if (name, n) in cell else "" for n in sizes]
        lines.append(f"| {name} | " + " | ".join(values) + " |")
    return "\n".join(lines)


def plot(records: Sequence[dict[str, Any]], path: Path) -> None:
    """Log-log plot of median suggestion time against study size."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for name in dict.fromkeys(r["sampler"] for r in records):
        rows = sorted((r["n_trials"], r["median"]) for r in records if r["sampler"] == name)
        ax.plot([n for n, _ in rows], [t for _, t in rows], marker="o", label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("trials in the study")
    ax.set_ylabel("median suggestion time (s)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--problem", choices=list(PROBLEMS), default="jenatton_large")
    parser.add_argument("--samplers", nargs="+", choices=list(SAMPLERS), default=["treegp"])
    parser.add_argument("--sizes", nargs="+", type=int, default=[50, 100, 200, 500, 1000, 2000])
    parser.add_argument("--repeats", type=int, default=3, help="timed suggestions per cell")
    parser.add_argument("--history", choices=HISTORIES, default="random")
    parser.add_argument("--out", type=Path, default=None, help="folder for json/md/png")
    parser.add_argument(
        "--memory", action="store_true", help="each cell in a fresh process; peak memory too"
    )
    parser.add_argument(
        "--max-seconds",
        type=float,
        default=None,
        help="skip a sampler at larger sizes once its median exceeded this many seconds",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    _init_worker()
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    trials = [] if args.memory else history(args.problem, args.history, max(args.sizes))
    records = []
    too_slow: dict[str, int] = {}  # sampler -> the size at which it exceeded --max-seconds
    for n in sorted(args.sizes):
        for name in args.samplers:
            if name in too_slow:
                continue
            start = time.perf_counter()
            peak: dict[str, float] = {}
            if args.memory:
                times, peak["peak_mb"] = measure_in_fresh_process(
                    args.problem, args.history, name, n, args.repeats
                )
            else:
                times = time_suggestions(args.problem, name, trials[:n], args.repeats, seed=0)
            record = {
                "sampler": name,
                "n_trials": n,
                "times": times,
                "median": statistics.median(times),
                **peak,
            }
            records.append(record)
            print(
                f"{args.problem} n={n} {name}: median {record['median']:.3f} s "
                f"({time.perf_counter() - start:.0f} s wall)",
                flush=True,
            )
            if args.max_seconds is not None and record["median"] > args.max_seconds:
                too_slow[name] = n
    table = markdown_table(records)
    if args.memory:
        table += "\n\nPeak memory of each cell's process (MB):\n\n" + markdown_table(
            records, "peak_mb"
        )
    if too_slow:
        table += "\n\n" + "; ".join(
            f"{name}: not timed beyond {n} trials (median above {args.max_seconds:g} s there)"
            for name, n in too_slow.items()
        )
    print("\n" + table)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        meta = {
            "command": "python " + " ".join(shlex.quote(a) for a in [sys.argv[0], *sys.argv[1:]]),
            "problem": args.problem,
            "history": args.history,
            "repeats": args.repeats,
            "machine": f"{platform.machine()}, {os.cpu_count()} cores",
            "finished": dt.datetime.now().isoformat(timespec="seconds"),
        }
        stem = f"scaling_{args.problem}_{args.history}"
        (args.out / f"{stem}.json").write_text(json.dumps({**meta, "records": records}, indent=1))
        (args.out / f"{stem}.md").write_text(f"`{meta['command']}`\n\n{table}\n")
        plot(records, args.out / f"{stem}.png")


if __name__ == "__main__":
    main()
