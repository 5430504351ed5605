"""Replay a recorded run of the real-HPO suite up to trial ``k`` and print, per estimator
family, what the tree GP's acquisition says there: the family's best path EI (the first step of
the two-step EI) and best EI over its paths, with the path posterior (level mean and sd) at the
path-EI maximiser. A diagnostic of the path choice (docs/benchmarks.md, the CASH section)::

    python -m benchmarks.hpo.replay --runs benchmarks/results/hpo --task cash_diabetes \\
        --sampler treegp --seed 5 --after 12 --output-warping tail

The values are in the model's units (standardised, after the output warping).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import collections  # noqa: E402
import dataclasses  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import optuna  # noqa: E402
import torch  # noqa: E402

from benchmarks.hpo.cash_space import classifier_space, regressor_space  # noqa: E402
from benchmarks.hpo.runner import load_records  # noqa: E402
from benchmarks.hpo.spec import suggest  # noqa: E402
from condsamplers import TreeGPSampler  # noqa: E402
from condsamplers.acquisition import make_log_mc_ei, make_log_mc_path_ei  # noqa: E402
from condsamplers.optimize import _scored_candidates  # noqa: E402
from condsamplers.pipeline import step_fantasies  # noqa: E402
from condsamplers.warping import warp_outputs  # noqa: E402

Row = tuple[str, int, float, float, float, float, float]


def replay_study(record: dict[str, Any], k: int) -> optuna.Study:
    """A study holding the first ``k`` trials of ``record`` (its configurations and values)."""
    space = regressor_space() if record["task"] == "cash_diabetes" else classifier_space()
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    for config, value in zip(record["configs"][:k], record["values"][:k], strict=True):
        study.enqueue_trial(config)
        study.optimize(lambda t, v=value: (suggest(t, space), v)[1], n_trials=1)
    return study


def family_scores(study: optuna.Study, family_param: str, seed: int, warping: str) -> list[Row]:
    """``(family, trials, best value, best log path EI, best log EI, level mean, level sd)``
    per family, best path EI first."""
    sampler = TreeGPSampler(seed=seed, output_warping=warping)
    trial = study.ask()
    complete = study.get_trials(states=(optuna.trial.TrialState.COMPLETE,))
    space = sampler.conditional_space(study)
    data = sampler._observations(study, space, complete, trial)
    assert data is not None
    data = dataclasses.replace(data, y=warp_outputs(data.y, warping))
    model = sampler._make_model(seed, None)
    model.fit(data.X, data.active, data.y, space.features)
    settings = sampler._settings
    fantasies = step_fantasies(
        model, data, data.feasible(), settings.n_fantasies, np.random.default_rng(0)
    )
    path_ei, full_ei = make_log_mc_path_ei(fantasies), make_log_mc_ei(fantasies, None)
    node = next(n for n in space.nodes if n.name == family_param)
    rng = np.random.default_rng(0)
    scores: dict[str, list[float]] = collections.defaultdict(lambda: [-np.inf, -np.inf, 0, 0])
    for path in space.paths() or []:
        branch = dict(path.branch_values).get(node.key)
        if branch is None:
            continue
        family = str(node.distribution.choices[int(np.ravel(branch)[0])])
        X, a, v = _scored_candidates(path_ei, space, rng, settings, None, [path])
        _, _, v_full = _scored_candidates(full_ei, space, rng, settings, None, [path])
        i = int(np.argmax(v))
        entry = scores[family]
        if v[i] > entry[0]:
            with torch.no_grad():
                mean, var = model.path_posterior(
                    torch.as_tensor(X[i : i + 1]), torch.as_tensor(a[i : i + 1])
                )
            entry[0], entry[2], entry[3] = float(v[i]), float(mean[0]), float(var[0]) ** 0.5
        entry[1] = max(entry[1], float(v_full.max()))
    rows = []
    for family, (pe, fe, level, sd) in scores.items():
        values = [t.value for t in complete if t.params.get(family_param) == family]
        rows.append((family, len(values), min(values, default=np.nan), pe, fe, level, sd))
    return sorted(rows, key=lambda row: -row[3])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, required=True, help="a folder with runs.jsonl(.gz)")
    parser.add_argument("--task", required=True)
    parser.add_argument("--sampler", required=True, help="the label of the recorded run")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--after", type=int, required=True, help="replay this many trials")
    parser.add_argument("--output-warping", default="none")
    args = parser.parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    record = next(
        r
        for r in load_records(args.runs)
        if (r["task"], r["sampler"], r["seed"]) == (args.task, args.sampler, args.seed)
    )
    family_param = "regressor" if args.task == "cash_diabetes" else "classifier"
    study = replay_study(record, args.after)
    rows = family_scores(study, family_param, args.seed, args.output_warping)
    print(
        f"{args.task} {args.sampler} seed {args.seed} after {args.after} trials "
        f"(output_warping={args.output_warping!r}); the record's next family: "
        f"{record['configs'][args.after][family_param]}"
    )
    print(
        f"{'family':15s} {'n':>3s} {'best':>8s} {'log pathEI':>10s} {'log EI':>8s}"
        "  level mean / sd"
    )
    for family, n, best, pe, fe, level, sd in rows:
        print(f"{family:15s} {n:3d} {best:8.4f} {pe:10.2f} {fe:8.2f}  {level:.3f} / {sd:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
