"""Regression guard: every sampler of the library on synthetic problems, a few seeds, against
recorded figures; fails when a median final regret is worse by an order of magnitude.

The default TreeGPSampler runs the five synthetic problems; the other samplers the problems
their cost allows in CI (:data:`CASES`). CI runs it after the tests (``.ci/run``, one worker
per core); it takes about 3 minutes on two cores::

    python -m benchmarks.guard                 # check against benchmarks/guard_reference.json
    python -m benchmarks.guard --update        # measure and record new reference figures
    python -m benchmarks.guard --samplers dngo # one sampler's cases only

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
SEEDS = (0, 1, 2)
#: The problems each sampler is guarded on (seeds :data:`SEEDS`): all five for the default,
#: for the others those whose runs are short enough for CI (the neural models' and the
#: branching-and-nested GP's suggestions cost the most).
CASES: dict[str, tuple[str, ...]] = {
    "treegp": PROBLEMS,
    "arcgp": ("jenatton_small",),
    "bngp": ("branching_nested",),
    "dngo": ("jenatton_small",),
    "bohamiann": ("jenatton_small",),
}
#: Trials of a sampler's runs where fewer than the problem's own, and its seeds where fewer than
#: :data:`SEEDS` (BOHAMIANN's suggestion takes about 2.5 s: 2 seeds of 20 trials, 10 of them
#: model-based, instead of 3 of 50), so that CI stays within its time.
TRIALS: dict[str, int] = {"bohamiann": 20}
SEEDS_OF: dict[str, tuple[int, ...]] = {"bohamiann": (0, 1)}
#: A median final regret this many times its reference (or more) fails the guard.
FACTOR = 10.0
#: Regrets below this are rounding: a reference of 1e-12 is not held to 1e-11.
FLOOR = 1e-9
REFERENCE = Path(__file__).resolve().parent / "guard_reference.json"

#: ``(sampler, problem, seed)``
Case = tuple[str, str, int]
#: ``{sampler: {problem: [final regret of each seed]}}``
Regrets = dict[str, dict[str, list[float]]]


def _run(case: Case) -> dict[str, Any]:
    sampler, problem, seed = case
    return run_case_safely(problem, sampler, seed, _trials(case), jobs=1)


def seeds_of(sampler: str) -> tuple[int, ...]:
    """The seeds ``sampler`` is guarded on."""
    return SEEDS_OF.get(sampler, SEEDS)


def measure(cases: dict[str, Sequence[str]], jobs: int) -> Regrets:
    """Final regrets of each sampler's problems (its :func:`seeds_of`); raises if a case
    failed."""
    runs = [
        (name, p, s) for name, problems in cases.items() for p in problems for s in seeds_of(name)
    ]
    if jobs > 1:
        # The longest studies first, one case per task, so that no worker is left with a
        # long case at the end while the others wait.
        ordered = sorted(runs, key=_cost, reverse=True)
        with multiprocessing.get_context("spawn").Pool(min(jobs, len(runs))) as pool:
            records = list(pool.imap_unordered(_run, ordered, chunksize=1))
    else:
        records = [_run(case) for case in runs]
    errors = [r["error"] for r in records if "error" in r]
    if errors:
        raise RuntimeError(f"{len(errors)} case(s) failed; first:\n{errors[0]}")
    by_case = {(r["sampler"], r["problem"], r["seed"]): float(r["regret"][-1]) for r in records}
    return {
        name: {p: [by_case[name, p, s] for s in seeds_of(name)] for p in problems}
        for name, problems in cases.items()
    }


def _trials(case: Case) -> int:
    from benchmarks.problems import get_problem

    return TRIALS.get(case[0], get_problem(case[1]).n_trials)


#: Rough seconds per trial of each sampler relative to the tree GP's, to start long cases first.
_RELATIVE_COST = {"bohamiann": 10.0}


def _cost(case: Case) -> float:
    return _trials(case) * _RELATIVE_COST.get(case[0], 1.0)


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
    parser.add_argument("--samplers", nargs="+", choices=list(CASES), default=list(CASES))
    parser.add_argument(
        "--problems",
        nargs="+",
        choices=PROBLEMS,
        default=list(PROBLEMS),
        help="only these of each sampler's problems",
    )
    args = parser.parse_args(argv)
    cases = {name: [p for p in CASES[name] if p in args.problems] for name in args.samplers}
    cases = {name: problems for name, problems in cases.items() if problems}
    start = time.perf_counter()
    regrets = measure(cases, args.jobs)
    if args.update:
        recorded = json.loads(REFERENCE.read_text()) if REFERENCE.exists() else {}
        for name, by_problem in regrets.items():
            recorded.setdefault(name, {}).update(by_problem)
        REFERENCE.write_text(json.dumps(recorded, indent=2, sort_keys=True) + "\n")
    reference = json.loads(REFERENCE.read_text())
    passed = True
    for name, by_problem in regrets.items():
        rows = compare(by_problem, reference[name])
        print(f"{name}, seeds {list(seeds_of(name))}: final regret against the reference")
        print(f"{'problem':28s} {'median':>10s} {'reference':>10s}  verdict")
        for problem, median, ref, ok in rows:
            verdict = "ok" if ok else f"most seeds {FACTOR:g}x worse"
            seeds = " ".join(f"{value:.2g}" for value in by_problem[problem])
            print(f"{problem:28s} {median:10.3g} {ref:10.3g}  {verdict:8s}  seeds: {seeds}")
        passed &= all(ok for *_, ok in rows)
    print(f"{time.perf_counter() - start:.0f} s")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
