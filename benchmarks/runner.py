"""Running the synthetic benchmark: one study per (problem, sampler, seed) case, sequential or
in batches, with its regret curve and sampler time; cases in worker processes, each record
merged into the results file as it finishes; and the timing runs (suggestion time as one study
grows)."""

from __future__ import annotations

import datetime as dt
import multiprocessing
import os
import time
import traceback
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import optuna
from optuna.trial import FrozenTrial, TrialState

try:
    from benchmarks.peers import TimedSampler, _quiet, make_sampler
    from benchmarks.problems import Problem, get_problem
    from benchmarks.report import _median
    from benchmarks.results import Record, merge_run, sampler_label
except ModuleNotFoundError:  # run as a script: ``python benchmarks/run.py``
    from peers import TimedSampler, _quiet, make_sampler  # type: ignore[no-redef]
    from problems import Problem, get_problem  # type: ignore[no-redef]
    from report import _median  # type: ignore[no-redef]
    from results import Record, merge_run, sampler_label  # type: ignore[no-redef]

TIMING_WINDOWS: tuple[tuple[int, int], ...] = ((40, 50), (90, 100), (190, 200), (490, 500))


# --------------------------------------------------------------------------------------------
# Running one study
# --------------------------------------------------------------------------------------------


def regret_curve(problem: Problem, trials: Sequence[FrozenTrial]) -> tuple[list[float], ...]:
    """Return (observed values, true values, regret after each trial) of a finished study.

    The regret after trial ``t`` is that of the trial with the best observed value so far (the
    first one on ties), evaluated with the noise-free ``problem.true_value``.
    """
    observed, true_values, regrets = [], [], []
    best_observed, best_true = 0.0, 0.0
    for trial in trials:
        if trial.state != TrialState.COMPLETE or trial.value is None:
            raise RuntimeError(f"trial {trial.number} ended in state {trial.state.name}")
        true_value = problem.true_value(trial.params)
        if not regrets or problem.is_better(trial.value, best_observed):
            best_observed, best_true = trial.value, true_value
        observed.append(float(trial.value))
        true_values.append(true_value)
        regrets.append(problem.regret(best_true))
    return observed, true_values, regrets


def _best_params(problem: Problem, trials: Sequence[FrozenTrial]) -> dict[str, Any]:
    """Return the parameters of the trial with the best observed value."""
    best = trials[0]
    for trial in trials[1:]:
        if problem.is_better(float(trial.value), float(best.value)):  # type: ignore[arg-type]
            best = trial
    return dict(best.params)


def run_study(
    problem: Problem, sampler_name: str, seed: int, n_trials: int
) -> tuple[list[FrozenTrial], TimedSampler, float]:
    """Optimise ``problem`` with a timed sampler; return trials, the sampler and wall time."""
    with _quiet():
        sampler = TimedSampler(make_sampler(sampler_name, seed, problem.n_startup_trials))
        study = optuna.create_study(direction=problem.direction, sampler=sampler)
        start = time.perf_counter()
        study.optimize(problem.objective, n_trials=n_trials)
        wall_time = time.perf_counter() - start
    return study.trials, sampler, wall_time


def run_batch_study(
    problem: Problem, sampler_name: str, seed: int, n_trials: int, batch_size: int
) -> tuple[list[FrozenTrial], TimedSampler, float]:
    """Like :func:`run_study`, in rounds of ``batch_size`` after the startup trials.

    The startup trials run one by one; then each round asks ``batch_size`` trials, each
    suggesting its whole configuration (``problem.suggest``) before the next is asked, so the
    later ones see the earlier ones as pending, and only then evaluates and tells them all (the
    batch procedure of Zhang et al., sec. 3: 10 random initial points, then batches of 5).
    """
    with _quiet():
        sampler = TimedSampler(make_sampler(sampler_name, seed, problem.n_startup_trials))
        study = optuna.create_study(direction=problem.direction, sampler=sampler)
        start = time.perf_counter()
        study.optimize(problem.objective, n_trials=min(problem.n_startup_trials, n_trials))
        while len(study.trials) < n_trials:
            batch = []
            for _ in range(min(batch_size, n_trials - len(study.trials))):
                trial = study.ask()
                problem.suggest(trial)
                batch.append(trial)
            for trial in batch:
                study.tell(trial, problem.objective(trial))
        wall_time = time.perf_counter() - start
    return study.trials, sampler, wall_time


