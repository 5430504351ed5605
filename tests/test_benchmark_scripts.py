"""The measuring scripts of benchmarks/ run as a new user runs them (a fresh process, another
folder) on a tiny budget, and print and store what they report: an acceptance figure is
measured with these scripts, so one that stops working must fail here. (``benchmarks/run.py``
has its own end-to-end test in test_benchmark_problems.py; ``benchmarks/batch_spread.py``'s
functions are used by test_batch_proposals.py.)"""

from __future__ import annotations

import json
import math
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO_ROOT, run_script

BENCHMARKS = REPO_ROOT / "benchmarks"


def run_quick(module: str, out: Path, timeout: int = 900, **env: str) -> tuple[str, list[dict]]:
    """``python -m <module> --quick --out <out>`` as a new user runs it (a fresh process, one
    thread, ``env`` added); its standard output and the records it wrote to
    ``out/runs.jsonl``. Fails the test on a non-zero exit status."""
    done = subprocess.run(
        [sys.executable, "-m", module, "--quick", "--out", str(out)],
        cwd=REPO_ROOT,
        env=dict(os.environ, OMP_NUM_THREADS="1", **env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    return done.stdout, runs


def test_search_cv_reports_each_search_and_stores_each_run(tmp_path: Path) -> None:
    methods = ["CondBayesSearchCV[n_samples]", "HalvingRandomSearchCV"]
    methods += ["CondBayesSearchCV", "RandomizedSearchCV"]
    out = run_script(
        BENCHMARKS / "search_cv.py",
        *("--seeds", "2", "--n-iter", "12", "--jobs", "1", "--out", "runs.json"),
        *("--methods", *methods, "--resource-n-iter", "15"),
        cwd=tmp_path,
    )
    found = re.findall(
        r"^\| ([\w\[\]]+) \| (\d+) \| ([0-9.]+) \| \*\*([0-9.]+)\*\* \| ([0-9., ]+) \| "
        r"([0-9.]+) \|",
        out,
        flags=re.M,
    )
    rows = {
        method: (int(n), float(m), per_seed, float(f)) for method, n, _, m, per_seed, f in found
    }
    assert set(rows) == set(methods)
    assert re.search(r"CondBayesSearchCV higher than RandomizedSearchCV on \d of 2 seeds", out)
    assert rows["HalvingRandomSearchCV"][0] == rows["CondBayesSearchCV[n_samples]"][0] == 15
    assert rows["CondBayesSearchCV"][0] == 12 and rows["CondBayesSearchCV"][3] == 12.0
    # The halving searches train most candidates on subsamples: fewer full fits than candidates.
    assert rows["CondBayesSearchCV[n_samples]"][3] < 15 and rows["HalvingRandomSearchCV"][3] < 15

    stored = json.loads((tmp_path / "runs.json").read_text())
    assert "--n-iter 12" in stored["command"]
    for method in rows:
        runs = [r for r in stored["runs"] if r["method"] == method]
        assert sorted(r["seed"] for r in runs) == [0, 1]
        runs.sort(key=lambda r: r["seed"])
        chosen = [r["chosen_full_cv"] for r in runs]
        assert all(0.5 < s <= 1.0 for s in chosen), chosen  # digits: far above chance (0.1)
        assert rows[method][2].strip().split(", ") == [f"{s:.4f}" for s in chosen]
        assert rows[method][1] == round(statistics.median(chosen), 4)
        chosen_clf = [r["best_params"]["clf"] for r in runs]
        assert all(re.fullmatch(r"\w+\(.*\)", c) for c in chosen_clf), chosen_clf  # an estimator


def test_plot_only_draws_the_recorded_regret_of_the_samplers_asked(tmp_path: Path) -> None:
    out = run_script(
        BENCHMARKS / "run.py",
        *("--plot-only", "--out", str(REPO_ROOT / "benchmarks" / "results" / "synthetic")),
        *("--problems", "jenatton_small", "--samplers", "treegp", "random"),
        *("--plots-dir", "plots"),
        cwd=tmp_path,
    )
    assert [path.name for path in (tmp_path / "plots").iterdir()] == ["regret_jenatton_small.png"]
    assert "wrote" in out


def test_paired_compares_the_runs_of_one_sampler_seed_by_seed(tmp_path: Path) -> None:
    def results(regrets: dict[str, list[float]]) -> dict:
        runs = {
            problem: {"treegp": {str(s): {"regret": [1.0, r]} for s, r in enumerate(values)}}
            for problem, values in regrets.items()
        }
        return {"format": 1, "commands": [], "runs": runs, "timing": {}}

    before, after = tmp_path / "before.json", tmp_path / "after.json"
    before.write_text(json.dumps(results({"a": [1e-3] * 6, "b": [0.1, 0.2]})))
    after.write_text(json.dumps(results({"a": [1e-5] * 6, "b": [0.2, 0.1]})))
    out = run_script(
        BENCHMARKS / "paired.py",
        *("--before", str(before), "--after", str(after)),
        cwd=tmp_path,
    )
    assert "| a | 6 | 0.001 | 1e-05 | 6 | 0 |" in out
    assert "| b | 2 | 0.15 | 0.15 | 1 | 1 |" in out
    assert "8 pairs: lower 7, higher 1" in out
    # the suite's records: best values, normalised per task over both versions
    runs = [
        {"task": "t", "sampler": "treegp", "seed": seed, "values": [0.5, value]}
        for seed, value in enumerate([0.2, 0.4])
    ]
    before.write_text("\n".join(json.dumps(run) for run in runs))
    runs[1]["values"] = [0.5, 0.1]
    after.write_text("\n".join(json.dumps(run) for run in runs))
    out = run_script(
        BENCHMARKS / "paired.py", "--before", str(before), "--after", str(after), cwd=tmp_path
    )
    assert "| t | 2 | 0.3 | 0.15 | 1 | 0 |" in out
    assert "mean change of normalised best value -0.500" in out


def test_scaling_times_each_study_size(tmp_path: Path) -> None:
    out = run_script(
        BENCHMARKS / "scaling.py",
        *("--samplers", "treegp", "--sizes", "20", "40", "--repeats", "1"),
        *("--problem", "jenatton_small", "--out", "scaling"),
        cwd=tmp_path,
    )
    row = re.search(r"^\| treegp \| ([0-9.]+) \| ([0-9.]+) \|$", out, flags=re.M)
    assert row is not None, out
    assert all(float(t) > 0 for t in row.groups())
    assert any((tmp_path / "scaling").iterdir())  # the results are written where asked


def test_real_hpo_suite_quick_mode_runs_every_sampler_and_reports(tmp_path: Path) -> None:
    """``python -m benchmarks.hpo --quick``: real training (hyperopt-sklearn's CASH space on
    iris and diabetes), three samplers, two seeds; runs are recorded, a second call runs
    nothing (the record and the evaluation cache), and the tables hold every sampler."""
    cache = {"CONDSAMPLERS_BENCH_CACHE": str(tmp_path / "cache.sqlite")}
    stdout, runs = run_quick("benchmarks.hpo", tmp_path / "q", **cache)
    assert sorted({(r["task"], r["sampler"], r["seed"]) for r in runs}) == sorted(
        (t, s, seed)
        for t in ("cash_iris", "cash_diabetes")
        for s in ("random", "tpe", "treegp")
        for seed in (0, 1)
    )
    for r in runs:
        assert len(r["values"]) == len(r["configs"]) == 12
        assert all(v >= 0 for v in r["values"])  # an error, an RMSE
    iris = [min(r["values"]) for r in runs if r["task"] == "cash_iris"]
    assert max(iris) < 0.5  # far better than chance (2/3 error) after 12 configurations
    for table in ("### cash_iris (12 trials)", "### cash_diabetes (12 trials)", "mean rank"):
        assert table in stdout
    assert re.search(r"^\| treegp \| 2 \| [0-9.]+ ", stdout, flags=re.M)
    assert "| on a bound |" in stdout

    again, _ = run_quick("benchmarks.hpo", tmp_path / "q", timeout=300, **cache)
    assert "seed" not in again.split("###")[0]  # no run repeated
    assert (tmp_path / "q" / "report.md").read_text().startswith("Command: `python -m")


def test_an_evaluation_past_its_time_limit_is_stopped_and_scored_as_failed() -> None:
    """``benchmarks/hpo/time_limit.py``: the evaluation runs in a child process; a result
    within the limit comes back unchanged, one past it (or a child that dies) gives ``None``,
    an exception in the child is raised in the parent, and a CASH evaluation stopped at its
    limit scores the task's worst value."""
    import time

    import optuna

    from benchmarks.hpo.cash import classifier_space, evaluate, evaluate_with_time_limit
    from benchmarks.hpo.spec import suggest
    from benchmarks.hpo.time_limit import evaluate_within

    assert evaluate_within(abs, -2.5, seconds=60) == 2.5
    start = time.perf_counter()
    assert evaluate_within(time.sleep, 30.0, seconds=0.5) is None
    assert time.perf_counter() - start < 20  # stopped, not waited for
    assert evaluate_within(os._exit, 3, seconds=60) is None
    with pytest.raises(ValueError, match="invalid literal"):  # raised in the child
        evaluate_within(int, "not a number", seconds=60)
    with pytest.raises(ValueError, match="seconds must be > 0"):
        evaluate_within(abs, 1.0, seconds=0)

    trial = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0)).ask()
    config = suggest(trial, classifier_space())
    within, extras = evaluate_with_time_limit(config, "iris", "classification", 60.0)
    assert (within, extras["failed"]) == (evaluate(config, "iris", "classification")[0], 0.0)
    value, extras = evaluate_with_time_limit(config, "iris", "classification", 1e-3)
    assert value == 1.0 and extras == {"failed": 1.0, "timed_out": 1.0, "seconds": 1e-3}


