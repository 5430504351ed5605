"""Seconds per suggestion, stage by stage, with Optuna's samplers in the same process.

For each space and study size ``n``, a study holds the first ``n`` trials of one random
history; a fresh sampler makes one untimed suggestion (its cold start) and ``--repeats`` timed
ones, each told before the next (the warm-started suggestions of a running study). The table
gives the median seconds of the sampler's own methods (``TimedSampler``), then where one more
suggestion spends its time, from a profile of it (``cProfile``; shares of the profiled time):

- storage: reading the study's trials (``get_all_trials``);
- inference: the conditional tree from the trials (``infer_space``);
- encoding: trials to the unit cube and back (``encode_trials``, ``decode``);
- fit: the model's hyperparameter fits, with their number in brackets (more than one: the
  output warping's comparison, or constraints);
- acquisition: fantasies, path choice and the acquisition's optimisation;
- other: the rest (the sampler's bookkeeping, logging, Optuna's own code).

Spaces: ``cash_synthetic`` (CASH-shaped, 48 parameters, 33 paths;
:mod:`benchmarks.speed_problems`), ``jenatton_large`` (the depth-3 tree of Jenatton et al.
2017) and ``hartmann6_padded`` (flat, 10 dimensions). Run with ``OMP_NUM_THREADS=1``, alone
on the machine::

    OMP_NUM_THREADS=1 python benchmarks/speed.py --spaces cash_synthetic jenatton_large \\
        hartmann6_padded --sizes 50 100 200 1000 --samplers treegp tpe gp

``--running N`` times a running study instead: one study of ``N`` trials per space and
sampler, the median seconds of its last 20 suggestions.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import optuna
from optuna.trial import FrozenTrial

if __package__ in (None, ""):  # run as a script, ``python benchmarks/speed.py``
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.peers import SAMPLERS, TimedSampler, make_sampler  # noqa: E402
from benchmarks.problems import PROBLEMS, Problem  # noqa: E402
from benchmarks.runner import run_study  # noqa: E402
from benchmarks.speed_problems import SPEED_PROBLEMS  # noqa: E402

SPACES: dict[str, Problem] = {**PROBLEMS, **SPEED_PROBLEMS}
#: Each stage and the functions (file suffix, name) whose cumulative time it is.
STAGES: dict[str, tuple[tuple[str, str], ...]] = {
    "storage": (("optuna/storages/_in_memory.py", "get_all_trials"),),
    "inference": (("condsamplers/space/inference.py", "infer_space"),),
    "encoding": (
        ("condsamplers/space/tree.py", "encode_trials"),
        ("condsamplers/space/tree.py", "decode"),
    ),
    "fit": (("condsamplers/models/", "fit"),),
    "acquisition": (
        ("condsamplers/pipeline.py", "step_fantasies"),
        ("condsamplers/pipeline.py", "_two_step_path"),
        ("condsamplers/pipeline.py", "_maximize"),
    ),
}


def history(problem: Problem, n: int, seed: int = 0) -> list[FrozenTrial]:
    """``n`` COMPLETE trials of ``problem`` drawn by Optuna's RandomSampler."""
    study = optuna.create_study(
        direction=problem.direction, sampler=optuna.samplers.RandomSampler(seed=seed)
    )
    study.optimize(problem.objective, n_trials=n)
    return study.get_trials(deepcopy=False)


def _study_after(problem: Problem, sampler_name: str, trials: list[FrozenTrial], seed: int):
    timed = TimedSampler(make_sampler(sampler_name, seed, problem.n_startup_trials))
    study = optuna.create_study(direction=problem.direction, sampler=timed)
    study.add_trials(trials)
    return study, timed


def _suggest(study: optuna.Study, problem: Problem) -> int:
    trial = study.ask()
    study.tell(trial, problem.objective(trial))
    return trial.number


