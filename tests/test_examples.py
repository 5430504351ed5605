"""The scripts in examples/ run as a new user runs them (a fresh process, its own folder) and
print what their docstrings promise: examples that stop working fail here, not in a user's
hands. Each runs on a small budget (its command-line options) to keep the suite fast."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import REPO_ROOT, run_script


def run_example(name: str, *args: str, cwd: Path) -> str:
    """Runs ``examples/name`` with ``args`` in ``cwd``; returns its output (fails on rc != 0)."""
    return run_script(REPO_ROOT / "examples" / name, *args, cwd=cwd)


def test_conditional_study_infers_the_tree_and_resumes_from_its_storage(tmp_path: Path) -> None:
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    first = run_example(
        "conditional_study.py", "--n-trials", "12", "--storage", storage, cwd=tmp_path
    )
    assert "12 trials (0 resumed)" in first
    progress = re.findall(r"^  trial +(\d+): accuracy ([0-9.]+)  \(best ([0-9.]+)\)", first, re.M)
    assert [int(n) for n, _, _ in progress] == list(range(12))  # one line per trial, as it runs
    assert "svc_gamma: float [1e-05, 0.1] log  [if svc_kernel == 'rbf']" in first
    best = float(re.search(r"3-fold CV accuracy ([0-9.]+)", first).group(1))
    assert 0.5 < best <= 1.0

    second = run_example(
        "conditional_study.py", "--n-trials", "3", "--storage", storage, cwd=tmp_path
    )
    assert "15 trials (12 resumed)" in second


def test_parallel_workers_share_one_journal_study_without_duplicates(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    script = str(REPO_ROOT / "examples" / "parallel_workers.py")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    workers = [
        subprocess.Popen(
            [sys.executable, script, "--storage", "journal.log", "--worker", str(i)]
            + ["--n-trials", "7"],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    outputs = [w.communicate(timeout=600)[0] for w in workers]
    assert all(w.returncode == 0 for w in workers)
    assert all("done;" in out for out in outputs)
    storage = JournalStorage(JournalFileBackend(str(tmp_path / "journal.log")))
    study = optuna.load_study(study_name="conditional-workers", storage=storage)
    complete = study.get_trials(states=(optuna.trial.TrialState.COMPLETE,))
    assert len(complete) == 14
    assert len({tuple(sorted(t.params.items())) for t in complete}) == 14  # no duplicate


def test_regressors_standalone_fit_the_conditional_response(tmp_path: Path) -> None:
    out = run_example("regressors_standalone.py", cwd=tmp_path)
    scores = dict(re.findall(r"^(\S+\(.*?\))\s+(-?[0-9.]+)\s+[0-9.]+$", out, flags=re.M))
    assert set(scores) >= {"CondGPRegressor(kernel='arc')", "TreeGPRegressor()"}
    assert all(float(r2) > 0.9 for r2 in scores.values()), scores
    assert "leaf 2: GP over" in out


def test_search_cv_digits_compares_with_randomized_search(tmp_path: Path) -> None:
    out = run_example("search_cv_digits.py", "--n-iter", "12", cwd=tmp_path)
    accuracies = re.findall(r"best CV accuracy ([0-9.]+), test accuracy ([0-9.]+)", out)
    assert len(accuracies) == 2  # CondBayesSearchCV and RandomizedSearchCV
    assert all(0.5 < float(a) <= 1.0 for pair in accuracies for a in pair)
    assert "__branch__: categorical" in out


def test_sensitivity_analysis_writes_its_plots(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = run_example(
        "sensitivity_analysis.py",
        "--out",
        str(tmp_path / "plots"),
        "--n-trials",
        "30",
        cwd=tmp_path,
    )
    assert "Sobol' main effects" in out
    pngs = sorted(p.name for p in (tmp_path / "plots").glob("*.png"))
    assert pngs == ["interaction_x1_v.png", "interaction_x1_z.png", "main_effects.png"]


def test_plot_conditional_space_saves_the_tree_of_its_study(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    png = tmp_path / "figures" / "tree.png"
    out = run_example(
        "plot_conditional_space.py", "--out", str(png), "--n-trials", "12", cwd=tmp_path
    )
    assert "12 trials, best error" in out
    assert f"saved {png}" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_ray_tune_runs_the_tree_gp_through_optuna_search(tmp_path: Path) -> None:
    """Ray Tune's ``OptunaSearch`` with ``TreeGPSampler``: every trial runs, the trials after
    the startup ones are the sampler's model-based proposals, none repeats another."""
    pytest.importorskip("ray.tune", reason="pip install condsamplers[distributed]")
    import optuna

    from condsamplers.samplers.proposals import read_proposal

    storage = f"sqlite:///{tmp_path / 'ray.db'}"
    out = run_example("ray_tune.py", "--n-trials", "12", "--storage", storage, cwd=tmp_path)
    assert "12 trials, 12 distinct configurations" in out
    study = optuna.load_study(study_name="ray-tune", storage=storage)
    complete = study.get_trials(states=(optuna.trial.TrialState.COMPLETE,))
    assert len(complete) == 12
    assert sum(read_proposal(t) is not None for t in complete) >= 2  # model-based after 8


def test_dask_cluster_optimises_one_study_from_its_workers(tmp_path: Path) -> None:
    pytest.importorskip("dask.distributed", reason="pip install condsamplers[distributed]")
    pytest.importorskip("optuna_integration", reason="pip install condsamplers[distributed]")
    out = run_example("dask_cluster.py", "--workers", "2", "--n-trials", "16", cwd=tmp_path)
    assert "16 trials, 16 distinct configurations" in out
    best = float(re.search(r"best value ([0-9.]+)", out).group(1))
    assert best < 0.3  # the optimum is 0 (the net branch, depth 2, widths 64, rate 0.01)


def test_pruned_study_learns_from_hyperbands_pruned_trials(tmp_path: Path) -> None:
    out = run_example("pruned_study.py", "--n-trials", "16", "--epochs", "9", cwd=tmp_path)
    counts = re.search(r"16 trials: (\d+) complete, (\d+) pruned; (\d+) epochs trained", out)
    assert counts is not None, out
    complete, pruned, epochs = (int(g) for g in counts.groups())
    assert complete + pruned == 16 and pruned > 0
    assert epochs < 16 * 9  # the pruner stopped trials early
    assert 0.0 <= float(re.search(r"best validation error ([0-9.]+)", out).group(1)) < 0.2


def test_pareto_study_prints_a_front_of_error_against_size(tmp_path: Path) -> None:
    out = run_example("pareto_study.py", "--n-trials", "14", cwd=tmp_path)
    header = re.search(r"14 trials, (\d+) on the Pareto front", out)
    assert header is not None, out
    rows = re.findall(r"error ([0-9.]+)\s+size\s+([0-9.]+) KB", out)
    assert len(rows) == int(header.group(1)) >= 1
    errors = [float(e) for e, _ in rows]
    sizes = [float(s) for _, s in rows]
    assert sizes == sorted(sizes) and errors == sorted(errors, reverse=True)  # a trade-off
