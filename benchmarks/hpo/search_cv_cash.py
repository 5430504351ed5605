"""CondBayesSearchCV against RandomizedSearchCV on the CASH classification tasks, as a new
scikit-learn user would run them.

The estimator is :class:`CashClassifier`, whose parameters are those of
:func:`benchmarks.hpo.cash.classifier_space` (hyperopt-sklearn's any_preprocessing +
any_classifier, 75 parameters) with ``.`` made ``_`` (``svc.C`` -> ``svc_C``); ``fit`` passes
only the parameters active under the space's conditions to :func:`build_pipeline`, so a value
given to an inactive parameter is ignored. Both searches get the same estimator, the same list
of dicts, ``cv=StratifiedKFold(3, shuffle=True, random_state=0)`` (the suite's splits),
``n_iter``, ``random_state=seed``, ``n_jobs=1``, ``refit=False`` (no effect on the candidates
or on ``best_score_``), the default scoring (accuracy) and ``error_score=0.0``: a candidate
whose fit or prediction raises scores accuracy 0 on that fold, the worst value, in both
searches (as the suite's ``evaluate`` scores a failing configuration worst; with
CondBayesSearchCV's default ``np.nan`` it would be told as the worst finite score instead,
while RandomizedSearchCV would rank it last: 0.0 treats both the same; ``--error-score nan``
runs both with their own default, and a run records a non-zero ``error_score``). Where the
suite limits an evaluation's time (breast cancer, digits:
:data:`benchmarks.hpo.cash.TIME_LIMITS`), one fit may take a third of it
(:data:`FIT_TIME_LIMITS`, 20 s; ``CashClassifier(fit_seconds=...)``): a fit past it raises, so
that fold scores ``error_score``, in both searches; a run records its limit, and runs under
another limit are neither reused nor reported together.
CondBayesSearchCV runs with its defaults.

The space as a list of dicts (``--space``); *branching* parameters are those that are the parent
of another (``preprocessing``, ``classifier``, ``svc.kernel``, ``knn.algorithm``, ...):

* ``full``: one dict per combination of values of the branching parameters, each fixed by a
  one-element list (248 dicts);
* ``patterns`` (default): the same conditions exactly, one dict per set of active parameters:
  values of a branching parameter whose children are the same (``knn.algorithm`` auto /
  ball_tree / kd_tree all have ``leaf_size``) share one dict, as a list (104 dicts);
* ``families``: one dict per (preprocessing, classifier) pair (32 dicts); nested parents are
  categorical lists and their children are always included (inert when inactive).

Other parameters: categorical -> the list of choices; float -> ``scipy.stats.uniform`` /
``loguniform``; int -> ``scipy.stats.randint``, or for a log scale :class:`LogUniformInt`
(both searches accept it: see its docstring). RandomizedSearchCV picks a dict uniformly, so the
classifier families are not equally likely in ``full`` / ``patterns`` (a family with more
dicts is drawn more often); in ``families`` they are.

Report (``DIR/search_cv_report.md``): per dataset and method the median ``best_score_``
[q25, q75] over the seeds, and the number of runs that *end on a plateau another branch beats*:
the classifier family of the run's best candidate is not a family that reached the best mean CV
score found by any candidate of any run (of any method) on that dataset, and at least 8 of the
run's last 10 candidates are of its own best family; and the mean number of dicts that the
candidates after the first 10 try and the first 10 did not (:func:`new_dicts`; the first 10 are
CondBayesSearchCV's random startup). Each run is one JSON line of
``DIR/search_cv_runs.jsonl``; a recorded (dataset, method, seed, n_iter, space) is not rerun.

Usage::

    python -m benchmarks.hpo.search_cv_cash --datasets iris wine breast_cancer digits \\
        --seeds 10 --first-seed 0 --n-iter 30 --space patterns --out DIR
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import inspect  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import shlex  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import scipy.stats  # noqa: E402
from optuna.distributions import IntDistribution  # noqa: E402
from sklearn.base import BaseEstimator, ClassifierMixin  # noqa: E402
from sklearn.utils import check_random_state  # noqa: E402

from benchmarks.hpo.cash import DATASETS, TIME_LIMITS, classifier_space, load_dataset  # noqa: E402
from benchmarks.hpo.cash_pipeline import fit_pipeline  # noqa: E402
from benchmarks.hpo.spec import Param, active_params  # noqa: E402
from benchmarks.hpo.time_limit import evaluate_within  # noqa: E402
from benchmarks.records import load_records  # noqa: E402
from condsamplers.sklearn.default_sampler import DEFAULT_SAMPLER_OPTIONS  # noqa: E402

METHODS = ("CondBayesSearchCV", "RandomizedSearchCV")
#: CondBayesSearchCV with another sampler (``--methods "CondBayesSearchCV[two_step]"``):
#: variant -> TreeGPSampler options (``objective_bound=1``, the best accuracy, is added to each)
SAMPLER_VARIANTS: dict[str, dict[str, Any]] = {
    "two_step": {},  # TreeGPSampler's own defaults: two-step path EI with the branch draw
    "two_step_nodraw": {"branch_draw": False},
    "two_step_tpe": {"branch_draw": "tpe"},  # the branches chosen by TPE's rule
    "two_step_nobound": {"objective_bound": None},  # as the suite's tree GP: no bound
    # CondBayesSearchCV's default sampler with one option changed
    "default_tail": {**DEFAULT_SAMPLER_OPTIONS, "output_warping": "tail"},
    "default_shared_variance": {**DEFAULT_SAMPLER_OPTIONS, "signal_variance": "shared"},
    "default_rank": {**DEFAULT_SAMPLER_OPTIONS, "output_warping": "rank"},
    # the default on the CASH spaces (more than MANY_DICTS dicts) before the path patience:
    # a level per dict, no path patience
    "default_dependent": {**DEFAULT_SAMPLER_OPTIONS, "independent": False},
    # the default for 10 dicts or fewer (a GP per dict around one constant); the default on
    # the CASH spaces (more than MANY_DICTS dicts) before the level per dict
    "default_independent": {**DEFAULT_SAMPLER_OPTIONS, "independent": True},
    # path patience (a dict sits out after k candidates without a new best) with a level per
    # dict; default_patience5 has the default's patience on the CASH spaces (MANY_DICTS_PATIENCE)
    "default_patience3": {**DEFAULT_SAMPLER_OPTIONS, "independent": False, "path_patience": 3},
    "default_patience5": {**DEFAULT_SAMPLER_OPTIONS, "independent": False, "path_patience": 5},
}
VARIANT_METHODS = tuple(f"CondBayesSearchCV[{v}]" for v in SAMPLER_VARIANTS)
SPACES = ("full", "patterns", "families")
SPACE: tuple[Param, ...] = classifier_space()
#: space name -> estimator parameter name
IDENT: dict[str, str] = {p.name: p.name.replace(".", "_") for p in SPACE}
assert len(set(IDENT.values())) == len(IDENT), "parameter names collide"
assert all(n.isidentifier() and "__" not in n for n in IDENT.values())


#: dataset -> seconds one fit may take (a third of the suite's limit on a 3-fold evaluation,
#: :data:`benchmarks.hpo.cash.TIME_LIMITS`); a fit past it raises, and the search scores the
#: fold ``error_score``.
FIT_TIME_LIMITS: dict[str, float] = {d: s / 3 for d, s in TIME_LIMITS.items()}


class CashClassifier(ClassifierMixin, BaseEstimator):
    """The CASH pipeline as one estimator: one keyword parameter per parameter of the space,
    default ``None``, and ``fit_seconds`` (default ``None``: no limit), the wall time one fit
    may take before it is stopped and raises ``TimeoutError``. (Mixin first, as scikit-learn
    asks, so its tags mark a classifier.)"""

    def __init__(self, **params: Any) -> None:
        unknown = sorted(set(params) - {*IDENT.values(), "fit_seconds"})
        if unknown:
            raise TypeError(f"CashClassifier got unexpected parameters {unknown}")
        for name in IDENT.values():
            setattr(self, name, params.get(name))
        self.fit_seconds = params.get("fit_seconds")

    def fit(self, X: Any, y: Any) -> CashClassifier:
        config = active_config({n: getattr(self, n) for n in IDENT.values()})
        self.config_ = config
        if self.fit_seconds is None:
            self.pipeline_ = fit_pipeline((config, "classification", X, y))
        else:
            fitted = evaluate_within(
                fit_pipeline, (config, "classification", X, y), self.fit_seconds
            )
            if fitted is None:
                raise TimeoutError(f"CashClassifier: fit ran past fit_seconds={self.fit_seconds}")
            self.pipeline_ = fitted
        self.classes_ = self.pipeline_.classes_
        return self

    def predict(self, X: Any) -> Any:
        return self.pipeline_.predict(X)


def active_config(params: dict[str, Any]) -> dict[str, Any]:
    """The space's configuration (names with ``.``) of the parameters active under ``params``
    (keyword names, :data:`IDENT`), read in suggestion order, so a parent is in it before its
    children; an active parameter that is absent or ``None`` (not one of its choices) raises
    ``ValueError``."""
    config: dict[str, Any] = {}
    for p in SPACE:
        if not active_params((p,), config):
            continue
        value = params.get(IDENT[p.name])
        if value is None and None not in p.choices:
            raise ValueError(f"CashClassifier: {IDENT[p.name]} is active but not set")
        config[p.name] = value
    return config


def dict_index(dicts: list[dict[str, Any]]) -> Callable[[dict[str, Any]], int]:
    """A function from a candidate's parameters to the position in ``dicts`` of the dict it
    came from: the dict with the candidate's parameter names whose one-element lists (the
    values a dict fixes, as ``--space full``'s branching parameters) the candidate has. Every
    translation has exactly one such dict per candidate."""
    by_names: dict[frozenset[str], list[tuple[dict[str, Any], int]]] = {}
    for i, d in enumerate(dicts):
        fixed = {k: v[0] for k, v in d.items() if isinstance(v, list) and len(v) == 1}
        by_names.setdefault(frozenset(d), []).append((fixed, i))
    for group in by_names.values():
        keys = {frozenset(fixed.items()) for fixed, _ in group}
        assert len(keys) == len(group), "two dicts have the same parameters and values"

    def position(params: dict[str, Any]) -> int:
        found = [
            i
            for fixed, i in by_names[frozenset(params)]
            if all(params[k] == v for k, v in fixed.items())
        ]
        assert len(found) == 1, f"{len(found)} dicts hold the candidate {params}"
        return found[0]

    return position


# scikit-learn reads the parameter names from the signature of __init__ (get_params, clone).
_signature = inspect.Signature(
    [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    + [
        inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=None)
        for n in (*IDENT.values(), "fit_seconds")
    ]
)
setattr(CashClassifier.__init__, "__signature__", _signature)  # noqa: B010


class LogUniformInt(IntDistribution):
    """Integers ``low..high`` on a log scale. scipy.stats has no such distribution, and the
    ``(low, high, "log-uniform")`` tuple CondBayesSearchCV reads is, for RandomizedSearchCV,
    a list of three choices (``"log-uniform"`` among them). An Optuna ``IntDistribution``
    (``log=True``) is what CondBayesSearchCV takes as a log-int range; ``rvs`` is what
    RandomizedSearchCV samples: Optuna's log-int prior (log-uniform over
    ``[low - 0.5, high + 0.5]``, rounded)."""

    def __init__(self, low: int, high: int) -> None:
        super().__init__(low, high, log=True)

    def rvs(self, random_state: Any = None) -> int:
        rng = check_random_state(random_state)
        x = math.exp(rng.uniform(math.log(self.low - 0.5), math.log(self.high + 0.5)))
        return int(min(max(round(x), self.low), self.high))


def distribution(p: Param) -> Any:
    """A searched parameter as a RandomizedSearchCV user writes it."""
    if p.kind == "categorical":
        return list(p.choices)
    assert p.low is not None and p.high is not None
    if p.kind == "float":
        if p.log:
            return scipy.stats.loguniform(p.low, p.high)
        return scipy.stats.uniform(p.low, p.high - p.low)
    if p.log:
        return LogUniformInt(int(p.low), int(p.high))
    return scipy.stats.randint(int(p.low), int(p.high) + 1)


def branches(split: set[str]) -> list[tuple[dict[str, Any], list[Param]]]:
    """Every combination of values of the parameters in ``split`` (active ones only), with the
    parameters it includes: a parameter whose parent is in ``split`` when the parent's value
    is one of its ``values``; one whose parent is not, whenever the parent is included."""
    out: list[tuple[dict[str, Any], list[Param]]] = []

    def walk(i: int, combo: dict[str, Any], included: list[Param]) -> None:
        if i == len(SPACE):
            out.append((combo, included))
            return
        p = SPACE[i]
        if p.parent is None:
            on = True
        elif p.parent in split:
            on = p.parent in combo and combo[p.parent] in p.values
        else:
            on = any(q.name == p.parent for q in included)
        if not on:
            walk(i + 1, combo, included)
        elif p.name in split:
            assert p.kind == "categorical", "a branching int would need a dict per value"
            for value in p.choices:
                walk(i + 1, {**combo, p.name: value}, [*included, p])
        else:
            walk(i + 1, combo, [*included, p])

    walk(0, {}, [])
    return out


def search_space(kind: str) -> list[dict[str, Any]]:
    """The list of dicts of translation ``kind`` (see the module docstring)."""
    parents = {p.parent for p in SPACE if p.parent is not None}
    if kind == "families":
        split = {p.name for p in SPACE if p.name in parents and p.parent is None}
    else:
        split = set(parents)
    combos = branches(split)
    if kind != "patterns":
        return [
            {IDENT[p.name]: [c[p.name]] if p.name in c else distribution(p) for p in inc}
            for c, inc in combos
        ]
    groups: dict[tuple[str, ...], list[tuple[dict[str, Any], list[Param]]]] = {}
    for c, inc in combos:
        groups.setdefault(tuple(p.name for p in inc), []).append((c, inc))
    dicts = []
    for group in groups.values():
        inc = group[0][1]
        values = {n: list(dict.fromkeys(c[n] for c, _ in group)) for n in group[0][0]}
        assert math.prod(map(len, values.values())) == len(group), "not a product"
        dicts.append({IDENT[p.name]: values.get(p.name) or distribution(p) for p in inc})
    return dicts


def variant_sampler(method: str, seed: int) -> Any:
    """The sampler of a ``CondBayesSearchCV[<variant>]`` method (:data:`SAMPLER_VARIANTS`)."""
    from condsamplers import TreeGPSampler

    options = SAMPLER_VARIANTS[method.removeprefix("CondBayesSearchCV[").removesuffix("]")]
    return TreeGPSampler(seed=seed, **{"objective_bound": 1.0, **options})


def run_one(
    dataset: str, method: str, seed: int, n_iter: int, space: str, error_score: float = 0.0
) -> dict[str, Any]:
    """One search; its best CV score, every candidate's score and family, the wall time."""
    from sklearn.exceptions import ConvergenceWarning, FitFailedWarning
    from sklearn.model_selection import RandomizedSearchCV, StratifiedKFold
    from threadpoolctl import threadpool_limits

    from condsamplers.sklearn import CondBayesSearchCV

    X, y = load_dataset(dataset)
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    kwargs: dict[str, Any] = dict(
        n_iter=n_iter, cv=cv, n_jobs=1, random_state=seed, refit=False, error_score=error_score
    )
    if method in VARIANT_METHODS:
        kwargs["sampler"] = variant_sampler(method, seed)
    cls = RandomizedSearchCV if method == "RandomizedSearchCV" else CondBayesSearchCV
    fit_seconds = FIT_TIME_LIMITS.get(dataset)
    search = cls(CashClassifier(fit_seconds=fit_seconds), search_space(space), **kwargs)
    start = time.perf_counter()
    with warnings.catch_warnings(), threadpool_limits(limits=1):
        for category in (ConvergenceWarning, FitFailedWarning, UserWarning):
            warnings.simplefilter("ignore", category)
        search.fit(X, y)
    seconds = time.perf_counter() - start
    results = search.cv_results_
    params = results["params"]
    dict_of = dict_index(search_space(space))
    splits = np.array([results[f"split{k}_test_score"] for k in range(3)])
    return {
        "dataset": dataset,
        "method": method,
        "seed": seed,
        "n_iter": n_iter,
        "space": space,
        "fit_seconds": fit_seconds,
        **({} if error_score == 0.0 else {"error_score": error_score}),
        "best_score": float(search.best_score_),
        "best_family": params[search.best_index_]["classifier"],
        "scores": [float(s) for s in results["mean_test_score"]],
        "families": [c["classifier"] for c in params],
        "dicts": [dict_of(c) for c in params],
        "failed": int(np.sum(np.any(failed_folds(splits, error_score), axis=0))),
        "seconds": seconds,
    }