def run_case(
    problem_name: str,
    sampler_name: str,
    seed: int,
    n_trials: int,
    jobs: int,
    batch_size: int = 1,
) -> Record:
    """Run one (problem, sampler, seed) case and return its JSON-serialisable record.

    The observation noise of noisy problems is seeded with ``seed``: every sampler sees the
    same noise sequence for a given seed. ``batch_size > 1``: :func:`run_batch_study`, stored
    under the sampler label ``<sampler>@batch<B>``.
    """
    problem = get_problem(problem_name).with_noise_seed(seed)
    if batch_size > 1:
        trials, sampler, wall_time = run_batch_study(
            problem, sampler_name, seed, n_trials, batch_size
        )
    else:
        trials, sampler, wall_time = run_study(problem, sampler_name, seed, n_trials)
    observed, true_values, regrets = regret_curve(problem, trials)
    return {
        "problem": problem_name,
        "sampler": sampler_label(sampler_name, batch_size),
        "batch_size": batch_size,
        "seed": seed,
        "n_trials": n_trials,
        "n_startup_trials": problem.n_startup_trials,
        "direction": problem.direction,
        "optimum": problem.optimum,
        "regret": regrets,
        "values": observed,
        "true_values": true_values,
        "sampler_time": sampler.time_per_trial(n_trials),
        "best_params": _best_params(problem, trials),
        "wall_time": wall_time,
        "jobs": jobs,
        "finished": dt.datetime.now().isoformat(timespec="seconds"),
    }


def run_case_safely(
    problem_name: str,
    sampler_name: str,
    seed: int,
    n_trials: int,
    jobs: int,
    batch_size: int = 1,
) -> Record:
    """:func:`run_case`, returning an ``error`` record instead of raising."""
    try:
        return run_case(problem_name, sampler_name, seed, n_trials, jobs, batch_size)
    except Exception:  # one broken case must not stop a long benchmark
        return {
            "problem": problem_name,
            "sampler": sampler_label(sampler_name, batch_size),
            "seed": seed,
            "n_trials": n_trials,
            "error": traceback.format_exc(),
        }


def _limit_threads_env() -> None:
    """Ask BLAS/OpenMP libraries loaded from now on (and child processes) for one thread."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = "1"


def _init_worker() -> None:
    """Restrict a worker process to one BLAS/OpenMP/torch thread."""
    _limit_threads_env()
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(1)


# --------------------------------------------------------------------------------------------
# Running many cases
# --------------------------------------------------------------------------------------------


def _describe(record: Record) -> str:
    """One progress line for a finished case."""
    head = f"{record['problem']} {record['sampler']} seed={record['seed']}"
    if "error" in record:
        return f"{head}: FAILED\n{record['error']}"
    return f"{head}: final regret {record['regret'][-1]:.4g} ({record['wall_time']:.1f} s)"


def _run_cases(
    cases: list[tuple[str, str, int, int]], jobs: int, results_path: Path, batch_size: int = 1
) -> None:
    """Run cases sequentially or in ``jobs`` processes, merging each record as it finishes."""
    total = len(cases)
    if jobs <= 1:
        for i, case in enumerate(cases, 1):
            record = run_case_safely(*case, jobs=1, batch_size=batch_size)
            merge_run(results_path, record)
            print(f"[{i}/{total}] {_describe(record)}", flush=True)
        return
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(jobs, mp_context=context, initializer=_init_worker) as pool:
        futures: list[Future[Record]] = [
            pool.submit(run_case_safely, *case, jobs=jobs, batch_size=batch_size) for case in cases
        ]
        for i, future in enumerate(as_completed(futures), 1):
            record = future.result()
            merge_run(results_path, record)
            print(f"[{i}/{total}] {_describe(record)}", flush=True)


# --------------------------------------------------------------------------------------------
# Timing mode
# --------------------------------------------------------------------------------------------


def timing_windows(n_trials: int) -> list[tuple[int, int]]:
    """Standard windows that fit in ``n_trials``, plus the last 10 trials if not covered."""
    windows = [w for w in TIMING_WINDOWS if w[1] <= n_trials]
    if not windows or windows[-1][1] != n_trials:
        windows.append((max(0, n_trials - 10), n_trials))
    return windows


def run_timing(problem_name: str, sampler_name: str, seed: int, n_trials: int) -> Record:
    """Run one long study and record per-trial sampler time and window medians."""
    problem = get_problem(problem_name).with_noise_seed(seed)
    trials, sampler, wall_time = run_study(problem, sampler_name, seed, n_trials)
    times = sampler.time_per_trial(n_trials)
    windows = {f"{a}-{b}": _median(times[a:b]) for a, b in timing_windows(n_trials)}
    return {
        "problem": problem_name,
        "sampler": sampler_name,
        "seed": seed,
        "n_trials": n_trials,
        "sampler_time": times,
        "windows": windows,
        "final_regret": regret_curve(problem, trials)[2][-1],
        "wall_time": wall_time,
        "finished": dt.datetime.now().isoformat(timespec="seconds"),
    }
