"""How far apart the proposals of one batch are, with the pending trials seen and ignored.

A two-branch problem (``kind`` a: a bowl in ``x, y`` with its minimum 0 at x = 0.3, y = 0.5;
``kind`` b: ``0.5 + x^2 + 0.1 n``), 12 COMPLETE trials on a grid of both branches, then 5
trials asked one after the other (each suggests its whole configuration before the next is
asked, so the later ones see the earlier ones as pending). The figure is the smallest distance
between two of the 5 proposals (``x`` scaled by its range, ``y`` by 1, ``n`` by 3; infinite
across branches), for each sampler with its *default* settings, aware of the pending trials
and blind to them (a subclass that drops them). ``tests/test_batch_proposals.py`` runs the
same problem with test-sized settings.

Usage::

    python benchmarks/batch_spread.py [--seeds 5] [--fantasies 0 8] [--jobs 2]
        [--samplers DNGOSampler BOHAMIANNSampler]
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import shlex
import sys
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
import optuna

BATCH_SIZE = 5
SAMPLERS = ["ArcGPSampler", "BNGPSampler", "TreeGPSampler", "DNGOSampler", "BOHAMIANNSampler"]


def objective(trial: optuna.Trial) -> float:
    """Two branches; the better one (``kind == "a"``) has its optimum at x = 0.3, y = 0.5."""
    kind = trial.suggest_categorical("kind", ["a", "b"])
    x = trial.suggest_float("x", -1.0, 1.0)
    if kind == "a":
        y = trial.suggest_float("y", 0.0, 1.0)
        return (x - 0.3) ** 2 + (y - 0.5) ** 2
    n = trial.suggest_int("n", 1, 4)
    return 0.5 + x**2 + 0.1 * n


def history(sampler: optuna.samplers.BaseSampler) -> optuna.Study:
    """A study with 12 COMPLETE trials on a grid of both branches."""
    study = optuna.create_study(sampler=sampler)
    for i, x in enumerate(np.linspace(-0.9, 0.9, 4)):
        for y in (0.1, 0.9):
            study.enqueue_trial({"kind": "a", "x": float(x), "y": y})
        study.enqueue_trial({"kind": "b", "x": float(x), "n": 1 + i})
    study.optimize(objective, n_trials=12)
    return study


def smallest_distance(points: list[dict[str, Any]]) -> float:
    """Smallest distance between two of the points (``inf`` across branches)."""

    def distance(p: dict[str, Any], q: dict[str, Any]) -> float:
        if p["kind"] != q["kind"]:
            return math.inf
        other = "y" if p["kind"] == "a" else "n"
        scale = 1.0 if other == "y" else 3.0
        return math.hypot((p["x"] - q["x"]) / 2.0, (p[other] - q[other]) / scale)

    return min(distance(p, q) for p, q in itertools.combinations(points, 2))


def blind(cls: type) -> type:
    """``cls`` blind to running trials: its proposals do not see the pending ones."""

    class Blind(cls):  # type: ignore[valid-type, misc]
        def _observations(self, *args: Any) -> Any:
            data = super()._observations(*args)
            if data is not None:
                data.X_pending = data.X_pending[:0]
                data.active_pending = data.active_pending[:0]
            return data

    return Blind


def batch_params(sampler: optuna.samplers.BaseSampler) -> list[dict[str, Any]]:
    """The params of ``BATCH_SIZE`` trials asked after :func:`history`, none told."""
    study = history(sampler)
    trials = []
    for _ in range(BATCH_SIZE):  # each suggests its whole configuration before the next ask
        trials.append(study.ask())
        objective(trials[-1])
    return [study._storage.get_trial(t._trial_id).params for t in trials]


def run_one(name: str, seed: int, n_fantasies: int, is_blind: bool) -> dict[str, Any]:
    """One batch of sampler ``name`` (defaults, ``seed``): its smallest pairwise distance."""
    import condsamplers

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    cls = getattr(condsamplers, name)
    make = blind(cls) if is_blind else cls
    sampler = make(seed=seed, n_startup_trials=4, n_fantasies=n_fantasies)
    spread = smallest_distance(batch_params(sampler))
    return {
        "sampler": name,
        "seed": seed,
        "n_fantasies": n_fantasies,
        "blind": is_blind,
        "spread": spread,
    }


def conditioning_ratios(distances: tuple[float, ...] = (0.0, 0.03, 0.1, 0.3)) -> None:
    """Print how much conditioning on a pending point lowers each regressor's latent std.

    8 points of the bowl ``(x - 0.3)^2 + (y - 0.5)^2`` (x on a grid of [-0.9, 0.9], y uniform),
    a pending point at the optimum ``(0.3, 0.5)`` believed at the predicted mean
    (``model_.condition_on``), then the std before and after at ``(0.3 + d, 0.5)``.
    """
    from condsamplers.sklearn import CondGPRegressor, DNGORegressor

    rng = np.random.default_rng(0)
    X = np.c_[np.linspace(-0.9, 0.9, 8), rng.uniform(0.0, 1.0, 8)]
    y = (X[:, 0] - 0.3) ** 2 + (X[:, 1] - 0.5) ** 2
    print("\n| regressor | d | std before | std after | before / after |")
    print("|---|---|---|---|---|")
    for regressor in (DNGORegressor(random_state=0), CondGPRegressor(random_state=0)):
        regressor.fit(X, y)
        model = regressor.model_
        X_p, active_p = regressor._encode(np.array([[0.3, 0.5]]))
        mean_p, _ = model.predict(X_p, active_p)
        conditioned = model.condition_on(X_p, active_p, np.asarray(mean_p, dtype=float))
        for d in distances:
            X_q, active_q = regressor._encode(np.array([[0.3 + d, 0.5]]))
            before = math.sqrt(float(model.predict(X_q, active_q)[1][0]))
            after = math.sqrt(float(conditioned.predict(X_q, active_q)[1][0]))
            name = type(regressor).__name__
            print(f"| {name} | {d} | {before:.4f} | {after:.4f} | {before / after:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--fantasies", type=int, nargs="+", default=[0, 8])
    parser.add_argument("--samplers", nargs="+", choices=SAMPLERS, default=SAMPLERS)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    cases = [
        (name, seed, nf, is_blind)
        for name in args.samplers
        for nf in args.fantasies
        for is_blind in (False, True)
        for seed in range(args.seeds)
    ]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        runs = list(pool.map(run_one, *zip(*cases, strict=True)))
    print(f"Command: `python {shlex.join(sys.argv)}`\n")
    print(
        f"Smallest distance between the {BATCH_SIZE} proposals of a batch, seeds 0-"
        f"{args.seeds - 1}\n"
    )
    print(
        "| sampler | n_fantasies | pending seen: per seed | blind: per seed | seeds above 0.05 |"
    )
    print("|---|---|---|---|---|")
    spreads: dict[tuple[str, int, bool], list[float]] = {}
    for run in runs:
        key = (run["sampler"], run["n_fantasies"], run["blind"])
        spreads.setdefault(key, []).append(run["spread"])
    for name in args.samplers:
        for nf in args.fantasies:
            seen, unseen = spreads[name, nf, False], spreads[name, nf, True]
            above = sum(s > 0.05 for s in seen)
            print(
                f"| {name} | {nf} | {', '.join(f'{s:.3f}' for s in seen)} | "
                f"{', '.join(f'{s:.3f}' for s in unseen)} | {above} of {len(seen)} |"
            )
    conditioning_ratios()


if __name__ == "__main__":
    main()
