"""Benchmark runner: regret and suggestion time of Optuna samplers on conditional problems.

Examples (from the repository root)::

    # full benchmark (all problems, all samplers but those for positive objectives only,
    # POSITIVE_OBJECTIVE_SAMPLERS; seeds 0..9), 4 worker processes
    python benchmarks/run.py --jobs 4 --out docs/benchmarks
    # a subset; results are merged into <out>/results.json
    python benchmarks/run.py --problems jenatton_small branching_nested \\
        --samplers arcgp tpe gp random --seeds 10 --out docs/benchmarks
    # quick smoke run with a reduced budget (stored under "<problem>@15")
    python benchmarks/run.py --samplers random tpe --seeds 2 --n-trials-override 15 --out /tmp/b
    # batch proposals: ask-and-tell in rounds of 5 after the startup trials (stored under the
    # sampler label "<sampler>@batch5", beside the sequential runs)
    python benchmarks/run.py --problems branching_nested --samplers arcgp treegp \\
        --batch-size 5 --seeds 20 --jobs 2 --out /tmp/batch --no-plots
    # suggestion time as one study grows to 500 trials
    python benchmarks/run.py --timing --samplers arcgp gp --timing-trials 500 --out docs/benchmarks
    # regenerate the Markdown report (and plots) from <out>/results.json; runs nothing
    python benchmarks/run.py --out docs/benchmarks --markdown docs/benchmarks.md

Regret after trial ``t`` is the regret (true, noise-free value against the exact optimum) of the
trial with the best *observed* value among trials ``0..t``.  Sampler time is measured by
:class:`TimedSampler`, which wraps the sampler and only clocks the sampler's own methods, so the
objective's time is not counted.  Timings taken with ``--jobs > 1`` share the CPU with other
workers and are not comparable with sequential ones; the report marks them.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import multiprocessing
import os
import platform
import shlex
import sys
import time
import traceback
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import optuna
from optuna.distributions import BaseDistribution
from optuna.samplers import BaseSampler
from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

try:
    from benchmarks.problems import PROBLEMS, Problem, get_problem
except ModuleNotFoundError:  # run as a script: ``python benchmarks/run.py``
    from problems import PROBLEMS, Problem, get_problem  # type: ignore[no-redef]

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS_FILE = "results.json"
RESULTS_FORMAT = 1
TIMING_WINDOWS: tuple[tuple[int, int], ...] = ((40, 50), (90, 100), (190, 200), (490, 500))
PLOT_REGRET_FLOOR = 1e-8
#: Sampler labels of batch runs: ``<sampler>@batch<B>`` (see :func:`sampler_label`).
BATCH_TAG = "@batch"
#: Fantasies of the "-mc" (Monte-Carlo EI) variants; the "-kb" ones use the kriging believer.
MC_FANTASIES = 8

Record = dict[str, Any]
Results = dict[str, Any]
SamplerFactory = Callable[[int, int], BaseSampler]


# --------------------------------------------------------------------------------------------
# Samplers
# --------------------------------------------------------------------------------------------


def _import_condsamplers() -> ModuleType:
    """Import ``condsamplers``, falling back to the in-tree ``src/`` layout if not installed."""
    try:
        return importlib.import_module("condsamplers")
    except ModuleNotFoundError as exc:
        if exc.name != "condsamplers":
            raise
    src = str(REPO_ROOT / "src")
    if src not in sys.path:
        sys.path.insert(0, src)
    return importlib.import_module("condsamplers")


def condsamplers_factory(class_name: str, **options: Any) -> SamplerFactory:
    """Return a factory building ``condsamplers.<class_name>(seed=, n_startup_trials=,
    **options)``."""

    def factory(seed: int, n_startup_trials: int) -> BaseSampler:
        sampler_cls = getattr(_import_condsamplers(), class_name)
        return sampler_cls(seed=seed, n_startup_trials=n_startup_trials, **options)

    return factory


def _random(seed: int, n_startup_trials: int) -> BaseSampler:
    """Optuna's random sampler (``n_startup_trials`` is irrelevant)."""
    return optuna.samplers.RandomSampler(seed=seed)


