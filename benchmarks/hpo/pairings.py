"""Where a CASH task's good configurations are, and where each sampler spent its trials.

Reads recorded runs (``runs.jsonl`` files of ``python -m benchmarks.hpo``, or their gzipped
copies), groups every evaluation by its (preprocessing, classifier) pairing and prints two
tables: per pairing, how many evaluations (all samplers, all seeds) reach ``--good`` or better;
per sampler, how many of its model-based trials (after the startup trials) went to the pairing
that holds most good evaluations, and how many of its runs reach ``--good``. Example::

    python -m benchmarks.hpo.pairings --task cash_iris --good 0.0134 \\
        --samplers treegp tpe tpe_mv random --records <dir>/runs.jsonl.gz <later-dir>/runs.jsonl
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.hpo.peers import N_STARTUP
from benchmarks.records import read_records

Pairing = tuple[str, str]


def read_runs(files: Sequence[Path], task: str, samplers: Sequence[str]) -> list[dict[str, Any]]:
    """The runs of ``task`` by ``samplers`` in ``files`` (the last record of a sampler and seed
    wins)."""
    runs: dict[tuple[str, int], dict[str, Any]] = {}
    for path in files:
        for record in read_records(path):
            if record.get("task") == task and record.get("sampler") in samplers:
                runs[(record["sampler"], record["seed"])] = record
    return list(runs.values())


def pairing(config: dict[str, Any]) -> Pairing:
    """(preprocessing, estimator) of a CASH configuration: its classifier, or its regressor."""
    estimator = config.get("classifier", config.get("regressor"))
    return (str(config.get("preprocessing")), str(estimator))


def pairing_table(runs: list[dict[str, Any]], good: float) -> tuple[list[str], Pairing]:
    """Markdown rows per pairing (by good evaluations), and the pairing with most of them."""
    values: dict[Pairing, list[float]] = defaultdict(list)
    for run in runs:
        for config, value in zip(run["configs"], run["values"], strict=True):
            values[pairing(config)].append(value)
    n_good = {key: sum(v <= good for v in vals) for key, vals in values.items()}
    order = sorted(values, key=lambda key: (-n_good[key], statistics.median(values[key])))
    rows = ["| pairing | evaluations | median value | reaching the bar |", "|---|---|---|---|"]
    for key in order[:8]:
        vals = values[key]
        rows.append(
            f"| {key[0]} + {key[1]} | {len(vals)} | {statistics.median(vals):.4g} "
            f"| {n_good[key]} ({n_good[key] / len(vals):.0%}) |"
        )
    return rows, order[0]


def sampler_table(runs: list[dict[str, Any]], best: Pairing, good: float) -> list[str]:
    """Markdown rows per sampler: model-based trials on ``best``, the share of them reaching
    ``good`` (how well the sampler searches inside the pairing, once there), and runs reaching
    ``good``."""
    by_sampler: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for run in runs:
        by_sampler[run["sampler"]].append(run)
    rows = [
        f"| sampler | runs | model-based trials on {best[0]} + {best[1]}: median [mean] "
        "| of them reaching the bar | runs with none | runs reaching the bar |",
        "|---|---|---|---|---|---|",
    ]
    for sampler, its_runs in by_sampler.items():
        on_best = [  # the values of its model-based trials (after the startup) on ``best``
            [
                value
                for config, value in zip(
                    run["configs"][N_STARTUP:], run["values"][N_STARTUP:], strict=True
                )
                if pairing(config) == best
            ]
            for run in its_runs
        ]
        counts = [len(values) for values in on_best]
        n_good = sum(v <= good for values in on_best for v in values)
        share = f"{n_good / sum(counts):.0%}" if sum(counts) else "-"
        reached = sum(min(run["values"]) <= good for run in its_runs)
        rows.append(
            f"| {sampler} | {len(its_runs)} | {statistics.median(counts):g} "
            f"[{statistics.mean(counts):.1f}] | {share} | {counts.count(0)} | {reached} |"
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", nargs="+", type=Path, required=True, help="*.jsonl.gz")
    parser.add_argument("--task", required=True)
    parser.add_argument("--samplers", nargs="+", required=True)
    parser.add_argument("--good", type=float, required=True, help="a value at or below it")
    args = parser.parse_args(argv)
    runs = read_runs(args.records, args.task, args.samplers)
    if not runs:
        parser.error(f"no runs of {args.task} by {args.samplers} in the files given")
    rows, best = pairing_table(runs, args.good)
    print("\n".join([*rows, "", *sampler_table(runs, best, args.good)]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
