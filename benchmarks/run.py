"""Benchmark runner: regret and suggestion time of Optuna samplers on conditional problems.

Examples (from the repository root)::

    # full benchmark (all problems, all samplers but those for positive objectives only,
    # POSITIVE_OBJECTIVE_SAMPLERS; seeds 0..9), 4 worker processes
    python benchmarks/run.py --jobs 4 --out benchmarks/results/synthetic
    # a subset; results are merged into <out>/results.json
    python benchmarks/run.py --problems jenatton_small branching_nested \\
        --samplers arcgp tpe gp random --seeds 10 --out benchmarks/results/synthetic
    # quick smoke run with a reduced budget (stored under "<problem>@15")
    python benchmarks/run.py --samplers random tpe --seeds 2 --n-trials-override 15 --out /tmp/b
    # batch proposals: ask-and-tell in rounds of 5 after the startup trials (stored under the
    # sampler label "<sampler>@batch5", beside the sequential runs)
    python benchmarks/run.py --problems branching_nested --samplers arcgp treegp \\
        --batch-size 5 --seeds 20 --jobs 2 --out /tmp/batch --no-plots
    # suggestion time as one study grows to 500 trials
    python benchmarks/run.py --timing --samplers arcgp gp --timing-trials 500 \\
        --out benchmarks/results/synthetic
    # only the regret plots of some samplers, from the stored results; runs nothing
    python benchmarks/run.py --plot-only --out benchmarks/results/synthetic \\
        --problems jenatton_small --samplers treegp tpe random --plots-dir /tmp/plots
    # regenerate the Markdown report (and plots) from <out>/results.json; runs nothing
    python benchmarks/run.py --out benchmarks/results/synthetic \\
        --markdown benchmarks/results/synthetic/report.md

Regret after trial ``t`` is the regret (true, noise-free value against the exact optimum) of the
trial with the best *observed* value among trials ``0..t``.  Sampler time is measured by
:class:`TimedSampler`, which wraps the sampler and only clocks the sampler's own methods, so the
objective's time is not counted.  Timings taken with ``--jobs > 1`` share the CPU with other
workers and are not comparable with sequential ones; the report marks them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as a script, ``python benchmarks/run.py``
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.peers import (
    DEFAULT_SAMPLERS,
    MC_FANTASIES,
    POSITIVE_OBJECTIVE_SAMPLERS,
    REPO_ROOT,
    SAMPLERS,
    SamplerFactory,
    TimedSampler,
    condsamplers_factory,
    make_sampler,
    sampler_unavailable_reason,
)
from benchmarks.problems import PROBLEMS, Problem, get_problem
from benchmarks.report import (
    PLOT_REGRET_FLOOR,
    TABLE_HEADER,
    Summary,
    all_timing_records,
    markdown_report,
    markdown_table,
    plot_all,
    plot_path,
    plot_problem,
    problem_heading,
    sampler_order,
    summaries_for,
    summarise,
    table_row,
    timing_table,
)
from benchmarks.results import (
    BATCH_TAG,
    RESULTS_FILE,
    RESULTS_FORMAT,
    Record,
    Results,
    command_entry,
    load_results,
    merge_run,
    merge_timing,
    problem_key,
    record_command,
    sampler_label,
    save_results,
)
from benchmarks.runner import (
    TIMING_WINDOWS,
    _init_worker,
    _limit_threads_env,
    _run_cases,
    regret_curve,
    run_batch_study,
    run_case,
    run_case_safely,
    run_study,
    run_timing,
    timing_windows,
)

#: The synthetic benchmark was this one module: what moved to peers.py, runner.py, results.py
#: and report.py is re-exported here, so that ``benchmarks.run.<name>`` keeps working.
__all__ = [
    "BATCH_TAG",
    "DEFAULT_SAMPLERS",
    "MC_FANTASIES",
    "PLOT_REGRET_FLOOR",
    "POSITIVE_OBJECTIVE_SAMPLERS",
    "PROBLEMS",
    "REPO_ROOT",
    "RESULTS_FILE",
    "RESULTS_FORMAT",
    "SAMPLERS",
    "TABLE_HEADER",
    "TIMING_WINDOWS",
    "Problem",
    "Record",
    "Results",
    "SamplerFactory",
    "Summary",
    "TimedSampler",
    "_init_worker",
    "all_timing_records",
    "command_entry",
    "condsamplers_factory",
    "get_problem",
    "load_results",
    "main",
    "make_sampler",
    "markdown_report",
    "markdown_table",
    "merge_run",
    "merge_timing",
    "parse_args",
    "plot_all",
    "plot_path",
    "plot_problem",
    "problem_heading",
    "problem_key",
    "record_command",
    "regret_curve",
    "resolve_samplers",
    "run_batch_study",
    "run_benchmark",
    "run_case",
    "run_case_safely",
    "run_study",
    "run_timing",
    "run_timing_mode",
    "sampler_label",
    "sampler_order",
    "sampler_unavailable_reason",
    "save_results",
    "summaries_for",
    "summarise",
    "table_row",
    "timing_table",
    "timing_windows",
    "write_markdown",
    "write_plots",
]


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", nargs="+", choices=list(PROBLEMS), default=None)
    parser.add_argument("--samplers", nargs="+", choices=list(SAMPLERS), default=None)
    parser.add_argument("--seeds", type=int, default=10, help="number of seeds (default 10)")
    parser.add_argument("--first-seed", type=int, default=0, help="seeds are first..first+N-1")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/synthetic"))
    parser.add_argument("--jobs", type=int, default=1, help="parallel worker processes")
    parser.add_argument(
        "--n-trials-override", type=int, default=None, help="budget for quick runs"
    )
    parser.add_argument(
        "--batch-size",
        type=int,
        default=1,
        help="ask-and-tell in rounds of this many trials after the startup trials; results "
        "under the sampler label <sampler>@batch<B> (default 1: sequential)",
    )
    parser.add_argument("--no-plots", action="store_true", help="do not write PNG plots")
    parser.add_argument("--timing", action="store_true", help="suggestion time vs study size")
    parser.add_argument("--timing-problem", choices=list(PROBLEMS), default="jenatton_small")
    parser.add_argument("--timing-trials", type=int, default=500)
    parser.add_argument(
        "--markdown", type=Path, default=None, help="only regenerate this report from results"
    )
    parser.add_argument(
        "--plot-only",
        action="store_true",
        help="only draw the regret plots of the stored results (of --problems and --samplers "
        "where given), into --plots-dir",
    )
    parser.add_argument(
        "--plots-dir", type=Path, default=None, help="where plots go (default: --out)"
    )
    return parser.parse_args(argv)


def resolve_samplers(requested: Sequence[str] | None, default: Sequence[str]) -> list[str]:
    """Check sampler availability: skip unavailable defaults, fail on requested ones."""
    names = list(requested) if requested else list(default)
    available = []
    for name in names:
        reason = sampler_unavailable_reason(name)
        if reason is None:
            available.append(name)
        elif requested:
            raise SystemExit(f"sampler {name!r} is unavailable: {reason}")
        else:
            print(f"skipping sampler {name!r}: {reason}")
    return available


def run_benchmark(args: argparse.Namespace, argv: Sequence[str]) -> None:
    """Benchmark mode: run all cases, then print tables and write plots."""
    problems = args.problems or list(PROBLEMS)
    samplers = resolve_samplers(args.samplers, DEFAULT_SAMPLERS)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    results_path = args.out / RESULTS_FILE
    record_command(results_path, argv)
    cases = [
        (p, s, seed, args.n_trials_override or get_problem(p).n_trials)
        for p in problems
        for s in samplers
        for seed in seeds
    ]
    if args.batch_size < 1:
        raise SystemExit(f"--batch-size must be >= 1; got {args.batch_size}")
    _run_cases(cases, args.jobs, results_path, args.batch_size)
    results = load_results(results_path)
    keys = sorted({problem_key(p, n) for p, _, _, n in cases})
    for key in keys:
        print(f"\n### {problem_heading(key)}\n\n{markdown_table(summaries_for(results, key))}")
    if not args.no_plots:
        plot_all(results, keys, args.out)


def run_timing_mode(args: argparse.Namespace, argv: Sequence[str]) -> None:
    """Timing mode: one long study per sampler, median sampler time per window."""
    samplers = resolve_samplers(args.samplers, ["arcgp"])
    results_path = args.out / RESULTS_FILE
    record_command(results_path, argv)
    records = []
    for name in samplers:
        record = run_timing(args.timing_problem, name, args.first_seed, args.timing_trials)
        merge_timing(results_path, record)
        print(f"{args.timing_problem} {name}: {record['wall_time']:.1f} s", flush=True)
        records.append(record)
    print("\n" + timing_table(records))


def write_plots(args: argparse.Namespace) -> None:
    """Plot mode: draw the regret plots of the stored results only; runs nothing."""
    results = load_results(args.out / RESULTS_FILE)
    if not results["runs"]:
        raise SystemExit(f"no results at {args.out / RESULTS_FILE}(.gz)")
    keys = sorted(results["runs"]) if args.problems is None else list(args.problems)
    plot_all(results, keys, args.plots_dir or args.out, args.samplers)


def write_markdown(args: argparse.Namespace, argv: Sequence[str]) -> None:
    """Markdown mode: regenerate plots and the report from the stored results only."""
    results_path = args.out / RESULTS_FILE
    packed = results_path.with_name(results_path.name + ".gz")
    if not (results_path.exists() or packed.exists()):
        raise SystemExit(f"no results at {results_path} (nor {packed.name})")
    results = load_results(results_path)
    if not args.no_plots:
        plot_all(results, sorted(results["runs"]), args.out)
    args.markdown.parent.mkdir(parents=True, exist_ok=True)
    args.markdown.write_text(markdown_report(results, argv, args.out, args.markdown))
    print(f"wrote {args.markdown}")


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point."""
    argv = list(sys.argv if argv is None else argv)
    args = parse_args(argv[1:])
    if args.jobs > 1 and not (args.markdown or args.timing or args.plot_only):
        _limit_threads_env()  # inherited by the spawned workers before they import torch
    if args.plot_only:
        write_plots(args)
    elif args.markdown is not None:
        write_markdown(args, argv)
    elif args.timing:
        run_timing_mode(args, argv)
    else:
        run_benchmark(args, argv)


if __name__ == "__main__":
    main()
