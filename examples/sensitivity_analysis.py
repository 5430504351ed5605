"""Sobol' sensitivity analysis of a conditional study (Zhang et al., sec. 4.2 and Figure 4).

The objective is the branching-and-nested function of Zhang, Hung, Lin and Liu (eq. 7,
Table 2), maximised::

    f(x1, x2, z, v) = v/2 exp(-(x1 - c1)^2) + 2/v exp(-(x1 - c2)^2 / 10) + 1 / (x2^2 + 1) + z

with shared ``x1 in [-10, 10]`` and ``x2 in [-5, 5]``, a branching ``z in {1, 2}`` and a nested
``v`` whose range depends on the branch (``1..3`` if ``z = 1``, ``1..2`` if ``z = 2``); the
centres are ``c1 = 3 - v/2, c2 = 5 - v`` if ``z = 1`` and ``c1 = v - 1, c2 = 7 - v`` if
``z = 2``. A BNGPSampler runs 60 trials; then the GP fitted to them is analysed:

- first-order Sobol' indices of every parameter, nested ``v`` included, through
  ``optuna.importance.get_param_importances`` with ``SobolImportanceEvaluator``;
- Optuna's own evaluators for contrast: fANOVA only sees the parameters present with the same
  distribution in every trial, so it has no ``v``; Optuna 5's default, PED-ANOVA, does see
  ``v`` but measures something else (how a parameter's distribution in the best trials differs
  from its distribution overall), not a share of the objective's variance;
- the strongest two-factor interactions, and main-effect and interaction plots (PNG).

Usage (the plots need matplotlib: ``pip install condsamplers[plot]``)::

    python examples/sensitivity_analysis.py [--out DIR] [--n-trials 60]

``docs/importance.md`` shows and discusses its output.
"""

from __future__ import annotations

import argparse
import math
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import optuna  # noqa: E402

from condsamplers import BNGPSampler  # noqa: E402
from condsamplers.importance import SobolImportanceEvaluator, sobol_indices  # noqa: E402
from condsamplers.visualization import plot_interaction, plot_main_effects  # noqa: E402

#: Values of the nested ``v`` on each branch ``z`` (Zhang et al. Table 2).
V_RANGE = {1: (1, 3), 2: (1, 2)}


def centres(z: int, v: int) -> tuple[float, float]:
    """``(c1, c2)`` of Zhang et al. Table 2."""
    if z == 1:
        return 3.0 - 0.5 * v, 5.0 - v
    return -1.0 + v, 7.0 - v


def objective(trial: optuna.Trial) -> float:
    """Eq. 7 of Zhang et al., define-by-run: ``v`` is suggested with a branch-dependent range."""
    x1 = trial.suggest_float("x1", -10.0, 10.0)
    x2 = trial.suggest_float("x2", -5.0, 5.0)
    z = trial.suggest_categorical("z", [1, 2])
    v = trial.suggest_int("v", *V_RANGE[z])
    c1, c2 = centres(z, v)
    return (
        v / 2.0 * math.exp(-((x1 - c1) ** 2))
        + 2.0 / v * math.exp(-((x1 - c2) ** 2) / 10.0)
        + 1.0 / (x2**2 + 1.0)
        + z
    )


def show(title: str, importances: dict[str, float]) -> None:
    print(title)
    for name, value in importances.items():
        print(f"  {name:>3}: {value:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="folder for the PNG plots")
    parser.add_argument("--n-trials", type=int, default=60)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="condsamplers_sobol_"))
    out.mkdir(parents=True, exist_ok=True)

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize", sampler=BNGPSampler(seed=0))
    study.optimize(objective, n_trials=args.n_trials)
    print(f"best value {study.best_value:.4f} at {study.best_params}")
    print("(optimum 5.0 at x1=6, x2=0, z=2, v=1)")

    evaluator = SobolImportanceEvaluator(seed=0)
    show(
        "Sobol' main effects (normalised), SobolImportanceEvaluator:",
        optuna.importance.get_param_importances(study, evaluator=evaluator),
    )
    show(
        "Optuna's default evaluator (PED-ANOVA in Optuna 5), for contrast:",
        optuna.importance.get_param_importances(study),
    )
    show(
        "Optuna's fANOVA (intersection search space only):",
        optuna.importance.get_param_importances(
            study, evaluator=optuna.importance.FanovaImportanceEvaluator(seed=0)
        ),
    )

    result = sobol_indices(study, seed=0)
    print(f"Var f = {result.variance:.4f} (GP posterior mean over the latent inputs)")
    print("raw indices: main S_j, total T_j")
    for name in result.names:
        main, total = result.main_effects[name], result.total_effects[name]
        print(f"  {name:>3}: S = {main:.3f}  T = {total:.3f}")
    print("strongest two-factor interactions S_jk:")
    for (a, b), value in result.strongest_interactions(3):
        print(f"  {a} x {b}: {value:.3f}")

    axes = plot_main_effects(result)
    paths = [out / "main_effects.png"]
    axes[0].figure.savefig(paths[-1], dpi=110)
    for a, b in [("x1", "z"), ("x1", "v")]:
        ax = plot_interaction(result, a, b)
        paths.append(out / f"interaction_{a}_{b}.png")
        ax.figure.tight_layout()
        ax.figure.savefig(paths[-1], dpi=110)
    plt.close("all")
    for path in paths:
        print(f"saved {path}")


if __name__ == "__main__":
    main()