def stage_seconds(stats: pstats.Stats) -> dict[str, tuple[float, int]]:
    """Each stage's cumulative seconds in ``stats`` and its number of calls."""
    totals = {stage: [0.0, 0] for stage in STAGES}
    for (filename, _, name), (_, calls, _, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        for stage, functions in STAGES.items():
            if any(name == wanted and suffix in filename for suffix, wanted in functions):
                totals[stage][0] += cumulative
                totals[stage][1] += calls
    return {stage: (seconds, calls) for stage, (seconds, calls) in totals.items()}


def measure(
    problem: Problem, sampler_name: str, trials: list[FrozenTrial], repeats: int, seed: int
) -> tuple[float, dict[str, tuple[float, int]], float]:
    """``(median seconds per timed suggestion, the profiled suggestion's stages, its total)``."""
    study, timed = _study_after(problem, sampler_name, trials, seed)
    _suggest(study, problem)  # the cold start
    seconds = [timed.times[_suggest(study, problem)] for _ in range(repeats)]
    profile = cProfile.Profile()
    start = time.perf_counter()
    profile.enable()
    _suggest(study, problem)
    profile.disable()
    total = time.perf_counter() - start
    return statistics.median(seconds), stage_seconds(pstats.Stats(profile)), total


def table_row(space: str, n: int, sampler: str, median: float, stages, total: float) -> str:
    cells = []
    for stage, (seconds, calls) in stages.items():
        share = f"{100 * seconds / total:.0f}%" if total > 0 else "-"
        cells.append(f"{share} ({calls})" if stage == "fit" and calls else share)
    other = max(0.0, total - sum(seconds for seconds, _ in stages.values()))
    cells.append(f"{100 * other / total:.0f}%" if total > 0 else "-")
    return f"| {space} | {n} | {sampler} | {median:.3g} | " + " | ".join(cells) + " |"


TABLE_HEADER = (
    "| space | trials | sampler | s / suggestion | storage | inference | encoding | fit (fits)"
    " | acquisition | other |\n|---|---|---|---|---|---|---|---|---|---|"
)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spaces", nargs="+", choices=list(SPACES), default=["cash_synthetic"])
    parser.add_argument("--sizes", nargs="+", type=int, default=[50, 100, 200, 1000])
    parser.add_argument("--samplers", nargs="+", choices=list(SAMPLERS), default=["treegp"])
    parser.add_argument("--repeats", type=int, default=3, help="timed suggestions per cell")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--running",
        type=int,
        default=None,
        metavar="N",
        help="instead: one study of N trials per space and sampler, the median seconds of its "
        f"last {RUNNING_LAST} suggestions",
    )
    return parser.parse_args(argv)


#: Suggestions of a running study whose median ``--running`` reports (trials 81-100 of 100).
RUNNING_LAST = 20


def running_median(problem: Problem, sampler_name: str, n_trials: int, seed: int) -> float:
    """Median seconds of the sampler's last :data:`RUNNING_LAST` suggestions in one study of
    ``n_trials`` trials (its own startup trials first, each trial told before the next)."""
    trials, timed, _ = run_study(problem, sampler_name, seed, n_trials)
    last = [t.number for t in trials[-RUNNING_LAST:] if t.number in timed.times]
    return statistics.median(timed.times[number] for number in last)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if args.running is not None:
        print(
            f"| space | sampler | median s / suggestion, trials of the last {RUNNING_LAST} of "
            f"{args.running} |\n|---|---|---|",
            flush=True,
        )
        for space in args.spaces:
            for sampler in args.samplers:
                median = running_median(SPACES[space], sampler, args.running, args.seed)
                print(f"| {space} | {sampler} | {median:.3g} |", flush=True)
        return
    print(TABLE_HEADER, flush=True)
    for space in args.spaces:
        problem = SPACES[space]
        full = history(problem, max(args.sizes), args.seed)
        for n in args.sizes:
            for sampler in args.samplers:
                median, stages, total = measure(
                    problem, sampler, full[:n], args.repeats, args.seed
                )
                print(table_row(space, n, sampler, median, stages, total), flush=True)


if __name__ == "__main__":
    main()