def test_on_bound_counts_numerical_values_at_either_end_after_the_startup_trials() -> None:
    from benchmarks.hpo.peers import N_STARTUP
    from benchmarks.hpo.report import on_bound
    from benchmarks.hpo.spec import Param

    space = (
        Param("C", "float", low=1e-3, high=1e3, log=True),
        Param("k", "int", low=1, high=101),
        Param("kind", "categorical", choices=("a", "b")),
    )
    startup = [{"C": 1e-3, "k": 1, "kind": "a"}] * N_STARTUP  # not counted
    later = [
        {"C": 1e3, "k": 51, "kind": "a"},  # C on its upper bound (log scale)
        {"C": 1.0, "k": 100, "kind": "b"},  # k within 1% of its upper end
        {"C": 1.2e-3, "kind": "b"},  # log(1.2e-3) is 1.3% of the log range from the low end
    ]
    assert on_bound(startup + later, space) == (2, 5)


def test_cash_search_space_for_scikit_learn_searches_keeps_the_conditions() -> None:
    """``benchmarks/hpo/search_cv_cash.py``: the CASH space as a list of dicts (one per set of
    active parameters) covers every estimator family and preprocessing, and the estimator
    passes only the parameters active under the space's conditions to the pipeline (within
    ``fit_seconds`` when it is set)."""

    from sklearn.base import clone
    from sklearn.model_selection import ParameterSampler

    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    from benchmarks.hpo.cash import CLASSIFIERS, PREPROCESSORS, load_dataset
    from benchmarks.hpo.search_cv_cash import IDENT, SPACE, CashClassifier, search_space
    from benchmarks.hpo.spec import active_params

    dicts = search_space("patterns")
    assert len(dicts) == 104
    assert {d["classifier"][0] for d in dicts} == set(CLASSIFIERS)
    assert {p for d in dicts for p in d["preprocessing"]} == set(PREPROCESSORS)
    assert len(search_space("families")) == len(CLASSIFIERS) * len(PREPROCESSORS)
    X, y = load_dataset("iris")
    fitted = 0
    for params in ParameterSampler(dicts, n_iter=20, random_state=0):
        model = clone(CashClassifier(**params))
        assert model.get_params() == CashClassifier(**params).get_params()
        if params["classifier"] in ("knn", "svc"):
            model.fit(X, y)
            active = {p.name for p in active_params(SPACE, model.config_)}
            assert set(model.config_) == active  # the active parameters, and only those
            assert {IDENT[name] for name in active} <= set(params)
            assert model.predict(X[:3]).shape == (3,)
            if fitted == 0:  # a fit limit: the same fit within it, TimeoutError past it
                limited = clone(model).set_params(fit_seconds=60.0).fit(X, y)
                assert (limited.predict(X) == model.predict(X)).all()
                with pytest.raises(TimeoutError, match="fit_seconds"):
                    clone(model).set_params(fit_seconds=1e-3).fit(X, y)
            fitted += 1
    assert fitted >= 2


