"""The suite's tables: per task, median best value, rank, seconds per suggestion, repeats.

- *best*: the lowest value found in the run (all values are minimised: an error, ``1 -``
  an accuracy, an RMSE); the table gives its median and quartiles over the seeds.
- *rank*: on each (task, seed), the samplers ranked by best value (ties share the mean rank);
  the task's rank is the mean over seeds, the suite's the mean over tasks.
- *s / suggestion*: the sampler's own seconds per trial (objective excluded), mean over runs.
- *repeats*: trials after the first ``N_STARTUP`` whose configuration equals an earlier one's,
  summed over seeds.
- *on a bound*: of the numerical values the sampler chose after the first ``N_STARTUP``
  trials, the share within 1% of the range from either end (on the parameter's own scale, log
  for a log range); random sampling puts 1-7% there (more where integer ranges are short),
  and a share far above that is a sampler that goes to the box's corners (the tree GP:
  docs/benchmarks.md).
- *raw*: where the task reports an extra such as a surrogate's accuracy, its value at the best
  trial (median over seeds), unclipped.
"""

from __future__ import annotations

import shlex
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import rankdata

from benchmarks.hpo.peers import N_STARTUP
from benchmarks.hpo.spec import Config, Param

Records = list[dict[str, Any]]
#: a value within this share of its range from either end is on a bound.
BOUND_TOLERANCE = 0.01


def best_value(record: dict[str, Any]) -> float:
    return float(np.min(record["values"]))


def _best_extra(record: dict[str, Any], key: str) -> float | None:
    i = int(np.argmin(record["values"]))
    value = record["extras"][i].get(key)
    return None if value is None else float(value)


def on_bound(configs: list[Config], space: tuple[Param, ...]) -> tuple[int, int]:
    """``(on a bound, numerical values)`` over the trials from ``N_STARTUP`` on."""
    params = {p.name: p for p in space if p.kind != "categorical"}
    hits = total = 0
    for config in configs[N_STARTUP:]:
        for name, value in config.items():
            p = params.get(name)
            if p is None or p.low is None or p.high is None:
                continue
            low, high, v = float(p.low), float(p.high), float(value)
            if p.log:
                low, high, v = np.log(low), np.log(high), np.log(v)
            u = (v - low) / (high - low)
            hits += bool(u <= BOUND_TOLERANCE or u >= 1.0 - BOUND_TOLERANCE)
            total += 1
    return hits, total


def _bound_share(runs: Records, space: tuple[Param, ...] | None) -> str:
    if space is None:
        return ""
    counts = np.array([on_bound(r["configs"], space) for r in runs])
    return f"{counts[:, 0].sum() / max(counts[:, 1].sum(), 1):.2f}"


def ranks(records: Records) -> dict[tuple[str, str], float]:
    """Mean rank of each (task, sampler) over the seeds every sampler of the task ran."""
    by_task_seed: dict[tuple[str, int], dict[str, float]] = defaultdict(dict)
    for r in records:
        by_task_seed[(r["task"], r["seed"])][r["sampler"]] = best_value(r)
    samplers_of_task: dict[str, set[str]] = defaultdict(set)
    for (task, _), values in by_task_seed.items():
        samplers_of_task[task] |= set(values)
    collected: dict[tuple[str, str], list[float]] = defaultdict(list)
    for (task, _), values in by_task_seed.items():
        if set(values) != samplers_of_task[task]:
            continue  # a seed not every sampler finished
        names = sorted(values)
        for name, rank in zip(names, rankdata([values[n] for n in names]), strict=True):
            collected[(task, name)].append(float(rank))
    return {key: float(np.mean(v)) for key, v in collected.items()}


def markdown(
    records: Records,
    extra_key: str = "accuracy",
    spaces: dict[str, tuple[Param, ...]] | None = None,
) -> str:
    """The per-task tables and the suite summary, as Markdown; ``spaces`` (task -> its
    space) adds the *on a bound* column."""
    groups: dict[tuple[str, str], Records] = defaultdict(list)
    for r in records:
        groups[(r["task"], r["sampler"])].append(r)
    task_ranks = ranks(records)
    tasks = sorted({t for t, _ in groups})
    lines: list[str] = []
    for task in tasks:
        samplers = sorted({s for t, s in groups if t == task})
        has_extra = any(
            _best_extra(r, extra_key) is not None for s in samplers for r in groups[(task, s)]
        )
        n_trials = sorted({r["n_trials"] for s in samplers for r in groups[(task, s)]})
        lines += [
            f"### {task} ({', '.join(map(str, n_trials))} trials)",
            "",
            "| sampler | seeds | median best [q25, q75] | rank | s / suggestion | repeats |"
            + (" on a bound |" if spaces else "")
            + (f" raw {extra_key} at best |" if has_extra else ""),
            "|---|---|---|---|---|---|"
            + ("---|" if spaces else "")
            + ("---|" if has_extra else ""),
        ]
        rows = []
        for s in samplers:
            runs = groups[(task, s)]
            best = np.array([best_value(r) for r in runs])
            q25, med, q75 = np.percentile(best, [25, 50, 75])
            seconds = np.mean([np.mean(r["sampler_seconds"]) for r in runs])
            row = (
                f"| {s} | {len(runs)} | {med:.4g} [{q25:.4g}, {q75:.4g}] | "
                f"{task_ranks.get((task, s), float('nan')):.2f} | {seconds:.3g} | "
                f"{sum(r['repeats'] for r in runs)} |"
            )
            if spaces:
                row += f" {_bound_share(runs, spaces.get(task))} |"
            if has_extra:
                extras = [_best_extra(r, extra_key) for r in runs]
                extras = [e for e in extras if e is not None]
                row += f" {np.median(extras):.4f} |" if extras else " |"
            rows.append((med, row))
        lines += [row for _, row in sorted(rows)]
        lines.append("")
    lines += suite_summary(task_ranks, tasks)
    return "\n".join(lines)


def suite_summary(task_ranks: dict[tuple[str, str], float], tasks: list[str]) -> list[str]:
    """Mean rank over the tasks each sampler ran, best first."""
    by_sampler: dict[str, list[float]] = defaultdict(list)
    for (task, sampler), rank in task_ranks.items():
        if task in tasks:
            by_sampler[sampler].append(rank)
    lines = [
        "### Suite: mean rank over tasks",
        "",
        "| sampler | tasks | mean rank |",
        "|---|---|---|",
    ]
    for sampler, values in sorted(by_sampler.items(), key=lambda kv: np.mean(kv[1])):
        lines.append(f"| {sampler} | {len(values)} | {np.mean(values):.2f} |")
    return lines


def publish(table: str, path: Path, module: str, argv: list[str] | None, errors: list[str]) -> int:
    """Write ``table`` to ``path`` under the command that made it (``python -m module argv``),
    print it and the ``errors``; the exit status (1 if there were errors)."""
    command = f"python -m {module} " + shlex.join(argv if argv is not None else sys.argv[1:])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"Command: `{command}`\n\n{table}\n")
    print(table)
    for error in errors:
        print(error, file=sys.stderr)
    return 1 if errors else 0
