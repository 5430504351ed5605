"""CondBayesSearchCV against RandomizedSearchCV at the same budget.

scikit-learn's digits data (or ``--dataset breast_cancer``), a pipeline choosing a scaler
(standard, min-max or none) and one of three classifiers with their own hyperparameters (SVC:
C, gamma on log scales; logistic regression: C on a log scale; k-nearest neighbours:
n_neighbors, weights), ``n_iter``
configurations with 3-fold cross-validation, one job. For each seed every search gets
``random_state=seed``; the figure is the best mean CV accuracy found (``best_score_``), and the
table gives its median over the seeds. Methods: ``CondBayesSearchCV`` with its defaults
(``TreeGPSampler(seed=seed, acquisition="joint", signal_variance="leaf", independent=True,
offsets="shared", objective_bound=1.0)``: the best accuracy is 1, so the model fits the log
error), ``CondBayesSearchCV[two_step]`` (``TreeGPSampler(seed=seed, acquisition="two_step",
signal_variance="leaf", objective_bound=1.0)``: the tree GP with its inner-node weights and
``TreeGPSampler``'s own two-step acquisition) and ``RandomizedSearchCV``.

With a resource (multi-fidelity): ``CondBayesSearchCV[n_samples]`` (``resource="n_samples"``:
candidates cross-validated on growing subsamples of the training folds, stopped by successive
halving) and scikit-learn's ``HalvingRandomSearchCV`` (``n_candidates=n_iter``, factor 3,
``min_resources="smallest"``), both with ``--resource-n-iter`` candidates (default
``--n-iter``). Since the halving searches choose their best on a subsample (scikit-learn's) or
on few full runs, every search's chosen configuration is cross-validated again on the full
folds ("chosen, full CV"), and the cost is counted in full fits (each fit on ``m`` of ``n``
samples counts ``m / n``).

Usage::

    python benchmarks/search_cv.py [--seeds 5] [--first-seed 0] [--n-iter 40] [--jobs 1]
        [--dataset digits]
        [--methods CondBayesSearchCV RandomizedSearchCV] [--out results.json]
        [--resource-n-iter 80]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor

import numpy as np

METHODS = [
    "CondBayesSearchCV",
    "CondBayesSearchCV[two_step]",
    "CondBayesSearchCV[tree_default]",
    "CondBayesSearchCV[n_samples]",
    "HalvingRandomSearchCV",
    "RandomizedSearchCV",
]
RESOURCE_METHODS = {"CondBayesSearchCV[n_samples]", "HalvingRandomSearchCV"}


def search_space() -> tuple[object, list[dict]]:
    from scipy.stats import loguniform, randint
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import MinMaxScaler, StandardScaler
    from sklearn.svm import SVC

    pipe = Pipeline([("scaler", StandardScaler()), ("clf", SVC())])
    scalers = [StandardScaler(), MinMaxScaler(), "passthrough"]
    space = [
        {
            "scaler": scalers,
            "clf": [SVC()],
            "clf__C": loguniform(1e-2, 1e3),
            "clf__gamma": loguniform(1e-5, 1e0),
        },
        {
            "scaler": scalers,
            "clf": [LogisticRegression(max_iter=200)],
            "clf__C": loguniform(1e-4, 1e2),
        },
        {
            "scaler": scalers,
            "clf": [KNeighborsClassifier()],
            "clf__n_neighbors": randint(1, 31),
            "clf__weights": ["uniform", "distance"],
        },
    ]
    return pipe, space


#: The data sets a search can run on (scikit-learn's loaders).
DATASETS = ("digits", "breast_cancer")


def load(dataset: str) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of one of :data:`DATASETS`."""
    from sklearn import datasets

    return getattr(datasets, f"load_{dataset}")(return_X_y=True)