def test_cash_dict_index_names_the_dict_of_each_candidate_in_every_translation() -> None:
    """``dict_index``: the dict a candidate was drawn from, also where dicts share their
    parameter names and differ in the values they fix (``--space full``)."""
    from sklearn.model_selection import ParameterSampler

    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    from benchmarks.hpo.search_cv_cash import dict_index, search_space

    for kind, n_dicts in (("full", 248), ("patterns", 104), ("families", 32)):
        dicts = search_space(kind)
        assert len(dicts) == n_dicts
        dict_of = dict_index(dicts)
        for i, d in enumerate(dicts):  # a candidate of dict i, drawn from it alone
            params = next(iter(ParameterSampler([d], n_iter=1, random_state=i)))
            assert dict_of(params) == i


def test_search_cv_pareto_quick_reports_the_hypervolume_of_each_search(tmp_path: Path) -> None:
    out = run_script(
        BENCHMARKS / "search_cv_pareto.py",
        *("--quick", "--methods", "CondBayesSearchCV", "RandomizedSearchCV", "--out", "r.json"),
        cwd=tmp_path,
    )
    rows = dict(re.findall(r"^\| ([\w\[\]]+) \| \*\*([0-9.]+)\*\*", out, flags=re.M))
    assert set(rows) == {"CondBayesSearchCV", "RandomizedSearchCV"}
    stored = json.loads((tmp_path / "r.json").read_text())
    assert len(stored["runs"]) == 4 and "--quick" in stored["command"]
    for run in stored["runs"]:
        # error in (0, 1), log10 bytes in (2, 7): the hypervolume is positive, below 7
        assert 0.0 < run["hypervolume"] < 7.0 and run["front_size"] >= 1
        assert 0.5 < run["best_accuracy"] <= 1.0 and run["n_iter"] == 8


def test_front_hypervolume_counts_only_the_non_dominated_points_inside_the_reference() -> None:
    from benchmarks.search_cv_pareto import hypervolume_of, points

    accuracy = np.array([0.9, 0.5, 0.8, 0.95])
    size = -np.array([4.0, 3.0, 5.0, 8.0])  # the last is beyond the reference's 7.0
    # (0.1, 4) and (0.5, 3) are the front; (0.2, 5) is dominated by (0.1, 4)
    expected = (1.0 - 0.1) * (7.0 - 4.0) + (1.0 - 0.5) * (4.0 - 3.0)
    assert hypervolume_of(points(accuracy, size)) == pytest.approx(expected)
    assert hypervolume_of(points(np.array([0.0]), np.array([-8.0]))) == 0.0


