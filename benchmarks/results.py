"""The results file of the synthetic benchmark (``<out>/results.json``): the keys of its
records (problem and sampler labels), loading and atomic saving, merging one record at a time
(so that runs can interleave), and the commands that produced it."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import optuna

try:
    from benchmarks.problems import get_problem
    from benchmarks.records import read_text
except ModuleNotFoundError:  # run as a script: ``python benchmarks/run.py``
    from problems import get_problem  # type: ignore[no-redef]
    from records import read_text  # type: ignore[no-redef]

RESULTS_FILE = "results.json"
RESULTS_FORMAT = 1
#: Sampler labels of batch runs: ``<sampler>@batch<B>`` (see :func:`sampler_label`).
BATCH_TAG = "@batch"

Record = dict[str, Any]
Results = dict[str, Any]


# --------------------------------------------------------------------------------------------
# Results file
# --------------------------------------------------------------------------------------------


def problem_key(name: str, n_trials: int) -> str:
    """Key of a problem's results: its name, plus ``@<n>`` for a non-default budget."""
    return name if n_trials == get_problem(name).n_trials else f"{name}@{n_trials}"


def sampler_label(sampler_name: str, batch_size: int) -> str:
    """Label of a sampler's results: its name, plus ``@batch<B>`` for batch runs."""
    return sampler_name if batch_size == 1 else f"{sampler_name}{BATCH_TAG}{batch_size}"


def load_results(path: Path) -> Results:
    """Load a results file, or its gzipped copy ``<path>.gz`` (as ``benchmarks/results`` keeps
    it) where the plain file does not exist, or return an empty one."""
    packed = path.with_name(path.name + ".gz")
    if path.exists() or packed.exists():
        results = json.loads(read_text(path if path.exists() else packed))
    else:
        return {"format": RESULTS_FORMAT, "commands": [], "runs": {}, "timing": {}}
    for section, empty in (("commands", []), ("runs", {}), ("timing", {})):
        results.setdefault(section, empty)
    return results


def save_results(path: Path, results: Results) -> None:
    """Write ``results`` atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(results, indent=1) + "\n")
    tmp.replace(path)


def merge_run(path: Path, record: Record) -> None:
    """Merge one case's record into the results file (re-read first, so runs can interleave)."""
    results = load_results(path)
    key = problem_key(record["problem"], record["n_trials"])
    by_sampler = results["runs"].setdefault(key, {}).setdefault(record["sampler"], {})
    by_sampler[str(record["seed"])] = record
    save_results(path, results)


def merge_timing(path: Path, record: Record) -> None:
    """Merge one timing record (keyed by problem and sampler) into the results file."""
    results = load_results(path)
    results["timing"].setdefault(record["problem"], {})[record["sampler"]] = record
    save_results(path, results)


def command_entry(argv: Sequence[str]) -> dict[str, Any]:
    """Describe this invocation: command line, date and environment."""
    import scipy

    return {
        "command": "python " + shlex.join(argv),
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "optuna": optuna.__version__,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.system()}",
    }


def record_command(path: Path, argv: Sequence[str]) -> None:
    """Append this invocation to the results file's list of commands."""
    results = load_results(path)
    results["commands"].append(command_entry(argv))
    save_results(path, results)
