"""Two versions of a sampler on the same problems and seeds, paired run by run.

Reads two results files of ``benchmarks/run.py`` (``results.json``, or gzipped copies),
pairs the final regrets of ``--sampler`` by problem and seed, and prints per problem the two
medians and how many runs ended lower or higher, then over every pair the mean change of
log10 regret and the two-sided Wilcoxon signed-rank test (a change of the code judged over
many runs, not by one problem's median)::

    git show <commit>:benchmarks/results/synthetic/results.json.gz > before.json.gz
    python benchmarks/paired.py --before before.json.gz --after <dir>/results.json --sampler treegp

The records of the real-HPO suite (``runs.jsonl`` of ``python -m benchmarks.hpo``, or gzipped)
are read too: there the figure of a run is its best value, normalised per task to ``[0, 1]``
over the runs of both versions (the field's normalised regret), and the test is on the change
of that::

    python benchmarks/paired.py --before benchmarks/results/hpo/runs.jsonl.gz \\
        --after <dir>/runs.jsonl --sampler treegp
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from scipy.stats import wilcoxon

if __package__ in (None, ""):  # run as a script, ``python benchmarks/paired.py``
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.records import read_text  # noqa: E402

#: Regrets below this count as this (a run at the optimum to rounding).
REGRET_FLOOR = 1e-12


def final_figures(path: Path, sampler: str) -> tuple[dict[tuple[str, str], float], bool]:
    """``({(problem, seed): final regret}, True)`` of ``sampler`` in a results file, or
    ``({(task, seed): best value}, False)`` in the records of the real-HPO suite (JSON lines)."""
    text = read_text(path)
    try:
        results = json.loads(text)
    except json.JSONDecodeError:  # JSON lines: one run each
        results = None
    if results is None or "runs" not in results:
        runs = [json.loads(line) for line in text.splitlines() if line.strip()]
        best = {
            (run["task"], str(run["seed"])): float(min(run["values"]))
            for run in runs
            if run["sampler"] == sampler
        }
        return best, False
    regrets = {
        (problem, seed): float(run["regret"][-1])
        for problem, by_sampler in results["runs"].items()
        for seed, run in by_sampler.get(sampler, {}).items()
        if "error" not in run
    }
    return regrets, True


def normalised(before: dict, after: dict) -> tuple[dict, dict]:
    """Each value as ``(v - lo) / (hi - lo)`` over both versions' runs of its task (0 where
    they are all equal)."""
    scaled: tuple[dict, dict] = ({}, {})
    for task in {t for t, _ in (*before, *after)}:
        values = [v for runs in (before, after) for (t, _), v in runs.items() if t == task]
        lo, span = min(values), max(values) - min(values)
        for runs, out in zip((before, after), scaled, strict=True):
            out.update(
                {k: (v - lo) / span if span else 0.0 for k, v in runs.items() if k[0] == task}
            )
    return scaled


def paired_report(before: dict, after: dict, log_scale: bool = True) -> str:
    """The per-problem lines and the test over every pair (module docstring)."""
    pairs = sorted(set(before) & set(after))
    if not pairs:
        raise SystemExit("no run is in both files (same problem and seed)")
    lines = [
        "| problem | runs | median before | median after | lower | higher |",
        "|---|---|---|---|---|---|",
    ]
    for problem in sorted({p for p, _ in pairs}):
        keys = [k for k in pairs if k[0] == problem]
        b = np.array([before[k] for k in keys])
        a = np.array([after[k] for k in keys])
        lines.append(
            f"| {problem} | {len(keys)} | {np.median(b):.2g} | {np.median(a):.2g} "
            f"| {int((a < b).sum())} | {int((a > b).sum())} |"
        )
    if log_scale:
        change = np.log10(np.maximum([after[k] for k in pairs], REGRET_FLOOR)) - np.log10(
            np.maximum([before[k] for k in pairs], REGRET_FLOOR)
        )
        measure = "log10 regret"
    else:
        scaled_before, scaled_after = normalised(before, after)
        change = np.array([scaled_after[k] - scaled_before[k] for k in pairs])
        measure = "normalised best value"
    p_value = wilcoxon(change).pvalue if np.any(change != 0) else 1.0
    lines.append(
        f"\n{len(pairs)} pairs: lower {int((change < 0).sum())}, higher "
        f"{int((change > 0).sum())}; mean change of {measure} {change.mean():+.3f}; "
        f"Wilcoxon signed-rank (two-sided) p = {p_value:.3g}"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, required=True)
    parser.add_argument("--sampler", default="treegp")
    args = parser.parse_args(argv)
    before, regrets = final_figures(args.before, args.sampler)
    after, _ = final_figures(args.after, args.sampler)
    print(paired_report(before, after, log_scale=regrets))


if __name__ == "__main__":
    sys.exit(main())
