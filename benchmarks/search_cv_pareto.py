"""CondBayesSearchCV's Pareto search (``pareto_objectives``) against RandomizedSearchCV and
Optuna's multi-objective samplers, at the same budget.

The space and data of ``benchmarks/search_cv.py`` (digits; a scaler and one of SVC, logistic
regression, k-nearest neighbours with their own hyperparameters), 3-fold stratified CV, one
job, ``n_iter`` candidates, ``random_state=seed``. Two objectives, both columns of
``cv_results_``: the mean CV accuracy (maximised) and the model's size, the scorer ``size`` =
``-log10`` of the bytes of the pickled fitted pipeline (maximised: smaller is better; the
k-NN stores its training data, the logistic regression a 10 x 64 weight matrix, the SVC its
support vectors). The figure is the hypervolume of the front of the candidates a search
evaluated, in minimisation form (error, ``log10`` bytes), against the fixed reference point
``(1.0, 7.0)``; larger is better.

Methods: ``CondBayesSearchCV`` with its default sampler (the tree GP with log-EHVI,
docs/multi_objective.md), ``CondBayesSearchCV[tpe]`` and ``CondBayesSearchCV[nsga2]`` (the
same search with Optuna's ``TPESampler(seed=seed)`` / ``NSGAIISampler(seed=seed)``) and
``RandomizedSearchCV`` (``scoring`` with both scorers, ``refit=False``).

Usage::

    python benchmarks/search_cv_pareto.py [--seeds 10] [--first-seed 0] [--n-iter 40]
        [--methods ...] [--out runs.json] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import shlex
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.search_cv import search_space  # noqa: E402

METHODS = (
    "CondBayesSearchCV",
    "CondBayesSearchCV[tpe]",
    "CondBayesSearchCV[nsga2]",
    "RandomizedSearchCV",
)
#: The reference point of the hypervolume: (error, log10 bytes), both minimised.
REFERENCE = (1.0, 7.0)


def size_score(estimator: Any, X: Any, y: Any) -> float:
    """``-log10`` of the bytes of the pickled fitted ``estimator`` (a scorer: larger is
    better, so smaller models score higher)."""
    return -float(np.log10(len(pickle.dumps(estimator))))


def points(accuracy: np.ndarray, size: np.ndarray) -> np.ndarray:
    """The finite candidates as (error, log10 bytes), both minimised."""
    Y = np.column_stack([1.0 - np.asarray(accuracy, dtype=float), -np.asarray(size, dtype=float)])
    return Y[np.all(np.isfinite(Y), axis=1)]


def hypervolume_of(Y: np.ndarray) -> float:
    """Hypervolume of the rows of ``Y`` against ``REFERENCE`` (the library's
    :func:`~condsamplers.hypervolume.hypervolume` drops the rows not below it and the dominated
    ones; 0 if none is left)."""
    from condsamplers.hypervolume import hypervolume

    return hypervolume(Y, np.asarray(REFERENCE))


def run_one(method: str, seed: int, n_iter: int) -> dict[str, Any]:
    """One search: the hypervolume of the front it evaluated, its size, the wall time."""
    import optuna
    from sklearn.datasets import load_digits
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import RandomizedSearchCV, StratifiedKFold
    from threadpoolctl import threadpool_limits

    from condsamplers.sklearn import CondBayesSearchCV

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    X, y = load_digits(return_X_y=True)
    pipe, space = search_space()
    kwargs: dict[str, Any] = dict(
        n_iter=n_iter,
        cv=StratifiedKFold(3, shuffle=True, random_state=0),
        n_jobs=1,
        random_state=seed,
        refit=False,
        scoring={"accuracy": "accuracy", "size": size_score},
    )
    if method == "RandomizedSearchCV":
        search: Any = RandomizedSearchCV(pipe, space, **kwargs)
    else:
        samplers = {
            "CondBayesSearchCV[tpe]": optuna.samplers.TPESampler(seed=seed),
            "CondBayesSearchCV[nsga2]": optuna.samplers.NSGAIISampler(seed=seed),
        }
        if method in samplers:
            kwargs["sampler"] = samplers[method]
        search = CondBayesSearchCV(pipe, space, pareto_objectives=["accuracy", "size"], **kwargs)
    start = time.perf_counter()
    with warnings.catch_warnings(), threadpool_limits(limits=1):
        warnings.simplefilter("ignore", ConvergenceWarning)
        search.fit(X, y)
    seconds = time.perf_counter() - start
    from condsamplers.hypervolume import pareto_mask

    accuracy = np.asarray(search.cv_results_["mean_test_accuracy"], dtype=float)
    Y = points(accuracy, search.cv_results_["mean_test_size"])
    front = Y[pareto_mask(Y)]
    return {
        "method": method,
        "seed": seed,
        "n_iter": n_iter,
        "hypervolume": hypervolume_of(front),
        "front": front.tolist(),
        "front_size": len(front),
        "best_accuracy": float(np.nanmax(accuracy)),
        "seconds": seconds,
    }


def union_hypervolume(runs: list[dict[str, Any]]) -> float:
    """Hypervolume of the front of every point any of ``runs`` evaluated."""
    every = [point for run in runs for point in run["front"]]
    return hypervolume_of(np.array(every, dtype=float).reshape(-1, 2))


def report(runs: list[dict[str, Any]], methods: list[str]) -> str:
    """Per method: the median hypervolume, and the median gap to the hypervolume of the front
    of every point of every run (smaller is better)."""
    best = union_hypervolume(runs)
    lines = [
        f"Hypervolume of the front of all runs together: {best:.4f}.\n",
        "| search | median hypervolume [q25, q75] | median gap to all runs' front | per seed "
        "| front points (median) | best accuracy (median) | median time (s) |",
        "|---|---|---|---|---|---|---|",
    ]
    for method in methods:
        mine = sorted((r for r in runs if r["method"] == method), key=lambda r: r["seed"])
        hv = [r["hypervolume"] for r in mine]
        q25, q50, q75 = np.quantile(hv, [0.25, 0.5, 0.75])
        lines.append(
            f"| {method} | **{q50:.4f}** [{q25:.4f}, {q75:.4f}] | "
            f"{np.median([best - h for h in hv]):.4f} | "
            f"{', '.join(f'{h:.4f}' for h in hv)} | "
            f"{np.median([r['front_size'] for r in mine]):.0f} | "
            f"{np.median([r['best_accuracy'] for r in mine]):.4f} | "
            f"{np.median([r['seconds'] for r in mine]):.1f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10, help="number of seeds")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--n-iter", type=int, default=40)
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    parser.add_argument("--out", default=None, help="write every run to this JSON file")
    parser.add_argument("--quick", action="store_true", help="2 seeds, n_iter 8")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if args.quick:
        args.seeds, args.n_iter = 2, 8
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    runs = []
    for seed in seeds:
        for method in args.methods:
            run = run_one(method, seed, args.n_iter)
            print(
                f"{method} seed {seed}: hypervolume {run['hypervolume']:.4f}, "
                f"{run['front_size']} front points, {run['seconds']:.1f} s",
                flush=True,
            )
            runs.append(run)
    command = "python " + " ".join(shlex.quote(a) for a in sys.argv)
    print(f"\nCommand: `{command}`\n")
    print(
        f"digits, scaler x {{SVC, LogisticRegression, KNeighbors}}, objectives: mean CV "
        f"accuracy and -log10 pickled bytes, n_iter={args.n_iter}, 3-fold, seeds "
        f"{seeds[0]}-{seeds[-1]}; hypervolume of (error, log10 bytes) against {REFERENCE}\n"
    )
    print(report(runs, args.methods))
    if args.out:
        with open(args.out, "w") as handle:
            json.dump({"command": command, "runs": runs}, handle, indent=1)


if __name__ == "__main__":
    main()