def test_cash_search_cv_variants_are_tree_samplers_with_their_options() -> None:
    from benchmarks.hpo.search_cv_cash import VARIANT_METHODS, variant_sampler
    from condsamplers import TreeGPSampler

    assert "CondBayesSearchCV[two_step]" in VARIANT_METHODS
    sampler = variant_sampler("CondBayesSearchCV[two_step_nobound]", seed=3)
    assert isinstance(sampler, TreeGPSampler)
    with pytest.raises(KeyError):
        variant_sampler("CondBayesSearchCV[unknown]", seed=3)


def test_the_regression_guard_fails_when_most_seeds_are_worse_by_its_factor() -> None:
    from benchmarks import guard

    reference = {
        "a": [1e-6, 1e-6, 0.1],
        "b": [1e-3, 1e-3, 1e-3],
        "c": [1e-12, 1e-12, 1e-12],
    }
    regrets = {
        "a": [0.2, 2e-6, 1e-7],  # one seed took the other branch: holds
        "b": [1e-2, 2e-2, 1e-4],  # two of three seeds 10x worse: fails
        "c": [1e-10, 5e-10, 1e-11],  # below the floor of rounding: holds
    }
    verdicts = {p: ok for p, _, _, ok in guard.compare(regrets, reference)}
    assert verdicts == {"a": True, "b": False, "c": True}


def test_the_regression_guard_has_a_reference_for_each_sampler_problem_and_seed() -> None:
    from benchmarks import guard

    reference = json.loads(guard.REFERENCE.read_text())
    assert set(guard.CASES) == {"treegp", "arcgp", "bngp", "dngo", "bohamiann"}
    assert guard.CASES["treegp"] == guard.PROBLEMS
    for sampler, problems in guard.CASES.items():
        assert set(problems) <= set(reference[sampler])
        assert all(len(reference[sampler][p]) == len(guard.seeds_of(sampler)) for p in problems)


def test_replay_scores_every_estimator_family_of_a_recorded_cash_run() -> None:
    from benchmarks.hpo import replay
    from benchmarks.hpo.runner import load_records

    record = next(
        r
        for r in load_records(REPO_ROOT / "benchmarks" / "results" / "hpo")
        if (r["task"], r["sampler"], r["seed"]) == ("cash_iris", "treegp", 0)
    )
    study = replay.replay_study(record, 12)
    assert [t.value for t in study.trials[:12]] == record["values"][:12]
    rows = replay.family_scores(study, "classifier", seed=0, warping="tail")
    families = {row[0] for row in rows}
    assert {c["classifier"] for c in record["configs"][:12]} <= families
    assert [row[3] for row in rows] == sorted((row[3] for row in rows), reverse=True)
    assert all(np.isfinite(row[3]) and row[6] > 0 for row in rows)


def test_importance_timing_prints_each_evaluator(tmp_path: Path) -> None:
    out = run_script(
        BENCHMARKS / "importance_timing.py",
        *("--repeats", "1", "--trials", "12", "--evaluators", "sobol", "fanova"),
        cwd=tmp_path,
    )
    rows = dict(re.findall(r"^\| (\w+) \| ([0-9.]+) \|", out, flags=re.M))
    assert set(rows) == {"sobol", "fanova"}
    assert all(float(seconds) > 0 for seconds in rows.values())


def test_many_workers_on_each_storage_lose_no_trial_and_repeat_no_configuration(
    tmp_path: Path,
) -> None:
    """``benchmarks/workers.py``: worker processes on one study on a journal file, SQLite and a
    local PostgreSQL server (skipped with the reason where none can start); worker 0 is
    SIGKILLed in its third trial. Every other trial completes, no configuration is evaluated
    twice, and on the database storages (with a heartbeat) the dead worker's trial is failed,
    by the other workers or by ``fail_stale_trials`` after the grace period."""
    import pytest

    out = run_script(
        BENCHMARKS / "workers.py",
        *("--workers", "3", "--trials", "4", "--fast", "--kill"),
        cwd=tmp_path,
    )
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and cells[0] in ("journal", "sqlite", "postgres"):
            rows[cells[0]] = cells
    assert {"journal", "sqlite"} <= set(rows)
    for storage, cells in rows.items():
        if cells[3].startswith("skipped"):
            continue
        complete, failed, running, exact = (int(c) for c in cells[3:7])
        assert complete == 2 + 2 * 4, (storage, cells)  # worker 0 finished 2 trials only
        assert failed + running == 1 and exact == 0, (storage, cells)
        if storage != "journal":  # a heartbeat: the stale trial is failed in the end
            assert running == 0 or cells[11] == "1 of 1 by fail_stale_trials", cells
    if rows.get("postgres", ["", "", "", "skipped"])[3].startswith("skipped"):
        pytest.skip(f"PostgreSQL: {rows.get('postgres', ['no row'])[-1]}")


def test_scaling_with_memory_reports_each_cells_peak_memory(tmp_path: Path) -> None:
    out = run_script(
        BENCHMARKS / "scaling.py",
        *("--samplers", "treegp", "--sizes", "20", "--repeats", "1", "--memory"),
        *("--problem", "jenatton_small"),
        cwd=tmp_path,
    )
    memory = out.split("Peak memory")[1]
    row = re.search(r"^\| treegp \| ([0-9.]+) \|$", memory, flags=re.M)
    assert row is not None, out
    assert 50 < float(row.group(1)) < 4000  # MB: a Python process with torch


