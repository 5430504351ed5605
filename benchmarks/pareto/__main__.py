"""Multi-objective benchmark over conditional spaces: the hypervolume of the front
each sampler finds, peers in the same run on the same seeds.

Examples (from the repository root)::

    # both problems, every sampler, seeds 0-9, two processes
    python -m benchmarks.pareto --jobs 2 --out benchmarks/results/pareto
    # a smoke run (2 seeds, 20 trials, three samplers, the synthetic problem)
    python -m benchmarks.pareto --quick --out /tmp/pareto-quick

Records go to ``<out>/runs.jsonl`` (one line per problem, sampler and seed; a run already
recorded is not run again), the tables to ``<out>/<report>``. SMAC3 needs the ``bench`` extra.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from benchmarks.hpo.report import publish  # noqa: E402
from benchmarks.pareto.problems import PROBLEMS, front_hypervolume, true_hypervolume  # noqa: E402
from benchmarks.pareto.runner import check_name, run  # noqa: E402
from benchmarks.records import load_records, run_missing  # noqa: E402

DEFAULT_SAMPLERS = ("random", "tpe", "nsga2", "gp", "smac", "treegp")
QUICK = {"problems": ["branches_zdt"], "samplers": ["random", "tpe", "treegp"]}


def _job(problem: str, sampler: str, seed: int, n_trials: int) -> dict[str, Any]:
    start = time.perf_counter()
    result = run(sampler, PROBLEMS[problem], seed, n_trials)
    return {
        "problem": problem,
        "sampler": sampler,
        "seed": seed,
        "n_trials": n_trials,
        "values": result.values,
        "sampler_seconds": result.sampler_seconds,
        "wall_seconds": time.perf_counter() - start,
    }


def _run_jobs(jobs: list[tuple[str, str, int, int]], out: Path, n_jobs: int) -> list[str]:
    def key(r: dict[str, Any]) -> tuple:
        return (r["problem"], r["sampler"], r["seed"], r["n_trials"])

    return run_missing(_job, jobs, out / "runs.jsonl", n_jobs, key)


def hypervolume_at(record: dict[str, Any], n: int) -> float:
    """The hypervolume of the front of the record's first ``n`` trials."""
    problem = PROBLEMS[record["problem"]]
    return front_hypervolume(np.array(record["values"][:n]), problem.reference)


def report(records: list[dict[str, Any]], problems: list[str], samplers: list[str]) -> str:
    """Per problem, median final hypervolume [q25, q75] (as a share of the true front's where
    known), the median at half the trials, the mean rank over seeds, seconds per suggestion;
    then the mean rank over the problems."""
    lines, ranks_by_problem = [], {}
    for name in problems:
        problem = PROBLEMS[name]
        mine = [r for r in records if r["problem"] == name and r["sampler"] in samplers]
        if not mine:
            continue
        n = max(r["n_trials"] for r in mine)
        truth = true_hypervolume(problem)
        final = {
            s: {r["seed"]: hypervolume_at(r, n) for r in mine if r["sampler"] == s}
            for s in samplers
        }
        seeds = sorted(set.intersection(*(set(v) for v in final.values() if v)) or set())
        ranks = _mean_ranks(final, seeds)
        ranks_by_problem[name] = ranks
        share = "" if truth is None else " | share of the true front"
        lines += [
            f"### {name} ({n} trials, reference point {problem.reference}"
            + ("" if truth is None else f", true front {truth:.4f}")
            + ")",
            "",
            f"| sampler | seeds | median hypervolume [q25, q75]{share} | at {n // 2} trials "
            "| rank | s / suggestion |",
            "|---|---|---|---|---|---|" + ("" if truth is None else "---|"),
        ]
        for sampler in sorted(samplers, key=lambda s: ranks.get(s, np.inf)):
            runs = [r for r in mine if r["sampler"] == sampler and r["seed"] in seeds]
            if not runs:
                continue
            values = np.array([final[sampler][r["seed"]] for r in runs])
            half = np.median([hypervolume_at(r, n // 2) for r in runs])
            q25, med, q75 = np.percentile(values, [25, 50, 75])
            seconds = np.median([np.median(r["sampler_seconds"]) for r in runs])
            of_truth = "" if truth is None else f" | {med / truth:.3f}"
            lines.append(
                f"| {sampler} | {len(runs)} | {med:.4f} [{q25:.4f}, {q75:.4f}]{of_truth} | "
                f"{half:.4f} | {ranks[sampler]:.2f} | {seconds:.3g} |"
            )
        lines.append("")
    lines += ["### Mean rank over the problems", "", "| sampler | problems | mean rank |"]
    lines.append("|---|---|---|")
    means = {
        s: np.mean([r[s] for r in ranks_by_problem.values() if s in r])
        for s in samplers
        if any(s in r for r in ranks_by_problem.values())
    }
    for sampler, mean in sorted(means.items(), key=lambda item: item[1]):
        count = sum(sampler in r for r in ranks_by_problem.values())
        lines.append(f"| {sampler} | {count} | {mean:.2f} |")
    return "\n".join(lines)


def _mean_ranks(final: dict[str, dict[int, float]], seeds: list[int]) -> dict[str, float]:
    """Each sampler's rank per seed by hypervolume (1 the largest, ties shared), averaged."""
    samplers = [s for s in final if final[s]]
    totals = dict.fromkeys(samplers, 0.0)
    for seed in seeds:
        values = np.array([final[s][seed] for s in samplers])
        for s, v in zip(samplers, values, strict=True):
            totals[s] += 1 + np.sum(values > v) + 0.5 * (np.sum(values == v) - 1)
    return {s: totals[s] / max(1, len(seeds)) for s in samplers}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--problems", nargs="+", choices=sorted(PROBLEMS), default=sorted(PROBLEMS)
    )
    parser.add_argument("--samplers", nargs="+", type=check_name, default=list(DEFAULT_SAMPLERS))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--n-trials", type=int, default=None, help="default: the problem's")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/pareto"))
    parser.add_argument("--report", default="report.md")
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--quick", action="store_true", help="2 seeds, 20 trials, 3 samplers")
    args = parser.parse_args(argv)
    if args.quick:
        args.problems, args.samplers = QUICK["problems"], QUICK["samplers"]
        args.seeds, args.n_trials = 2, 20
    jobs = [
        (problem, sampler, seed, args.n_trials or PROBLEMS[problem].n_trials)
        for problem in args.problems
        for sampler in args.samplers
        for seed in range(args.seeds)
    ]
    errors = [] if args.report_only else _run_jobs(jobs, args.out, args.jobs)
    wanted = {(p, s, seed, n) for p, s, seed, n in jobs}
    records = [
        r
        for r in load_records(args.out / "runs.jsonl")
        if (r["problem"], r["sampler"], r["seed"], r["n_trials"]) in wanted
    ]
    table = report(records, args.problems, args.samplers)
    return publish(table, args.out / args.report, "benchmarks.pareto", argv, errors)


if __name__ == "__main__":
    raise SystemExit(main())
