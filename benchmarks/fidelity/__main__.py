"""Multi-fidelity benchmark: samplers with pruners, the total training budget on the x-axis.

Examples (from the repository root)::

    # both problems, the default samplers, seeds 0-9, two processes
    python -m benchmarks.fidelity --jobs 2 --out benchmarks/results/fidelity
    # a smoke run (2 seeds, a quarter of the budget, three samplers, the synthetic problem)
    python -m benchmarks.fidelity --quick --out /tmp/fidelity-quick
    # suggestion time of TreeGPSampler with 2000 pruned trials of 20 steps in the study
    python -m benchmarks.fidelity --timing

Records go to ``<out>/runs.jsonl`` (one line per problem, sampler and seed; a run already
recorded is not run again), the tables to ``<out>/<report>``. SMAC3 needs the ``bench`` extra.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from benchmarks.fidelity.problems import MAX_STEP, PROBLEMS  # noqa: E402
from benchmarks.fidelity.runner import best_at, run, split_name  # noqa: E402
from benchmarks.hpo.report import publish  # noqa: E402
from benchmarks.records import load_records, run_missing  # noqa: E402

DEFAULT_SAMPLERS = ("random", "tpe", "tpe+median", "tpe+sha", "smac", "treegp")
QUICK = {"problems": ["curves_synthetic"], "samplers": ["random", "tpe", "treegp"]}
#: The sampler whose final median the others are measured against ("budget to reach").
REFERENCE = "tpe"
#: Budget fractions of the table.
FRACTIONS = (0.25, 0.5, 1.0)


def _check_name(name: str) -> str:
    split_name(name)
    return name


def _job(problem: str, sampler: str, seed: int, budget: int) -> dict[str, Any]:
    task = dataclasses.replace(PROBLEMS[problem], budget=budget)
    start = time.perf_counter()
    result = run(sampler, task, seed)
    return {
        "problem": problem,
        "sampler": sampler,
        "seed": seed,
        "budget": budget,
        "trace": result.trace,
        "sampler_seconds": result.sampler_seconds,
        "n_trials": result.n_trials,
        "n_full": result.n_full,
        "wall_seconds": time.perf_counter() - start,
    }


def _run_jobs(jobs: list[tuple[str, str, int, int]], out: Path, n_jobs: int) -> list[str]:
    def describe(job: tuple, record: dict[str, Any]) -> str:
        final = record["trace"][-1][1] if record["trace"] else math.inf
        return f"{job[0]:>18} {job[1]:>22} seed {job[2]:3d}: best {final:.5g}"

    def key(r: dict[str, Any]) -> tuple:
        return (r["problem"], r["sampler"], r["seed"], r["budget"])

    return run_missing(_job, jobs, out / "runs.jsonl", n_jobs, key, describe)


def _median_curve(records: list[dict[str, Any]], grid: np.ndarray) -> np.ndarray:
    values = np.array([[best_at(r["trace"], b) for b in grid] for r in records])
    return np.median(values, axis=0)


def _format(value: float) -> str:
    return "-" if not math.isfinite(value) else f"{value:.4g}"


def markdown(records: list[dict[str, Any]]) -> str:
    """Per problem: median best at each budget fraction, the budget at which each sampler's
    median reaches the reference's final median, seconds per suggestion, trials run."""
    lines = []
    for problem in sorted({r["problem"] for r in records}):
        mine = [r for r in records if r["problem"] == problem]
        budget = max(r["budget"] for r in mine)
        grid = np.linspace(0, budget, 201)
        samplers = sorted({r["sampler"] for r in mine})
        reference = [r for r in mine if r["sampler"] == REFERENCE]
        target = _median_curve(reference, grid)[-1] if reference else math.nan
        lines += [
            f"### {problem} (budget {budget} steps = {budget // MAX_STEP} full trainings)",
            "",
            "Median best value of a fully trained configuration [q25, q75] at a share of the "
            f"budget; 'to reach': the share of the budget at which the median reaches "
            f"{REFERENCE}'s final median ({_format(target)}).",
            "",
            "| sampler | seeds | "
            + " | ".join(f"{int(f * 100)}% budget" for f in FRACTIONS)
            + " | to reach | s / suggestion | trials (full) |",
            "|---" * (6 + len(FRACTIONS)) + "|",
        ]
        for sampler in samplers:
            runs = [r for r in mine if r["sampler"] == sampler]
            cells = []
            for fraction in FRACTIONS:
                values = [best_at(r["trace"], fraction * budget) for r in runs]
                q25, q50, q75 = np.percentile(values, [25, 50, 75])
                cells.append(f"{_format(q50)} [{_format(q25)}, {_format(q75)}]")
            curve = _median_curve(runs, grid)
            reached = np.flatnonzero(curve <= target)
            to_reach = f"{grid[reached[0]] / budget:.0%}" if len(reached) else "never"
            seconds = np.median([s for r in runs for s in r["sampler_seconds"]])
            trials = np.median([r["n_trials"] for r in runs])
            full = np.median([r["n_full"] for r in runs])
            lines.append(
                f"| {sampler} | {len(runs)} | "
                + " | ".join(cells)
                + f" | {to_reach} | {seconds:.3f} | {trials:.0f} ({full:.0f}) |"
            )
        lines.append("")
    return "\n".join(lines)