def test_multi_fidelity_benchmark_quick_mode_traces_the_budget(tmp_path: Path) -> None:
    """``python -m benchmarks.fidelity --quick``: the synthetic problem under HyperbandPruner,
    three samplers, two seeds; each run spends its budget (a quarter of the full one) and its
    trace only improves; the table has every sampler; a second call runs nothing."""
    from benchmarks.fidelity.problems import MAX_STEP, PROBLEMS

    stdout, runs = run_quick("benchmarks.fidelity", tmp_path)
    budget = PROBLEMS["curves_synthetic"].budget // 4
    assert sorted((r["sampler"], r["seed"]) for r in runs) == sorted(
        (s, seed) for s in ("random", "tpe", "treegp") for seed in (0, 1)
    )
    for r in runs:
        used = [u for u, _ in r["trace"]]
        best = [b for _, b in r["trace"]]
        assert budget <= used[-1] < budget + MAX_STEP  # stops once the budget is spent
        assert used == sorted(used) and best == sorted(best, reverse=True)
        assert r["n_trials"] > r["n_full"] >= 1  # the pruner stopped some trials
    assert re.search(r"^\| treegp \| 2 \| [0-9.e-]+ ", stdout, flags=re.M)
    again, _ = run_quick("benchmarks.fidelity", tmp_path, timeout=300)
    assert "seed" not in again.split("###")[0]


def test_multi_fidelity_curves_end_at_their_final_value() -> None:
    """The synthetic curves decrease to the final value at the last step, the ``slow`` branch
    at its centre reaches the optimum, 0; real training gives errors in [0, 1]."""
    from benchmarks.fidelity.problems import (
        MAX_STEP,
        SLOW_CENTRE,
        curves_synthetic_curve,
        mlp_digits_curve,
    )

    slow = {"branch": "slow", **{f"slow_{i}": c for i, c in enumerate(SLOW_CENTRE)}}
    values = list(curves_synthetic_curve(slow))
    assert len(values) == MAX_STEP and values[-1] == 0.0
    assert values == sorted(values, reverse=True)
    linear = {"family": "linear", "loss": "hinge", "penalty": "l2", "sgd_alpha": 1e-4}
    errors = [e for _, e in zip(range(2), mlp_digits_curve(linear), strict=False)]
    assert all(0.0 <= e <= 0.3 for e in errors)


def test_pareto_benchmark_quick_mode_reports_hypervolumes(tmp_path: Path) -> None:
    """``python -m benchmarks.pareto --quick``: the synthetic problem, three samplers, two
    seeds of 20 trials; every run has two objective values per trial, the table a row per
    sampler with a hypervolume below the true front's."""
    from benchmarks.pareto.problems import zdt_true_hypervolume

    stdout, runs = run_quick("benchmarks.pareto", tmp_path)
    assert sorted((r["sampler"], r["seed"]) for r in runs) == sorted(
        (s, seed) for s in ("random", "tpe", "treegp") for seed in (0, 1)
    )
    assert all(len(r["values"]) == 20 and all(len(v) == 2 for v in r["values"]) for r in runs)
    rows = dict(re.findall(r"^\| (\w+) \| 2 \| ([0-9.]+) ", stdout, flags=re.M))
    assert set(rows) == {"random", "tpe", "treegp"}
    assert all(0 < float(v) < zdt_true_hypervolume() for v in rows.values())


def test_pareto_problems_have_the_stated_fronts() -> None:
    """branches_zdt's optimal configurations lie on the stated curves, the decoy branch is
    dominated; digits_size gives an error in [0, 1] and a model size in bytes."""
    from benchmarks.pareto.problems import digits_size, zdt_branches

    a = zdt_branches({"branch": "a", "a_x": 0.25, "a_u": 0.3, "a_v": 0.7})
    assert a == pytest.approx((0.25, 0.5))
    b = zdt_branches({"branch": "b", "b_x": 0.5, "b_depth": 3, "b_z": 0.03})
    assert b == pytest.approx((0.625, 0.2))
    decoy = zdt_branches({"branch": "c", "c_x": 0.5})
    assert decoy[0] >= 0.625 and decoy[1] > 0.2  # dominated by b's point
    error, log_bytes = digits_size({"family": "tree", "tree_depth": 3, "tree_leaf": 5})
    assert 0 <= error <= 1 and 2 < log_bytes < 7


