"""How often one sampler's median beats another's on a block of seeds, from recorded runs.

The suite's bars compare medians over 10 seeds. On a task whose best values take a few levels
(one error more or less in 150), that comparison can turn on one seed. This script reads
recorded runs (``runs.jsonl`` files of ``python -m benchmarks.hpo``, or gzipped copies; where
two files hold a run of the same sampler and seed, the later file's wins, so list older records
first), keeps the seeds every named sampler ran, and draws blocks of ``--block`` of those seeds
with replacement (the same seeds for every sampler, as the suite pairs them). For the first
sampler against each other one it prints the share of blocks where its median best value is
lower (better), equal and higher (a paired bootstrap of the median difference; Efron and
Tibshirani 1993, ch. 6).
Example::

    python -m benchmarks.hpo.median_odds --task cash_iris --samplers treegp tpe \\
        --records <dir>/runs.jsonl.gz <later-dir>/runs.jsonl

With ``--search-cv`` it reads the records of ``python -m benchmarks.hpo.search_cv_cash``
(``search_cv_runs.jsonl`` or gzipped copies) instead: ``--task`` is a dataset, ``--space`` its
list of dicts, and the best value of a run is ``1 - best_score_`` (the CV error of the best
candidate), of the runs made with ``--n-iter`` candidates, ``error_score=0.0`` and the
dataset's fit time limit, as ``search_cv_cash`` reports them. A run is named by its method, or
``method@variant`` where it records a variant; ``LABEL=NAME,NAME`` pools runs of several names
under one label (records of one search made under different names in different runs)::

    python -m benchmarks.hpo.median_odds --search-cv --task iris --space patterns \\
        --samplers default=CondBayesSearchCV@local_search_0.1,CondBayesSearchCV \\
        random=RandomizedSearchCV,RandomizedSearchCV@default --records <files>
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from benchmarks.hpo.pairings import read_runs
from benchmarks.hpo.search_cv_cash import FIT_TIME_LIMITS, run_error_score, same_error_score
from benchmarks.records import read_records


def best_values(files: Sequence[Path], task: str, samplers: Sequence[str]) -> dict[str, dict]:
    """``{sampler: {seed: best value}}`` of ``task``'s recorded runs, on the seeds every one of
    ``samplers`` ran."""
    best: dict[str, dict[int, float]] = {s: {} for s in samplers}
    for run in read_runs(files, task, samplers):
        best[run["sampler"]][run["seed"]] = min(run["values"])
    return on_common_seeds(best)


def on_common_seeds(best: dict[str, dict[int, float]]) -> dict[str, dict[int, float]]:
    """``best`` restricted to the seeds every sampler has."""
    common = set.intersection(*(set(by_seed) for by_seed in best.values()))
    return {
        s: {seed: v for seed, v in by_seed.items() if seed in common}
        for s, by_seed in best.items()
    }


def search_cv_labels(specs: Sequence[str]) -> dict[str, set[str]]:
    """``{label: run names}`` from ``NAME`` or ``LABEL=NAME,NAME`` (module docstring)."""
    labels = {}
    for spec in specs:
        label, _, names = spec.partition("=")
        labels[label] = set(names.split(",")) if names else {label}
    return labels


def search_cv_errors(
    files: Sequence[Path], dataset: str, space: str, specs: Sequence[str], n_iter: int
) -> dict[str, dict[int, float]]:
    """``{label: {random_state: 1 - best_score_}}`` of ``search_cv_cash`` records of
    ``dataset`` on ``space`` with ``n_iter`` candidates, ``error_score=0.0`` and the dataset's
    fit time limit (the later file's run wins), on the random_states every label ran."""
    labels = search_cv_labels(specs)
    best: dict[str, dict[int, float]] = {label: {} for label in labels}
    keys = ("dataset", "space", "n_iter", "fit_seconds")
    wanted = (dataset, space, n_iter, FIT_TIME_LIMITS.get(dataset))
    for path in files:
        for run in read_records(path):
            if tuple(run.get(key) for key in keys) != wanted:
                continue
            if not same_error_score(run_error_score(run), 0.0):
                continue
            name = run["method"] + (f"@{run['variant']}" if run.get("variant") else "")
            for label, names in labels.items():
                if name in names:
                    best[label][run["seed"]] = 1.0 - run["best_score"]
    return on_common_seeds(best)


def median_odds(
    first: np.ndarray, other: np.ndarray, block: int, draws: int, seed: int
) -> tuple[float, float, float]:
    """Shares of ``draws`` blocks of ``block`` paired seeds (drawn with replacement) where the
    median of ``first`` is below, equal to (within 1e-12) and above the median of ``other``."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, len(first), size=(draws, block))
    gap = np.median(first[rows], axis=1) - np.median(other[rows], axis=1)
    return (
        float(np.mean(gap < -1e-12)),
        float(np.mean(np.abs(gap) <= 1e-12)),
        float(np.mean(gap > 1e-12)),
    )


def report(best: dict[str, dict], block: int, draws: int, seed: int) -> list[str]:
    """Markdown lines: each sampler's levels, then the first sampler's odds against the others."""
    samplers = list(best)
    seeds = sorted(best[samplers[0]])
    lines = [f"{len(seeds)} common seeds; blocks of {block}, {draws} draws", ""]
    lines += ["| sampler | median | best values (count) |", "|---|---|---|"]
    for s in samplers:
        values = [best[s][k] for k in seeds]
        shown = Counter(f"{v:.4g}" for v in sorted(values))
        levels = ", ".join(f"{v} ({n})" for v, n in shown.items())
        lines.append(f"| {s} | {np.median(values):.4g} | {levels} |")
    lines += [
        "",
        f"| {samplers[0]} against | median lower | equal | higher |",
        "|---|---|---|---|",
    ]
    first = np.array([best[samplers[0]][k] for k in seeds])
    for s in samplers[1:]:
        other = np.array([best[s][k] for k in seeds])
        below, equal, above = median_odds(first, other, block, draws, seed)
        lines.append(f"| {s} | {below:.2f} | {equal:.2f} | {above:.2f} |")
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", required=True, help="a task, or with --search-cv a dataset")
    parser.add_argument("--samplers", nargs="+", required=True, help="the first is compared")
    parser.add_argument("--records", nargs="+", type=Path, required=True)
    parser.add_argument(
        "--search-cv", action="store_true", help="records of benchmarks.hpo.search_cv_cash"
    )
    parser.add_argument("--space", default="patterns", help="with --search-cv (patterns)")
    parser.add_argument("--n-iter", type=int, default=30, help="with --search-cv (30)")
    parser.add_argument("--block", type=int, default=10, help="seeds per block (10)")
    parser.add_argument("--draws", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if len(args.samplers) < 2:
        parser.error("--samplers: name at least two samplers (the first is compared)")
    if args.search_cv:
        best = search_cv_errors(args.records, args.task, args.space, args.samplers, args.n_iter)
    else:
        best = best_values(args.records, args.task, args.samplers)
    if not next(iter(best.values())):
        parser.error(f"--records: no seed that every one of {args.samplers} ran on {args.task}")
    print("\n".join(report(best, args.block, args.draws, args.seed)))


if __name__ == "__main__":
    main()
