"""Run (task, sampler, seed) jobs, in up to two processes, into an append-only record file.

Each finished run is one JSON line of ``<out>/runs.jsonl``; a run already there (same task,
sampler, seed and number of trials) is not run again, so peers cost nothing twice and an
interrupted suite resumes where it stopped. Objective evaluations are cached on disk by
configuration as well (``benchmarks/hpo/cash.py``).
"""

from __future__ import annotations

import json
import os
import traceback
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from benchmarks.hpo.peers import N_STARTUP, Run, run_sampler
from benchmarks.hpo.spec import Config
from benchmarks.hpo.tasks import get_task
from benchmarks.records import load_records as load_record_file

RUNS_FILE = "runs.jsonl"
Job = tuple[str, str, int, int]  # task, sampler, seed, n_trials


def run_key(record: dict[str, Any]) -> Job:
    return (record["task"], record["sampler"], int(record["seed"]), int(record["n_trials"]))


def load_records(out: Path) -> list[dict[str, Any]]:
    """Every run recorded under ``out`` (the last record of a job wins): ``runs.jsonl``, and
    before it ``runs.jsonl.gz`` (the compressed record kept in benchmarks/results/hpo)."""
    records = {run_key(record): record for record in load_record_file(out / RUNS_FILE)}
    return list(records.values())


def repeats(configs: list[Config], first: int = N_STARTUP) -> int:
    """Trials from ``first`` on whose configuration equals an earlier trial's."""
    seen: list[Config] = []
    count = 0
    for t, config in enumerate(configs):
        if t >= first and config in seen:
            count += 1
        seen.append(config)
    return count


def run_job(job: Job) -> dict[str, Any]:
    """One run, as the record written to ``runs.jsonl``."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    task_name, sampler, seed, n_trials = job
    task = get_task(task_name)
    run: Run = run_sampler(sampler, task, seed, n_trials)
    return {
        "task": task_name,
        "sampler": sampler,
        "seed": seed,
        "n_trials": n_trials,
        "values": run.values,
        "extras": run.extras,
        "configs": run.configs,
        "sampler_seconds": run.sampler_seconds,
        "repeats": repeats(run.configs),
    }


def _safe_job(job: Job) -> dict[str, Any] | str:
    try:
        return run_job(job)
    except Exception:  # a peer that crashes is reported, the suite goes on
        return f"{job}: {traceback.format_exc()}"


def run_jobs(jobs: Iterable[Job], out: Path, n_processes: int = 1) -> list[str]:
    """Run the jobs not yet recorded under ``out``; return the errors of those that failed."""
    out.mkdir(parents=True, exist_ok=True)
    done = {run_key(r) for r in load_records(out)}
    todo = [job for job in jobs if job not in done]
    errors: list[str] = []
    with (out / RUNS_FILE).open("a") as sink:

        def keep(result: dict[str, Any] | str) -> None:
            if isinstance(result, str):
                errors.append(result)
                print(f"FAILED {result.splitlines()[0]}", flush=True)
                return
            sink.write(json.dumps(result, default=_jsonable) + "\n")
            sink.flush()
            best = min(result["values"])
            print(
                f"{result['task']:>22} {result['sampler']:>10} seed {result['seed']:>3}: "
                f"best {best:.5g}",
                flush=True,
            )

        if n_processes <= 1:
            for job in todo:
                keep(_safe_job(job))
        else:
            with ProcessPoolExecutor(n_processes) as pool:
                for future in as_completed([pool.submit(_safe_job, job) for job in todo]):
                    keep(future.result())
    return errors


def _jsonable(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    return repr(value)
