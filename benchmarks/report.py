"""The report of the synthetic benchmark, read from the results file: across-seed summaries,
Markdown tables (regret, suggestion time), regret plots (if matplotlib is importable) and the
full Markdown report."""

from __future__ import annotations

import datetime as dt
import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

try:
    from benchmarks.peers import SAMPLERS
    from benchmarks.problems import get_problem
    from benchmarks.results import BATCH_TAG, RESULTS_FILE, Record, Results
except ModuleNotFoundError:  # run as a script: ``python benchmarks/run.py``
    from peers import SAMPLERS  # type: ignore[no-redef]
    from problems import get_problem  # type: ignore[no-redef]
    from results import BATCH_TAG, RESULTS_FILE, Record, Results  # type: ignore[no-redef]

PLOT_REGRET_FLOOR = 1e-8


# --------------------------------------------------------------------------------------------
# Summaries and tables
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Summary:
    """Across-seed summary of one sampler on one problem."""

    sampler: str
    n_runs: int
    n_errors: int
    final_q25: float
    final_median: float
    final_q75: float
    half_median: float
    time_after_startup: float
    time_last10: float
    max_jobs: int


def _median(values: Sequence[float]) -> float:
    """Median, NaN for an empty sequence."""
    return float(np.median(values)) if len(values) else float("nan")