def test_pairings_counts_good_evaluations_and_each_samplers_trials_on_the_best_pairing(
    tmp_path: Path,
) -> None:
    import gzip

    from benchmarks.hpo import pairings
    from benchmarks.hpo.peers import N_STARTUP

    def config(preprocessing: str, classifier: str) -> dict[str, str]:
        return {"preprocessing": preprocessing, "classifier": classifier}

    startup = [config("pca", "svc")] * N_STARTUP
    records = [
        {  # two good k-NN trials after the startup, one bad SVC
            "task": "t",
            "sampler": "a",
            "seed": 0,
            "configs": [
                *startup,
                config("norm", "knn"),
                config("norm", "knn"),
                config("pca", "svc"),
            ],
            "values": [0.5] * N_STARTUP + [0.01, 0.02, 0.3],
        },
        {"task": "t", "sampler": "b", "seed": 0, "configs": startup, "values": [0.4] * N_STARTUP},
        {
            "task": "other",
            "sampler": "a",
            "seed": 0,
            "configs": startup,
            "values": [0.0] * N_STARTUP,
        },
    ]
    path = tmp_path / "runs.jsonl.gz"
    path.write_bytes(gzip.compress("\n".join(json.dumps(r) for r in records).encode()))
    runs = pairings.read_runs([path], "t", ["a", "b"])
    assert len(runs) == 2
    plain = tmp_path / "runs.jsonl"  # as the suite writes it: read alike
    plain.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    assert pairings.read_runs([plain], "t", ["a", "b"]) == runs
    rows, best = pairings.pairing_table(runs, good=0.015)
    assert best == ("norm", "knn")
    assert rows[2] == "| norm + knn | 2 | 0.015 | 1 (50%) |"
    by_sampler = pairings.sampler_table(runs, best, good=0.015)
    assert by_sampler[2:] == [
        "| a | 1 | 2 [2.0] | 50% | 0 | 1 |",
        "| b | 1 | 0 [0.0] | - | 1 | 0 |",
    ]


def test_median_odds_pairs_the_seeds_every_sampler_ran_and_the_later_record_wins(
    tmp_path: Path,
) -> None:
    import gzip

    import numpy as np

    from benchmarks.hpo import median_odds

    def run(sampler: str, seed: int, best: float) -> dict:
        return {"task": "t", "sampler": sampler, "seed": seed, "values": [1.0, best]}

    old = [run("a", 0, 0.9)]  # replaced by the later file's run of a, seed 0
    new = [run("a", s, v) for s, v in enumerate([0.1, 0.1, 0.3])] + [
        run("b", s, v)
        for s, v in enumerate([0.2, 0.1, 0.2, 0.0])  # seed 3: b only
    ]
    paths = []
    for name, records in (("old", old), ("new", new)):
        path = tmp_path / f"{name}.jsonl.gz"
        path.write_bytes(gzip.compress("\n".join(json.dumps(r) for r in records).encode()))
        paths.append(path)
    best = median_odds.best_values(paths, "t", ["a", "b"])
    assert best == {"a": {0: 0.1, 1: 0.1, 2: 0.3}, "b": {0: 0.2, 1: 0.1, 2: 0.2}}
    always_lower = median_odds.median_odds(np.array([0.1, 0.2]), np.array([0.3, 0.4]), 5, 200, 0)
    assert always_lower == (1.0, 0.0, 0.0)
    below, equal, above = median_odds.median_odds(
        np.array([0.1, 0.3]), np.array([0.2, 0.2]), 1, 2000, 0
    )
    assert equal == 0.0 and below + above == 1.0 and 0.4 < below < 0.6
    lines = median_odds.report(best, block=3, draws=100, seed=0)
    assert lines[0] == "3 common seeds; blocks of 3, 100 draws"
    assert "| a | 0.1 | 0.1 (2), 0.3 (1) |" in lines


def test_median_odds_reads_search_cv_records_as_cv_errors_of_comparable_runs(
    tmp_path: Path,
) -> None:
    import gzip

    from benchmarks.hpo import median_odds

    def run(method: str, seed: int, best: float, **extra: object) -> dict:
        record = {"dataset": "iris", "method": method, "seed": seed, "n_iter": 30}
        return {**record, "space": "patterns", "fit_seconds": None, "best_score": best, **extra}

    old = [run("Cond", 0, 0.5), run("Cond", 1, 0.9)]  # seed 0 replaced below
    new = [
        run("Cond", 0, 0.97, variant="v"),  # pooled with "Cond" under one label
        run("Rand", 0, 0.96),
        run("Rand", 1, 0.98),
        run("Rand", 2, 0.99),  # no run of the other label on seed 2
        run("Cond", 2, 0.1, error_score=float("nan")),  # another error_score: not read
        run("Cond", 2, 0.1, n_iter=60),  # another n_iter
        run("Cond", 2, 0.1, space="families"),  # another list of dicts
        run("Cond", 2, 0.1, fit_seconds=20.0),  # another fit time limit
        {"method": "Cond", "seed": 2, "best_score": 0.1},  # older records: no dataset
    ]
    paths = [tmp_path / "old.jsonl.gz", tmp_path / "new.jsonl"]
    paths[0].write_bytes(gzip.compress("\n".join(json.dumps(r) for r in old).encode()))
    paths[1].write_text("\n".join(json.dumps(r) for r in new) + "\n")
    errors = median_odds.search_cv_errors(paths, "iris", "patterns", ["c=Cond,Cond@v", "Rand"], 30)
    assert errors.keys() == {"c", "Rand"}
    assert errors["c"] == pytest.approx({0: 0.03, 1: 0.1})
    assert errors["Rand"] == pytest.approx({0: 0.04, 1: 0.02})