def failed_folds(splits: np.ndarray, error_score: float) -> np.ndarray:
    """Which fold scores are ``error_score`` (a failed fit or prediction; ``NaN`` for NaN)."""
    return np.isnan(splits) if math.isnan(error_score) else splits == error_score


def same_error_score(a: float, b: float) -> bool:
    """Equal error scores, ``NaN`` equal to ``NaN``."""
    return (math.isnan(a) and math.isnan(b)) or a == b


def run_error_score(run: dict[str, Any]) -> float:
    """The ``error_score`` a recorded run was made with (0.0 when not recorded)."""
    return float(run.get("error_score", 0.0))


#: The candidates counted as a search's first ones by :func:`new_dicts`: CondBayesSearchCV's
#: default sampler draws this many at random before its model proposes.
N_FIRST = 10


def plateau(run: dict[str, Any], top: set[str]) -> bool:
    """The run ends on a plateau another branch beats (module docstring)."""
    last = run["families"][-10:]
    return run["best_family"] not in top and sum(f == run["best_family"] for f in last) >= 8


def new_dicts(run: dict[str, Any], first: int = N_FIRST) -> int | None:
    """How many dicts the candidates after the first ``first`` try that none of the first
    ``first`` did (``None`` for a record without the dicts)."""
    dicts = run.get("dicts")
    if dicts is None:
        return None
    return len(set(dicts[first:]) - set(dicts[:first]))


