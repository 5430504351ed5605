"""Regression guard: the default TreeGPSampler on the synthetic problems, a few seeds, against
recorded figures; fails when a median final regret is worse by an order of magnitude.

CI runs it after the tests (``.ci/run``, one worker per core); it takes about 3 minutes on
two cores::

    python -m benchmarks.guard                 # check against benchmarks/guard_reference.json
    python -m benchmarks.guard --update        # measure and record new reference figures

The reference is each seed's final regret, recorded with ``--update`` when a change of the
sampler is meant to move the figures (say so in the commit). A problem fails when most of its
seeds end ``FACTOR`` times (or more) above their own reference, which moves its median by an
order of magnitude; so does a case that raises. Seed by seed rather than on the median alone,
so that one seed whose run takes another branch (floating-point differences between machines
can tip a close choice) neither fails the guard nor hides a regression of the others. The full
figures (10 seeds, every peer) are ``benchmarks/run.py``'s (docs/benchmarks.md).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import multiprocessing  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from benchmarks.run import run_case_safely  # noqa: E402

PROBLEMS = (
    "jenatton_small",
    "jenatton_small_offcentre",
    "jenatton_large",
    "net_depth",
    "branching_nested",
)
SAMPLER = "treegp"
SEEDS = (0, 1, 2)
#: A median final regret this many times its reference (or more) fails the guard.
FACTOR = 10.0
#: Regrets below this are rounding: a reference of 1e-12 is not held to 1e-11.
FLOOR = 1e-9
REFERENCE = Path(__file__).resolve().parent / "guard_reference.json"

Case = tuple[str, int]


def _run(case: Case) -> dict[str, Any]:
    problem, seed = case
    return run_case_safely(problem, SAMPLER, seed, _trials(case), jobs=1)


def measure(problems: Sequence[str], seeds: Sequence[int], jobs: int) -> dict[str, list[float]]:
    """Final regrets ``{problem: [regret of each seed]}``; raises if a case failed."""
    cases = [(p, s) for p in problems for s in seeds]
    if jobs > 1:
        # The longest studies first, one case per task, so that no worker is left with a
        # long case at the end while the others wait.
        ordered = sorted(cases, key=_trials, reverse=True)
        with multiprocessing.get_context("spawn").Pool(min(jobs, len(cases))) as pool:
            records = list(pool.imap_unordered(_run, ordered, chunksize=1))
    else:
        records = [_run(case) for case in cases]
    errors = [r["error"] for r in records if "error" in r]
    if errors:
        raise RuntimeError(f"{len(errors)} case(s) failed; first:\n{errors[0]}")
    by_case = {(r["problem"], r["seed"]): float(r["regret"][-1]) for r in records}
    return {p: [by_case[p, s] for s in seeds] for p in problems}


def _trials(case: Case) -> int:
    from benchmarks.problems import get_problem

    return get_problem(case[0]).n_trials


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"--jobs must be 1 or more, got {value}")
    return value


def compare(
    regrets: dict[str, list[float]],
    reference: dict[str, list[float]],
    factor: float = FACTOR,
) -> list[tuple[str, float, float, bool]]:
    """``(problem, median, reference median, ok)`` per problem: ``ok`` unless more than half of
    its seeds end at least ``factor`` times above their own reference (both floored at
    :data:`FLOOR`)."""
    rows = []
    for problem, values in regrets.items():
        ref = reference[problem]
        worse = sum(
            max(value, FLOOR) >= factor * max(base, FLOOR)
            for value, base in zip(values, ref, strict=True)
        )
        ok = worse <= len(values) // 2
        rows.append((problem, statistics.median(values), statistics.median(ref), ok))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update", action="store_true", help="record new reference figures")
    parser.add_argument(
        "--jobs",
        type=_positive_int,
        default=2,
        help="worker processes, one case each (default 2; CI passes its core count)",
    )
    parser.add_argument("--problems", nargs="+", choices=PROBLEMS, default=list(PROBLEMS))
    args = parser.parse_args(argv)
    start = time.perf_counter()
    regrets = measure(args.problems, SEEDS, args.jobs)
    if args.update:
        recorded = json.loads(REFERENCE.read_text()) if REFERENCE.exists() else {}
        recorded.update(regrets)
        REFERENCE.write_text(json.dumps(recorded, indent=2, sort_keys=True) + "\n")
    reference = json.loads(REFERENCE.read_text())
    rows = compare(regrets, reference)
    print(f"{SAMPLER}, seeds {list(SEEDS)}: final regret against the reference")
    print(f"{'problem':28s} {'median':>10s} {'reference':>10s}  verdict")
    for problem, median, ref, ok in rows:
        verdict = "ok" if ok else f"most seeds {FACTOR:g}x worse"
        seeds = " ".join(f"{value:.2g}" for value in regrets[problem])
        print(f"{problem:28s} {median:10.3g} {ref:10.3g}  {verdict:8s}  seeds: {seeds}")
    print(f"{time.perf_counter() - start:.0f} s")
    return 0 if all(ok for *_, ok in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