def test_the_regression_guard_refuses_a_job_count_below_one(capsys) -> None:
    from benchmarks import guard

    with pytest.raises(SystemExit):
        guard.main(["--jobs", "0"])
    assert "--jobs must be 1 or more, got 0" in capsys.readouterr().err


def test_ceiling_reach_probabilities_follow_the_binomial() -> None:
    from benchmarks.hpo import ceiling

    assert ceiling.reach_probability(0.0, 60) == 0.0
    assert abs(ceiling.reach_probability(0.1, 2) - 0.19) < 1e-12
    assert abs(ceiling.at_least(0, 10, 0.3) - 1.0) < 1e-12
    assert abs(ceiling.at_least(10, 10, 0.5) - 0.5**10) < 1e-12
    # P(X >= 6) for X ~ Binomial(10, 1/2): (210 + 120 + 45 + 10 + 1) / 1024
    assert abs(ceiling.at_least(6, 10, 0.5) - 386 / 1024) < 1e-12


def test_ceiling_report_names_the_levels_and_the_group_that_holds_them() -> None:
    from benchmarks.hpo import ceiling

    def row(preprocessing: str, classifier: str, value: float) -> dict:
        return {
            "config": {"preprocessing": preprocessing, "classifier": classifier},
            "dict": "",
            "value": value,
        }

    rows = [row("norm", "knn", 0.0)] * 5 + [row("norm", "knn", 0.1)] * 20
    rows += [row("pca", "svc", 0.1)] * 25 + [row("pca", "svc", 0.5)] * 50
    text = ceiling.report(rows, "pairing", trials=10)
    assert "100 draws" in text
    assert "| 0 | 5 | 0.0500 (0.0218) | norm + knn (5) |" in text
    assert "| norm + knn | 25 | 0 | 0.200 | 1.000 | 1.000 |" in text
    chances = [
        ceiling.reach_probability(0.05, 10),
        ceiling.find_then_stay(0.25, 0.2, 0.0, 10),
        ceiling.find_then_stay(0.25, 1.0, 0.0, 10),
        ceiling.reach_probability(0.2, 10),
    ]
    cells = " | ".join(
        f"{p:.3f}; {ceiling.at_least(5, 10, p):.3f}, {ceiling.at_least(6, 10, p):.3f}"
        for p in chances
    )
    assert f"| 0 | norm + knn (25; 0.200) | {cells} |" in text
    assert chances[0] < chances[1] < chances[3] < chances[2]


def test_find_then_stay_counts_the_first_draw_in_the_group_and_the_draws_before() -> None:
    from benchmarks.hpo.ceiling import find_then_stay, reach_probability

    g, q, r = 0.3, 0.2, 0.05
    assert abs(find_then_stay(g, q, r, 1) - (g * q + (1 - g) * r)) < 1e-12
    assert abs(find_then_stay(1.0, q, r, 30) - reach_probability(q, 30)) < 1e-12
    assert abs(find_then_stay(0.0, q, r, 30) - reach_probability(r, 30)) < 1e-12
    rng = np.random.default_rng(0)  # Monte Carlo of the strategy, 20 trials
    hits = 0
    for _ in range(20000):
        inside = False
        for _ in range(20):
            inside = inside or rng.random() < g
            if rng.random() < (q if inside else r):
                hits += 1
                break
    assert abs(hits / 20000 - find_then_stay(g, q, r, 20)) < 0.015


def test_ceiling_draws_score_and_resume_as_a_new_user_runs_it(tmp_path: Path) -> None:
    """``python -m benchmarks.hpo.ceiling``: real training on iris, both samplings; a second
    call with more draws reads the first ones back and adds the rest."""
    env = dict(os.environ, OMP_NUM_THREADS="1", CONDSAMPLERS_BENCH_CACHE=str(tmp_path / "c.db"))
    for sampling, group in (("suite", "pairing"), ("dicts", "dict")):
        for draws in (3, 5):
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "benchmarks.hpo.ceiling",
                    "--task",
                    "cash_iris",
                    "--sampling",
                    sampling,
                    "--group",
                    group,
                    "--draws",
                    str(draws),
                    "--trials",
                    "30",
                    "--out",
                    str(tmp_path),
                ],
                cwd=REPO_ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert done.returncode == 0, done.stderr[-3000:]
            assert f"{draws} draws" in done.stdout
        lines = (tmp_path / f"draws_cash_iris_{sampling}.jsonl").read_text().splitlines()
        assert len(lines) == 5
        assert all(0.0 <= json.loads(line)["value"] <= 1.0 for line in lines)
    assert (tmp_path / "ceiling_cash_iris_dicts_dict.md").read_text().count("| dict ") >= 1


