"""How closely the surrogates fit Branin where it matters: near its three minima (0.398).

For ``n`` uniform random points of Branin's box, each model is fitted to the values (and to
their log, what ``objective_bound=0.0`` makes the samplers model) and judged on held-out
points where Branin is below 2: the error of its mean there, the standard deviation it
predicts there, and the noise standard deviation it fitted (the function has none). An
optimiser can only tell the minima apart when that error is small against the gap between
values near them (0.4 to 2). Models: ``BOHAMIANNRegressor()``, ``DNGORegressor()`` and an
exact GP (``CondGPRegressor(kernel="matern")``), all with their defaults::

    python benchmarks/bnn_fit.py [--n 50 200] [--seeds 2]
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

if __package__ in (None, ""):  # run as a script, ``python benchmarks/bnn_fit.py``
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.problems import branin_function  # noqa: E402

LOW, HIGH = np.array([-5.0, 0.0]), np.array([10.0, 15.0])
#: Held-out points count as "near the minima" below this value.
NEAR = 2.0


def branin_points(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` uniform points of the box and their Branin values."""
    X = LOW + (HIGH - LOW) * np.random.default_rng(seed).random((n, 2))
    return X, branin_function(X[:, 0], X[:, 1])


def near_minima(n_draws: int = 20_000) -> tuple[np.ndarray, np.ndarray]:
    """Held-out points (a fixed stream) where Branin is below :data:`NEAR`."""
    X, y = branin_points(n_draws, seed=12345)
    return X[y < NEAR], y[y < NEAR]


def models() -> dict[str, Callable[[int], object]]:
    from condsamplers.sklearn import BOHAMIANNRegressor, CondGPRegressor, DNGORegressor

    return {
        "BOHAMIANN": lambda seed: BOHAMIANNRegressor(random_state=seed),
        "DNGO": lambda seed: DNGORegressor(random_state=seed),
        "GP (Matern)": lambda seed: CondGPRegressor(kernel="matern", random_state=seed),
    }


def fit_figures(make: Callable[[int], object], n: int, seed: int, log: bool) -> dict[str, float]:
    """``rmse``, ``std`` (mean predicted) near the minima and the fitted ``noise`` standard
    deviation, all in the units of the values (of their log with ``log``)."""
    X, y = branin_points(n, seed)
    X_test, y_test = near_minima()
    target, truth = (np.log(y), np.log(y_test)) if log else (y, y_test)
    model = make(seed).fit(X, target)
    mean, std = model.predict(X_test, return_std=True)
    noise = model.model_.noise_variance()
    spread = float(model.y_spread_)
    return {
        "rmse": float(np.sqrt(np.mean((mean - truth) ** 2))),
        "std": float(np.mean(std)),
        "noise": math.sqrt(noise) * spread if noise is not None else math.nan,  # none: "nan"
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", nargs="+", type=int, default=[50, 200])
    parser.add_argument("--seeds", type=int, default=2)
    args = parser.parse_args(argv)
    print(f"near the minima: {len(near_minima()[1])} held-out points with Branin < {NEAR}")
    print("| model | values | n | error of the mean | predicted std | fitted noise std |")
    print("|---|---|---|---|---|---|")
    for name, make in models().items():
        for log in (False, True):
            for n in args.n:
                runs = [fit_figures(make, n, seed, log) for seed in range(args.seeds)]
                row = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
                values = "log" if log else "values"
                print(
                    f"| {name} | {values} | {n} | {row['rmse']:.3g} | {row['std']:.3g} "
                    f"| {row['noise']:.3g} |"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
