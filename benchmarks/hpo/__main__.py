"""The real-HPO suite from one command.

Examples (from the repository root)::

    # the whole suite: every task, every sampler, seeds 0-9, two processes
    python -m benchmarks.hpo --jobs 2 --out benchmarks/results/hpo
    # a subset
    python -m benchmarks.hpo --tasks cash_wine --samplers random treegp --seeds 3
    # a smoke run (2 seeds, 12 trials, three samplers, two small tasks): a minute or two
    python -m benchmarks.hpo --quick --out /tmp/hpo-quick
    # the tables again from what is recorded, running nothing
    python -m benchmarks.hpo --report-only --out benchmarks/results/hpo

Peers need the optional extra: ``pip install -e '.[bench]'``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

from benchmarks.hpo.peers import SAMPLERS, check_sampler_name  # noqa: E402
from benchmarks.hpo.report import markdown, publish  # noqa: E402
from benchmarks.hpo.runner import load_records, run_jobs  # noqa: E402
from benchmarks.hpo.tasks import TASKS, get_task  # noqa: E402

DEFAULT_SAMPLERS = ("random", "tpe", "tpe_mv", "gp", "smac", "treegp", "arcgp", "bngp")
QUICK = {"tasks": ["cash_iris", "cash_diabetes"], "samplers": ["random", "tpe", "treegp"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", choices=TASKS, default=None)
    parser.add_argument(
        "--samplers", nargs="+", type=check_sampler_name, default=None, help=f"{SAMPLERS}"
    )
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--n-trials", type=int, default=None, help="override every task's")
    parser.add_argument("--jobs", type=int, default=1, choices=(1, 2))
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/hpo"))
    parser.add_argument("--quick", action="store_true", help="2 seeds, 12 trials, 3 samplers")
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--report", default="report.md", help="file name of the tables in --out")
    args = parser.parse_args(argv)
    tasks = args.tasks or (QUICK["tasks"] if args.quick else list(TASKS))
    samplers = args.samplers or (QUICK["samplers"] if args.quick else list(DEFAULT_SAMPLERS))
    seeds = range(args.first_seed, args.first_seed + (2 if args.quick else args.seeds))
    n_trials = 12 if args.quick and args.n_trials is None else args.n_trials
    errors: list[str] = []
    if not args.report_only:
        jobs = [
            (task, sampler, seed, n_trials or get_task(task).n_trials)
            for task in tasks
            for seed in seeds
            for sampler in samplers
        ]
        errors = run_jobs(jobs, args.out, args.jobs)
    records = [
        r
        for r in load_records(args.out)
        if r["task"] in tasks
        and r["sampler"] in samplers
        and r["seed"] in seeds
        and (n_trials is None or r["n_trials"] == n_trials)
    ]
    spaces = {task: get_task(task).space for task in {r["task"] for r in records}}
    table = markdown(records, spaces=spaces)
    return publish(table, args.out / args.report, "benchmarks.hpo", argv, errors)


if __name__ == "__main__":
    sys.exit(main())