def report(runs: list[dict[str, Any]], datasets: list[str], methods: list[str]) -> str:
    lines = [
        "| dataset | method | runs | median best_score_ [q25, q75] | plateau runs "
        f"| best families (count) | new dicts after the first {N_FIRST} (mean) | median s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    notes = []
    for dataset in datasets:
        mine = [r for r in runs if r["dataset"] == dataset]
        if not mine:
            continue
        pairs = [(s, f) for r in mine for s, f in zip(r["scores"], r["families"], strict=True)]
        best = max(s for s, _ in pairs if not math.isnan(s))  # NaN: a failed candidate
        top = {f for s, f in pairs if s >= best - 1e-12}
        notes.append(f"{dataset}: best mean CV accuracy {best:.4f}, by {', '.join(sorted(top))}")
        for method in methods:
            rs = [r for r in mine if r["method"] == method]
            if not rs:
                continue
            q25, q50, q75 = np.quantile([r["best_score"] for r in rs], [0.25, 0.5, 0.75])
            counts = sorted(
                (
                    (f, sum(r["best_family"] == f for r in rs))
                    for f in {r["best_family"] for r in rs}
                ),
                key=lambda fc: -fc[1],
            )
            fams = ", ".join(f"{f} {c}" for f, c in counts)
            n_plateau = sum(plateau(r, top) for r in rs)
            secs = np.median([r["seconds"] for r in rs])
            counted = [n for n in map(new_dicts, rs) if n is not None]
            new = f"{np.mean(counted):.1f} ({len(counted)} runs)" if counted else "-"
            lines.append(
                f"| {dataset} | {method} | {len(rs)} | **{q50:.4f}** [{q25:.4f}, {q75:.4f}] "
                f"| {n_plateau} | {fams} | {new} | {secs:.1f} |"
            )
    return "\n".join(lines) + "\n\n" + "\n".join(f"- {n}" for n in notes) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = [d for d, (_, kind) in DATASETS.items() if kind == "classification"]
    parser.add_argument("--datasets", nargs="+", choices=names, default=names)
    parser.add_argument("--seeds", type=int, default=10, help="number of seeds")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--n-iter", type=int, default=30)
    parser.add_argument(
        "--methods", nargs="+", choices=METHODS + VARIANT_METHODS, default=list(METHODS)
    )
    parser.add_argument("--space", choices=SPACES, default="patterns")
    parser.add_argument(
        "--error-score",
        type=float,
        default=0.0,
        help="both searches' error_score (default 0.0; 'nan' is the searches' own default)",
    )
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    args = parser.parse_args()

    for kind in SPACES:
        dicts = search_space(kind)
        per_family = {
            f: sum(d["classifier"] == [f] for d in dicts)
            for f in dict.fromkeys(d["classifier"][0] for d in dicts)
        }
        print(f"--space {kind}: {len(dicts)} dicts; per classifier {per_family}")
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "search_cv_runs.jsonl"
    runs = load_records(path)
    done = {
        (r["dataset"], r["method"], r["seed"], r["n_iter"], r["space"], r.get("fit_seconds"))
        for r in runs
        if same_error_score(run_error_score(r), args.error_score)
    }
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    for dataset, seed, method in itertools.product(args.datasets, seeds, args.methods):
        key = (dataset, method, seed, args.n_iter, args.space, FIT_TIME_LIMITS.get(dataset))
        if key in done:
            continue
        run = run_one(dataset, method, seed, args.n_iter, args.space, args.error_score)
        print(
            f"{dataset} {method} seed {seed}: best_score_ {run['best_score']:.4f} "
            f"({run['best_family']}), {run['seconds']:.1f} s",
            flush=True,
        )
        with path.open("a") as handle:
            handle.write(json.dumps(run) + "\n")
        runs.append(run)
    chosen = [
        r
        for r in runs
        if r["dataset"] in args.datasets
        and r["method"] in args.methods
        and r["seed"] in seeds
        and r["n_iter"] == args.n_iter
        and r["space"] == args.space
        and r.get("fit_seconds") == FIT_TIME_LIMITS.get(r["dataset"])
        and same_error_score(run_error_score(r), args.error_score)
    ]
    command = "python -m benchmarks.hpo.search_cv_cash " + " ".join(map(shlex.quote, sys.argv[1:]))
    head = (
        f"Command: `{command}`\n\nCASH classification (any_preprocessing + any_classifier), "
        f"--space {args.space} ({len(search_space(args.space))} dicts), n_iter={args.n_iter}, "
        f"3-fold stratified CV, error_score={args.error_score}, seeds {seeds[0]}-{seeds[-1]}. "
        "Plateau runs: best family not among the dataset's best-score families, and >= 8 of "
        "the last 10 candidates in it.\n\n"
    )
    text = head + report(chosen, args.datasets, args.methods)
    (args.out / "search_cv_report.md").write_text(text)
    print("\n" + text)


if __name__ == "__main__":
    main()
