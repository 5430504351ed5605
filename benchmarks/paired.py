"""Two versions of a sampler on the same problems and seeds, paired run by run.

Reads two results files of ``benchmarks/run.py`` (``results.json``, or gzipped copies),
pairs the final regrets of ``--sampler`` by problem and seed, and prints per problem the two
medians and how many runs ended lower or higher, then over every pair the mean change of
log10 regret and the two-sided Wilcoxon signed-rank test (a change of the code judged over
many runs, not by one problem's median)::

    git show <commit>:benchmarks/results/synthetic/results.json.gz > before.json.gz
    python benchmarks/paired.py --before before.json.gz --after <dir>/results.json --sampler treegp
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from scipy.stats import wilcoxon

#: Regrets below this count as this (a run at the optimum to rounding).
REGRET_FLOOR = 1e-12


def final_regrets(path: Path, sampler: str) -> dict[tuple[str, str], float]:
    """``{(problem, seed): final regret}`` of ``sampler`` in a results file."""
    data = path.read_bytes()
    results = json.loads(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)
    return {
        (problem, seed): float(run["regret"][-1])
        for problem, by_sampler in results["runs"].items()
        for seed, run in by_sampler.get(sampler, {}).items()
        if "error" not in run
    }


def paired_report(before: dict, after: dict) -> str:
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
    change = np.log10(np.maximum([after[k] for k in pairs], REGRET_FLOOR)) - np.log10(
        np.maximum([before[k] for k in pairs], REGRET_FLOOR)
    )
    p_value = wilcoxon(change).pvalue if np.any(change != 0) else 1.0
    lines.append(
        f"\n{len(pairs)} pairs: lower {int((change < 0).sum())}, higher "
        f"{int((change > 0).sum())}; mean change of log10 regret {change.mean():+.3f}; "
        f"Wilcoxon signed-rank (two-sided) p = {p_value:.3g}"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, required=True)
    parser.add_argument("--sampler", default="treegp")
    args = parser.parse_args(argv)
    print(
        paired_report(
            final_regrets(args.before, args.sampler), final_regrets(args.after, args.sampler)
        )
    )


if __name__ == "__main__":
    sys.exit(main())