def _tpe(seed: int, n_startup_trials: int) -> BaseSampler:
    """Optuna's multivariate TPE with group decomposition for conditional spaces."""
    return optuna.samplers.TPESampler(
        multivariate=True, group=True, seed=seed, n_startup_trials=n_startup_trials
    )


def _gp(seed: int, n_startup_trials: int) -> BaseSampler:
    """Optuna's GP sampler (falls back to random sampling for conditional parameters)."""
    return optuna.samplers.GPSampler(
        seed=seed, n_startup_trials=n_startup_trials, warn_independent_sampling=False
    )


#: Registered, but only run when named: they assume an objective that is never negative.
POSITIVE_OBJECTIVE_SAMPLERS: dict[str, SamplerFactory] = {
    # log scale for a positive objective (Branin; docs/bnn.md sec. 4): models log(y - 0)
    "bohamiann-bound0": condsamplers_factory("BOHAMIANNSampler", objective_bound=0.0),
    # ... plus pybnn's noise prior (log-normal, median 1e-6, log-variance 0.01)
    "bohamiann-bound0-pybnn": condsamplers_factory(
        "BOHAMIANNSampler", objective_bound=0.0, noise_prior_median=1e-6, noise_prior_log_var=0.01
    ),
}

# Later samplers are one line each.
SAMPLERS: dict[str, SamplerFactory] = {
    "treegp": condsamplers_factory("TreeGPSampler"),
    "bngp": condsamplers_factory("BNGPSampler"),
    "treegp-joint": condsamplers_factory("TreeGPSampler", acquisition="joint"),
    "treegp-linear": condsamplers_factory("TreeGPSampler", inner_basis="linear"),
    "treegp-linear-joint": condsamplers_factory(
        "TreeGPSampler", inner_basis="linear", acquisition="joint"
    ),
    "treegp-leaf": condsamplers_factory("TreeGPSampler", leaf_inputs="leaf"),
    "treegp-samples": condsamplers_factory("TreeGPSampler", hyperparameter_samples=8),
    "treegp-tail": condsamplers_factory("TreeGPSampler", output_warping="tail"),
    "treegp-tail-shared": condsamplers_factory(
        "TreeGPSampler", output_warping="tail", offsets="shared"
    ),
    "independent": condsamplers_factory("TreeGPSampler", independent=True, acquisition="joint"),
    "arcgp": condsamplers_factory("ArcGPSampler"),
    "arcgp-kb": condsamplers_factory("ArcGPSampler", n_fantasies=0),
    "arcgp-mc": condsamplers_factory("ArcGPSampler", n_fantasies=MC_FANTASIES),
    "treegp-kb": condsamplers_factory("TreeGPSampler", n_fantasies=0),
    "treegp-mc": condsamplers_factory("TreeGPSampler", n_fantasies=MC_FANTASIES),
    "dngo": condsamplers_factory("DNGOSampler"),
    "bohamiann": condsamplers_factory("BOHAMIANNSampler"),
    **POSITIVE_OBJECTIVE_SAMPLERS,
    "tpe": _tpe,
    "gp": _gp,
    "random": _random,
}


DEFAULT_SAMPLERS = [name for name in SAMPLERS if name not in POSITIVE_OBJECTIVE_SAMPLERS]


def make_sampler(name: str, seed: int, n_startup_trials: int) -> BaseSampler:
    """Build the registered sampler ``name``."""
    return SAMPLERS[name](seed, n_startup_trials)