def test_cash_search_cv_report_counts_the_dicts_tried_after_the_first_candidates() -> None:
    from benchmarks.hpo.search_cv_cash import N_FIRST, new_dicts, report

    def run(method: str, seed: int, dicts: list[int] | None) -> dict:
        record = {
            "dataset": "iris",
            "method": method,
            "seed": seed,
            "best_score": 0.9,
            "best_family": "knn",
            "scores": [0.9] * 12,
            "families": ["knn"] * 12,
            "seconds": 1.0,
        }
        return record if dicts is None else {**record, "dicts": dicts}

    first = list(range(N_FIRST))
    assert new_dicts(run("a", 0, [*first, 0, 3])) == 0
    assert new_dicts(run("a", 0, [*first, 20, 20])) == 1
    assert new_dicts(run("a", 0, None)) is None
    runs = [run("a", 0, [*first, 20, 21]), run("a", 1, [*first, 1, 2]), run("b", 0, None)]
    text = report(runs, ["iris"], ["a", "b"])
    assert re.search(r"^\| iris \| a \| 2 \| .* \| 1\.0 \(2 runs\) \| 1\.0 \|$", text, flags=re.M)
    assert re.search(r"^\| iris \| b \| 1 \| .* \| - \| 1\.0 \|$", text, flags=re.M)


def test_cash_search_cv_runs_with_nan_error_score_are_kept_apart_and_reported() -> None:
    """``--error-score nan``: a failed fold is ``NaN``; a record without ``error_score`` was
    made with 0.0, and ``NaN`` matches only ``NaN`` (how ``main`` keeps the runs of each error
    score apart); a ``NaN`` candidate score does not hide the dataset's best score."""
    from benchmarks.hpo.search_cv_cash import (
        failed_folds,
        report,
        run_error_score,
        same_error_score,
    )

    splits = np.array([[0.9, np.nan], [0.0, 0.8]])
    assert failed_folds(splits, math.nan).tolist() == [[False, True], [False, False]]
    assert failed_folds(splits, 0.0).tolist() == [[False, False], [True, False]]
    assert run_error_score({}) == 0.0 and math.isnan(run_error_score({"error_score": math.nan}))
    assert same_error_score(math.nan, math.nan) and same_error_score(0.0, 0.0)
    assert not same_error_score(math.nan, 0.0)
    record = {
        "dataset": "iris",
        "method": "a",
        "seed": 0,
        "best_score": 0.96,
        "best_family": "svc",
        "scores": [math.nan, 0.96, 0.9],
        "families": ["knn", "svc", "sgd"],
        "seconds": 1.0,
        "error_score": math.nan,
    }
    text = report([record], ["iris"], ["a"])
    assert "best mean CV accuracy 0.9600, by svc" in text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--draws", "0"], "--draws and --trials must be at least 1"),
        (["--group", "dict"], "--group dict needs --sampling dicts"),
        (["--within", "pca+foo"], "--within 'pca+foo': give one value per root parameter"),
        (["--sampling", "dicts", "--within", "pca+sgd"], "--within needs --sampling suite"),
    ],
)
def test_ceiling_refuses_bad_options_naming_them(argv, message, tmp_path: Path, capsys) -> None:
    from benchmarks.hpo import ceiling

    with pytest.raises(SystemExit):
        ceiling.main(["--task", "cash_iris", "--out", str(tmp_path), *argv])
    assert message in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # nothing drawn


def test_pairing_names_a_regressor_as_well_as_a_classifier() -> None:
    from benchmarks.hpo.pairings import pairing

    assert pairing({"preprocessing": "pca", "classifier": "svc"}) == ("pca", "svc")
    assert pairing({"preprocessing": "pca", "regressor": "svr"}) == ("pca", "svr")


def test_speed_prints_the_stage_table_and_a_running_studys_median(capsys) -> None:
    """``benchmarks/speed.py``: one row per space, size and sampler with the stages' shares,
    and with ``--running`` one row per space and sampler with a positive median."""
    from benchmarks import speed

    speed.main(
        [
            "--spaces",
            "jenatton_small",
            "--sizes",
            "12",
            "--samplers",
            "treegp",
            "random",
            "--repeats",
            "1",
        ]
    )
    rows = [line for line in capsys.readouterr().out.splitlines() if "| jenatton_small |" in line]
    assert [row.split(" | ")[2] for row in rows] == ["treegp", "random"]
    assert rows[0].count("%") == 6  # storage .. other, each a share

    speed.main(["--spaces", "jenatton_small", "--samplers", "treegp", "--running", "12"])
    (row,) = [line for line in capsys.readouterr().out.splitlines() if "| treegp |" in line]
    assert float(row.split("|")[3]) > 0


def test_bnn_fit_judges_each_model_near_branins_minima(monkeypatch, capsys) -> None:
    """``benchmarks/bnn_fit.py``: held-out points below 2 (Branin's minima are 0.398), and per
    model, target and size one row of finite figures (an exact GP here, for speed)."""
    from benchmarks import bnn_fit
    from condsamplers.sklearn import CondGPRegressor

    _, near = bnn_fit.near_minima()
    assert len(near) > 100 and near.max() < bnn_fit.NEAR and near.min() > 0.3978
    gp = {"GP": lambda seed: CondGPRegressor(kernel="matern", n_restarts=0, random_state=seed)}
    monkeypatch.setattr(bnn_fit, "models", lambda: gp)
    assert bnn_fit.main(["--n", "30", "--seeds", "1"]) == 0
    rows = [line.split("|") for line in capsys.readouterr().out.splitlines()]
    rows = [row for row in rows if len(row) > 2 and row[1].strip() == "GP"]
    assert [row[2].strip() for row in rows] == ["values", "log"]
    assert all(math.isfinite(float(row[k])) for row in rows for k in (4, 5, 6))