def run_one(method: str, seed: int, n_iter: int, cv: int, dataset: str = "digits") -> dict:
    """One search; returns its best CV score, the best parameters and the wall time."""
    from sklearn.base import clone
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import RandomizedSearchCV, cross_val_score
    from threadpoolctl import threadpool_limits

    from condsamplers import TreeGPSampler
    from condsamplers.sklearn import CondBayesSearchCV

    X, y = load(dataset)
    pipe, space = search_space()
    kwargs = dict(n_iter=n_iter, cv=cv, n_jobs=1, random_state=seed, refit=False)
    if method == "CondBayesSearchCV":
        search = CondBayesSearchCV(pipe, space, **kwargs)
    elif method == "CondBayesSearchCV[n_samples]":
        search = CondBayesSearchCV(pipe, space, resource="n_samples", **kwargs)
    elif method == "HalvingRandomSearchCV":
        from sklearn.experimental import enable_halving_search_cv  # noqa: F401
        from sklearn.model_selection import HalvingRandomSearchCV

        kwargs["n_candidates"] = kwargs.pop("n_iter")
        search = HalvingRandomSearchCV(pipe, space, factor=3, **kwargs)
    elif method == "CondBayesSearchCV[two_step]":
        sampler = TreeGPSampler(
            seed=seed, acquisition="two_step", signal_variance="leaf", objective_bound=1.0
        )
        search = CondBayesSearchCV(pipe, space, sampler=sampler, **kwargs)
    elif method == "CondBayesSearchCV[tree_default]":  # TreeGPSampler's defaults
        sampler = TreeGPSampler(seed=seed, objective_bound=1.0)
        search = CondBayesSearchCV(pipe, space, sampler=sampler, **kwargs)
    else:
        search = RandomizedSearchCV(pipe, space, **kwargs)
    start = time.perf_counter()
    with warnings.catch_warnings(), threadpool_limits(limits=1):
        warnings.simplefilter("ignore", ConvergenceWarning)
        search.fit(X, y)
    elapsed = time.perf_counter() - start
    best = search.best_params_
    results = search.cv_results_
    amounts = results.get("n_resources", [len(X)] * len(results["params"]))
    with warnings.catch_warnings(), threadpool_limits(limits=1):
        warnings.simplefilter("ignore", ConvergenceWarning)
        chosen = cross_val_score(clone(pipe).set_params(**best), X, y, cv=cv).mean()
    return {
        "method": method,
        "seed": seed,
        "n_iter": n_iter,
        "best_score": float(search.best_score_),
        "chosen_full_cv": float(chosen),
        "full_fits": float(np.sum(amounts) / len(X)),
        "best_params": {k: repr(v) for k, v in best.items()},
        "seconds": elapsed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="number of seeds")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--n-iter", type=int, default=40)
    parser.add_argument("--cv", type=int, default=3)
    parser.add_argument("--dataset", choices=DATASETS, default="digits")
    parser.add_argument("--jobs", type=int, default=1, help="searches run side by side")
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=[METHODS[0], METHODS[2]])
    parser.add_argument("--out", default=None, help="write every run to this JSON file")
    parser.add_argument(
        "--resource-n-iter", type=int, default=None, help="candidates of the halving searches"
    )
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")

    methods = args.methods
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    cases = [(m, s) for s in seeds for m in methods]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        n_iters = {m: args.n_iter for m in methods}
        n_iters.update({m: args.resource_n_iter or args.n_iter for m in RESOURCE_METHODS})
        futures = [pool.submit(run_one, m, s, n_iters[m], args.cv, args.dataset) for m, s in cases]
        runs = [f.result() for f in futures]

    command = "python " + " ".join(shlex.quote(a) for a in sys.argv)
    print(f"Command: `{command}`\n")
    print(
        f"{args.dataset} ({len(load(args.dataset)[0])} samples), "
        f"scaler x {{SVC, LogisticRegression, KNeighbors}}, "
        f"n_iter={args.n_iter}, cv={args.cv}, n_jobs=1, seeds {seeds[0]}-{seeds[-1]}\n"
    )
    print(
        "| search | n_iter | median best CV accuracy | chosen, full CV: median | per seed "
        "| full fits (median) | median time (s) |"
    )
    print("|---|---|---|---|---|---|---|")
    for method in methods:
        mine = [r for r in runs if r["method"] == method]
        scores = [r["best_score"] for r in mine]
        chosen = [r["chosen_full_cv"] for r in mine]
        per_seed = ", ".join(f"{s:.4f}" for s in chosen)
        print(
            f"| {method} | {mine[0]['n_iter']} | {np.median(scores):.4f} | "
            f"**{np.median(chosen):.4f}** | {per_seed} | "
            f"{np.median([r['full_fits'] for r in mine]):.1f} | "
            f"{np.median([r['seconds'] for r in mine]):.1f} |"
        )
    reference = {r["seed"]: r["chosen_full_cv"] for r in runs if r["method"] == methods[-1]}
    for method in methods[:-1]:
        mine = {r["seed"]: r["chosen_full_cv"] for r in runs if r["method"] == method}
        wins = sum(mine[s] > reference[s] for s in mine)
        ties = sum(mine[s] == reference[s] for s in mine)
        print(
            f"\n{method} higher than {methods[-1]} on {wins} of {len(mine)} seeds ({ties} ties)."
        )
    if args.out:
        with open(args.out, "w") as handle:
            json.dump({"command": command, "runs": runs}, handle, indent=1)


if __name__ == "__main__":
    main()