def summarise(sampler: str, records: Sequence[Record]) -> Summary:
    """Summarise the successful runs of one sampler on one problem key."""
    ok = [r for r in records if "error" not in r]
    finals = [r["regret"][-1] for r in ok]
    q25, q50, q75 = np.percentile(finals, [25, 50, 75]) if ok else (float("nan"),) * 3
    halves = [r["regret"][len(r["regret"]) // 2 - 1] for r in ok]
    after_startup = [_median(r["sampler_time"][r["n_startup_trials"] :]) for r in ok]
    last10 = [_median(r["sampler_time"][-10:]) for r in ok]
    return Summary(
        sampler=sampler,
        n_runs=len(ok),
        n_errors=len(records) - len(ok),
        final_q25=float(q25),
        final_median=float(q50),
        final_q75=float(q75),
        half_median=_median(halves),
        time_after_startup=_median([t for t in after_startup if t == t]),
        time_last10=_median(last10),
        max_jobs=max((int(r.get("jobs", 1)) for r in ok), default=1),
    )


def sampler_order(names: Sequence[str]) -> list[str]:
    """Registered samplers in registry order, each followed by its batch runs
    (``<sampler>@batch<B>``, by ``B``), then any unknown ones alphabetically."""

    def batches_of(name: str) -> list[str]:
        prefix = name + BATCH_TAG
        tagged = [n for n in names if n.startswith(prefix) and n[len(prefix) :].isdigit()]
        return sorted(tagged, key=lambda n: int(n[len(prefix) :]))

    known = [label for name in SAMPLERS for label in [name, *batches_of(name)] if label in names]
    return known + sorted(name for name in names if name not in known)


def summaries_for(results: Results, key: str) -> list[Summary]:
    """Summaries of every sampler stored under problem key ``key``."""
    by_sampler = results["runs"].get(key, {})
    return [summarise(name, list(by_sampler[name].values())) for name in sampler_order(by_sampler)]


def _fmt(value: float) -> str:
    """Compact number formatting for tables."""
    return "n/a" if value != value else f"{value:.3g}"


TABLE_HEADER = (
    "| sampler | median final regret | 25%-75% quartiles | median regret at half budget "
    "| median suggestion time (s) per trial after startup | median at the last 10 trials "
    "| seeds |\n|---|---|---|---|---|---|---|"
)


def table_row(summary: Summary) -> str:
    """One Markdown table row; timings under parallel load are starred."""
    star = "*" if summary.max_jobs > 1 else ""
    seeds = str(summary.n_runs) + (f" ({summary.n_errors} failed)" if summary.n_errors else "")
    return (
        f"| {summary.sampler} | {_fmt(summary.final_median)} "
        f"| [{_fmt(summary.final_q25)}, {_fmt(summary.final_q75)}] "
        f"| {_fmt(summary.half_median)} | {_fmt(summary.time_after_startup)}{star} "
        f"| {_fmt(summary.time_last10)}{star} | {seeds} |"
    )


def markdown_table(summaries: Sequence[Summary]) -> str:
    """Markdown table of per-sampler summaries, with a footnote for parallel timings."""
    lines = [TABLE_HEADER, *(table_row(s) for s in summaries)]
    if any(s.max_jobs > 1 for s in summaries):
        lines.append("\n\\* timed with `--jobs > 1`: not comparable with sequential timings.")
    return "\n".join(lines)


def problem_heading(key: str) -> str:
    """Heading line describing a problem key (name, direction, budget, optimum)."""
    name, _, budget = key.partition("@")
    problem = get_problem(name)
    n_trials = int(budget) if budget else problem.n_trials
    return (
        f"{key}: {problem.description}; {problem.direction}, optimum {problem.optimum}, "
        f"{n_trials} trials ({problem.n_startup_trials} startup)"
    )


# --------------------------------------------------------------------------------------------
# Plots
# --------------------------------------------------------------------------------------------


def _import_pyplot() -> Any | None:
    """Return ``matplotlib.pyplot`` with the Agg backend, or ``None`` if unavailable."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def plot_path(out_dir: Path, key: str) -> Path:
    """Path of the regret plot of a problem key."""
    return out_dir / f"regret_{key.replace('@', '_at_')}.png"


def plot_problem(
    results: Results, key: str, out_dir: Path, samplers: Sequence[str] | None = None
) -> Path | None:
    """Plot median regret curves with quartile bands for one problem key (of ``samplers``
    only, in that order, where given)."""
    plt = _import_pyplot()
    if plt is None:
        return None
    by_sampler = results["runs"].get(key, {})
    names = (
        sampler_order(by_sampler)
        if samplers is None
        else [name for name in samplers if name in by_sampler]
    )
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for name in names:
        curves = [r["regret"] for r in by_sampler[name].values() if "error" not in r]
        if not curves or len({len(c) for c in curves}) != 1:
            continue
        regret = np.maximum(np.asarray(curves, dtype=float), PLOT_REGRET_FLOOR)
        q25, q50, q75 = np.percentile(regret, [25, 50, 75], axis=0)
        steps = np.arange(1, regret.shape[1] + 1)
        (line,) = ax.plot(steps, q50, label=f"{name} ({len(curves)} seeds)")
        ax.fill_between(steps, q25, q75, color=line.get_color(), alpha=0.2)
    ax.set_yscale("log")
    ax.set_xlabel("trial")
    ax.set_ylabel(f"regret (median, 25-75%; floor {PLOT_REGRET_FLOOR:g})")
    ax.set_title(key)
    ax.legend()
    fig.tight_layout()
    path = plot_path(out_dir, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_all(
    results: Results,
    keys: Sequence[str],
    out_dir: Path,
    samplers: Sequence[str] | None = None,
) -> None:
    """Plot every problem key (of ``samplers`` only, where given), or say why plots are
    skipped."""
    if _import_pyplot() is None:
        print("matplotlib is not importable: skipping plots (pip install matplotlib)")
        return
    for key in keys:
        path = plot_problem(results, key, out_dir, samplers)
        if path is not None:
            print(f"wrote {path}")


# --------------------------------------------------------------------------------------------
# Timing tables
# --------------------------------------------------------------------------------------------


def timing_table(records: Sequence[Record]) -> str:
    """Markdown table of median sampler time (s) per window, one row per timing record."""
    labels: list[str] = []
    for record in records:
        labels += [w for w in record["windows"] if w not in labels]
    header = "| problem | sampler | trials | " + " | ".join(f"trials {w}" for w in labels)
    lines = [header + " |", "|---" * (3 + len(labels)) + "|"]
    for r in records:
        cells = [_fmt(r["windows"][w]) if w in r["windows"] else "" for w in labels]
        lines.append(
            f"| {r['problem']} | {r['sampler']} | {r['n_trials']} | {' | '.join(cells)} |"
        )
    return "\n".join(lines)


def all_timing_records(results: Results) -> list[Record]:
    """Every stored timing record, by problem then sampler order."""
    records = []
    for problem_name in sorted(results["timing"]):
        by_sampler = results["timing"][problem_name]
        records += [by_sampler[name] for name in sampler_order(by_sampler)]
    return records


# --------------------------------------------------------------------------------------------
# Markdown report
# --------------------------------------------------------------------------------------------


def _report_header(results: Results, argv: Sequence[str], results_path: Path) -> list[str]:
    """Report title, the regenerating command line and the commands behind the results."""
    lines = [
        "# condsamplers benchmarks",
        "",
        f"Generated by `python {shlex.join(argv)}` on "
        f"{dt.datetime.now().isoformat(timespec='seconds')} from `{results_path}`.",
        "",
        "Results were produced by:",
        "",
    ]
    for entry in results["commands"]:
        lines.append(
            f"- `{entry['command']}` ({entry['date']}; Python {entry['python']}, "
            f"Optuna {entry['optuna']}, {entry['machine']})"
            + (f"; note: {entry['note']}" if "note" in entry else "")
        )
    lines += [
        "",
        "Regret: true (noise-free) value of the trial with the best observed value so far, "
        "against the exact optimum. Suggestion time: wall time spent inside the sampler per "
        "trial (objective excluded). A sampler label `<sampler>@batch<B>` is a batch run: after "
        "the startup trials, rounds of B trials asked (each suggesting its configuration, the "
        "earlier ones pending) before any is told (`--batch-size B`, docs/batch.md).",
    ]
    return lines


def _report_problem(results: Results, key: str, report_path: Path, out_dir: Path) -> list[str]:
    """Report section of one problem key: heading, table and plot link."""
    lines = [
        "",
        f"## {key}",
        "",
        problem_heading(key),
        "",
        markdown_table(summaries_for(results, key)),
    ]
    plot = plot_path(out_dir, key)
    if plot.exists():
        rel = os.path.relpath(plot, report_path.parent)
        lines += ["", f"![median regret, {key}]({Path(rel).as_posix()})"]
    return lines


def markdown_report(results: Results, argv: Sequence[str], out_dir: Path, path: Path) -> str:
    """Full Markdown report of a results file."""
    lines = _report_header(results, argv, out_dir / RESULTS_FILE)
    for key in sorted(results["runs"]):
        lines += _report_problem(results, key, path, out_dir)
    timing = all_timing_records(results)
    if timing:
        lines += [
            "",
            "## Suggestion time as the study grows",
            "",
            "Median sampler time (s) per trial over windows of trial numbers, one study each.",
            "",
            timing_table(timing),
        ]
    return "\n".join(lines) + "\n"