def sampler_unavailable_reason(name: str) -> str | None:
    """Return why sampler ``name`` cannot be built here, or ``None`` if it can."""
    try:
        with _quiet():
            make_sampler(name, 0, 10)
    except (ImportError, AttributeError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


class TimedSampler(BaseSampler):
    """Delegating sampler that accumulates the inner sampler's wall time per trial number."""

    def __init__(self, inner: BaseSampler) -> None:
        self.inner = inner
        self.times: defaultdict[int, float] = defaultdict(float)

    def __str__(self) -> str:
        return f"TimedSampler({self.inner})"

    @contextmanager
    def _clock(self, number: int) -> Iterator[None]:
        """Add the wall time of the enclosed block to trial ``number``."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.times[number] += time.perf_counter() - start

    def infer_relative_search_space(
        self, study: Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        with self._clock(trial.number):
            return self.inner.infer_relative_search_space(study, trial)

    def sample_relative(
        self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        with self._clock(trial.number):
            return self.inner.sample_relative(study, trial, search_space)

    def sample_independent(
        self,
        study: Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        with self._clock(trial.number):
            return self.inner.sample_independent(study, trial, param_name, param_distribution)

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        with self._clock(trial.number):
            self.inner.before_trial(study, trial)

    def after_trial(
        self,
        study: Study,
        trial: FrozenTrial,
        state: TrialState,
        values: Sequence[float] | None,
    ) -> None:
        with self._clock(trial.number):
            self.inner.after_trial(study, trial, state, values)

    def reseed_rng(self) -> None:
        self.inner.reseed_rng()

    def time_per_trial(self, n_trials: int) -> list[float]:
        """Return the accumulated sampler time of trials ``0..n_trials-1``."""
        return [self.times.get(number, 0.0) for number in range(n_trials)]


# --------------------------------------------------------------------------------------------
# Running one study
# --------------------------------------------------------------------------------------------


@contextmanager
def _quiet() -> Iterator[None]:
    """Silence Optuna's info logs and experimental/user warnings inside the block."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        warnings.simplefilter("ignore", UserWarning)
        yield


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


def sampler_label(sampler_name: str, batch_size: int) -> str:
    """Label of a sampler's results: its name, plus ``@batch<B>`` for batch runs."""
    return sampler_name if batch_size == 1 else f"{sampler_name}{BATCH_TAG}{batch_size}"


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
# Results file
# --------------------------------------------------------------------------------------------


def problem_key(name: str, n_trials: int) -> str:
    """Key of a problem's results: its name, plus ``@<n>`` for a non-default budget."""
    return name if n_trials == get_problem(name).n_trials else f"{name}@{n_trials}"


def load_results(path: Path) -> Results:
    """Load a results file, or return an empty one."""
    if not path.exists():
        return {"format": RESULTS_FORMAT, "commands": [], "runs": {}, "timing": {}}
    results = json.loads(path.read_text())
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


def plot_problem(results: Results, key: str, out_dir: Path) -> Path | None:
    """Plot median regret curves with quartile bands for one problem key."""
    plt = _import_pyplot()
    if plt is None:
        return None
    by_sampler = results["runs"].get(key, {})
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for name in sampler_order(by_sampler):
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


def plot_all(results: Results, keys: Sequence[str], out_dir: Path) -> None:
    """Plot every problem key, or say why plots are skipped."""
    if _import_pyplot() is None:
        print("matplotlib is not importable: skipping plots (pip install matplotlib)")
        return
    for key in keys:
        path = plot_problem(results, key, out_dir)
        if path is not None:
            print(f"wrote {path}")


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


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", nargs="+", choices=list(PROBLEMS), default=None)
    parser.add_argument("--samplers", nargs="+", choices=list(SAMPLERS), default=None)
    parser.add_argument("--seeds", type=int, default=10, help="number of seeds (default 10)")
    parser.add_argument("--first-seed", type=int, default=0, help="seeds are first..first+N-1")
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks"))
    parser.add_argument("--jobs", type=int, default=1, help="parallel worker processes")
    parser.add_argument(
        "--n-trials-override", type=int, default=None, help="budget for quick runs"
    )
    parser.add_argument(
        "--batch-size",
        type=int,
        default=1,
        help="ask-and-tell in rounds of this many trials after the startup trials; results "
        "under the sampler label <sampler>@batch<B> (default 1: sequential)",
    )
    parser.add_argument("--no-plots", action="store_true", help="do not write PNG plots")
    parser.add_argument("--timing", action="store_true", help="suggestion time vs study size")
    parser.add_argument("--timing-problem", choices=list(PROBLEMS), default="jenatton_small")
    parser.add_argument("--timing-trials", type=int, default=500)
    parser.add_argument(
        "--markdown", type=Path, default=None, help="only regenerate this report from results"
    )
    return parser.parse_args(argv)


def resolve_samplers(requested: Sequence[str] | None, default: Sequence[str]) -> list[str]:
    """Check sampler availability: skip unavailable defaults, fail on requested ones."""
    names = list(requested) if requested else list(default)
    available = []
    for name in names:
        reason = sampler_unavailable_reason(name)
        if reason is None:
            available.append(name)
        elif requested:
            raise SystemExit(f"sampler {name!r} is unavailable: {reason}")
        else:
            print(f"skipping sampler {name!r}: {reason}")
    return available


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


def run_benchmark(args: argparse.Namespace, argv: Sequence[str]) -> None:
    """Benchmark mode: run all cases, then print tables and write plots."""
    problems = args.problems or list(PROBLEMS)
    samplers = resolve_samplers(args.samplers, DEFAULT_SAMPLERS)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    results_path = args.out / RESULTS_FILE
    record_command(results_path, argv)
    cases = [
        (p, s, seed, args.n_trials_override or get_problem(p).n_trials)
        for p in problems
        for s in samplers
        for seed in seeds
    ]
    if args.batch_size < 1:
        raise SystemExit(f"--batch-size must be >= 1; got {args.batch_size}")
    _run_cases(cases, args.jobs, results_path, args.batch_size)
    results = load_results(results_path)
    keys = sorted({problem_key(p, n) for p, _, _, n in cases})
    for key in keys:
        print(f"\n### {problem_heading(key)}\n\n{markdown_table(summaries_for(results, key))}")
    if not args.no_plots:
        plot_all(results, keys, args.out)


def run_timing_mode(args: argparse.Namespace, argv: Sequence[str]) -> None:
    """Timing mode: one long study per sampler, median sampler time per window."""
    samplers = resolve_samplers(args.samplers, ["arcgp"])
    results_path = args.out / RESULTS_FILE
    record_command(results_path, argv)
    records = []
    for name in samplers:
        record = run_timing(args.timing_problem, name, args.first_seed, args.timing_trials)
        merge_timing(results_path, record)
        print(f"{args.timing_problem} {name}: {record['wall_time']:.1f} s", flush=True)
        records.append(record)
    print("\n" + timing_table(records))


def write_markdown(args: argparse.Namespace, argv: Sequence[str]) -> None:
    """Markdown mode: regenerate plots and the report from the stored results only."""
    results_path = args.out / RESULTS_FILE
    if not results_path.exists():
        raise SystemExit(f"no results at {results_path}")
    results = load_results(results_path)
    if not args.no_plots:
        plot_all(results, sorted(results["runs"]), args.out)
    args.markdown.parent.mkdir(parents=True, exist_ok=True)
    args.markdown.write_text(markdown_report(results, argv, args.out, args.markdown))
    print(f"wrote {args.markdown}")


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point."""
    argv = list(sys.argv if argv is None else argv)
    args = parse_args(argv[1:])
    if args.jobs > 1 and not (args.markdown or args.timing):
        _limit_threads_env()  # inherited by the spawned workers before they import torch
    if args.markdown is not None:
        write_markdown(args, argv)
    elif args.timing:
        run_timing_mode(args, argv)
    else:
        run_benchmark(args, argv)


if __name__ == "__main__":
    main()
