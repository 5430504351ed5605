"""Benchmark records: one JSON line per run in ``runs.jsonl``, runs not yet recorded run in
parallel processes, appended as they finish (so an interrupted benchmark resumes)."""

from __future__ import annotations

import concurrent.futures
import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

Record = dict[str, Any]


def read_text(path: Path) -> str:
    """The text of a record file, plain or gzipped (as benchmarks/results keeps it): told apart
    by gzip's magic bytes, not by the name."""
    data = path.read_bytes()
    return gzip.decompress(data).decode() if data[:2] == b"\x1f\x8b" else data.decode()


def read_records(path: Path) -> list[Record]:
    """The JSON lines of a record file, as a benchmark writes it (``runs.jsonl``) or as
    benchmarks/results keeps it (gzipped, ``runs.jsonl.gz``)."""
    return [json.loads(line) for line in read_text(path).splitlines() if line.strip()]


def load_records(path: Path) -> list[Record]:
    """The records of ``path``: those of its gzipped copy ``<path>.gz`` first (as
    ``benchmarks/results`` keeps them), then those of ``path`` itself; none if neither exists."""
    packed = path.with_name(path.name + ".gz")
    return [record for file in (packed, path) if file.exists() for record in read_records(file)]


def run_missing(
    job: Callable[..., Record],
    jobs: list[tuple],
    path: Path,
    n_jobs: int,
    key: Callable[[Record], tuple],
    describe: Callable[[tuple, Record], str] | None = None,
) -> list[str]:
    """Run ``job(*args)`` for each ``args`` of ``jobs`` whose ``key`` is not among the records
    of ``path``, in ``n_jobs`` processes, appending each record as it comes (and printing
    ``describe(args, record)``); the errors, one line each (a peer that fails is reported,
    never hidden)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    done = {key(r) for r in load_records(path)}
    errors = []
    with concurrent.futures.ProcessPoolExecutor(n_jobs) as pool:
        futures = {pool.submit(job, *args): args for args in jobs if tuple(args) not in done}
        for future in concurrent.futures.as_completed(futures):
            args = futures[future]
            try:
                record = future.result()
            except Exception as error:
                errors.append(f"{args}: {type(error).__name__}: {error}")
                continue
            with path.open("a") as handle:
                handle.write(json.dumps(record) + "\n")
            if describe is not None:
                print(describe(args, record), flush=True)
    return errors