def timing(n_trials: int = 2000, n_steps: int = 20, repeats: int = 5) -> str:
    """Seconds per suggestion of TreeGPSampler in a study holding ``n_trials`` PRUNED trials of
    ``n_steps`` reported values each (random configurations of ``curves_synthetic``)."""
    import optuna

    from benchmarks.fidelity.problems import CURVES_SYNTHETIC_SPACE, curves_synthetic_curve
    from benchmarks.hpo.spec import suggest
    from condsamplers import TreeGPSampler

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    for _ in range(n_trials):
        trial = study.ask()
        config = suggest(trial, CURVES_SYNTHETIC_SPACE)
        for step, value in enumerate(curves_synthetic_curve(config), start=1):
            if step > n_steps:
                break
            trial.report(value, step)
        study.tell(trial, state=optuna.trial.TrialState.PRUNED)
    study.sampler = TreeGPSampler(seed=0)
    seconds = []
    for _ in range(repeats):
        trial = study.ask()
        start = time.perf_counter()
        suggest(trial, CURVES_SYNTHETIC_SPACE)
        seconds.append(time.perf_counter() - start)
        study.tell(trial, state=optuna.trial.TrialState.PRUNED)
    return (
        f"TreeGPSampler, {n_trials} PRUNED trials of {n_steps} steps: median "
        f"{np.median(seconds):.2f} s per suggestion (min {min(seconds):.2f}, max "
        f"{max(seconds):.2f}, {repeats} suggestions)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", choices=PROBLEMS, default=None)
    parser.add_argument("--samplers", nargs="+", type=_check_name, default=None)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--budget", type=int, default=None, help="steps; override every problem's")
    parser.add_argument("--jobs", type=int, default=1, choices=(1, 2))
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/fidelity"))
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--report", default="report.md")
    parser.add_argument("--timing", action="store_true", help="only the suggestion timing")
    args = parser.parse_args(argv)
    if args.timing:
        print(timing())
        return 0
    problems = args.problems or (QUICK["problems"] if args.quick else list(PROBLEMS))
    samplers = args.samplers or (QUICK["samplers"] if args.quick else list(DEFAULT_SAMPLERS))
    seeds = range(args.first_seed, args.first_seed + (2 if args.quick else args.seeds))

    def budget_of(problem: str) -> int:
        full = PROBLEMS[problem].budget
        return args.budget or (full // 4 if args.quick else full)

    jobs = [(p, s, seed, budget_of(p)) for p in problems for seed in seeds for s in samplers]
    errors = [] if args.report_only else _run_jobs(jobs, args.out, args.jobs)
    wanted = set(jobs)
    records = [
        r
        for r in load_records(args.out / "runs.jsonl")
        if (r["problem"], r["sampler"], r["seed"], r["budget"]) in wanted
    ]
    return publish(markdown(records), args.out / args.report, "benchmarks.fidelity", argv, errors)


if __name__ == "__main__":
    raise SystemExit(main())
