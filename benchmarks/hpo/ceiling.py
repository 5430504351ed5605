"""How far a median over 10 runs can go on a CASH task: random configurations drawn and scored,
the task's best score levels, and the chance that a run reaches each of them.

A bar such as "a better median best value than random search over 10 seeds" is only as
reachable as the task's best levels are common. This draws ``--draws`` configurations at
random, scores them with the suite's cached evaluation (:mod:`benchmarks.hpo.cash`: the same
value a sampler's trial gets), and prints:

* the best value levels found (distinct values, best first) with their share ``q`` among the
  draws and the pairings (preprocessing + estimator) that hold them;
* per group (``--group pairing``, or ``dict`` for the list-of-dicts translation), its draws,
  its best value and its share at each level;
* per level ``t``, with the group that has the largest share ``q_g`` at ``t`` (among groups
  with :data:`MIN_GROUP_DRAWS` draws), the chance that one run of ``--trials`` trials reaches
  ``t`` for three searches: random search, ``1 - (1 - q)^n`` (eq. 1); a run that draws at
  random until its first draw in that group and then draws only inside it (an oracle that
  recognises the group when it sees it and knows nothing within it; :func:`find_then_stay`,
  eq. 3); the chance that random draws find that group (or the level outside it) at all, eq. 3
  with ``q_g = 1``: a bound for any search that finds the group by drawing at random, however
  well it searches inside it; and a run that draws inside that group from its first trial,
  ``1 - (1 - q_g)^n``.
  For each, the chance that at least 5 and at least 6 of 10 independent runs reach ``t``,
  ``P(Binomial(10, p) >= k)`` (eq. 2): a median of 10 runs is the mean of the 5th and 6th
  best, so it is at ``t`` or better when 6 runs reach ``t``, and better than the next level
  when 5 do and the others reach that level.

The shares are estimates from the draws (their binomial standard error is printed). Draws:
``--sampling suite`` draws as the suite's ``random`` peer does (Optuna's ``RandomSampler`` over
the define-by-run space: each categorical uniform, so each estimator family has 1/8);
``--sampling dicts`` as ``RandomizedSearchCV`` does over the list of 104 dicts of
``benchmarks.hpo.search_cv_cash --space patterns`` (a dict uniform, then its parameters),
scored the same way (the error, ``1 - accuracy``). Each draw is a line of
``DIR/draws_<task>_<sampling>.jsonl``; a second run with the same ``--out`` reads them back
and adds draws up to ``--draws``. Example::

    python -m benchmarks.hpo.ceiling --task cash_wine --sampling suite --draws 1500 \\
        --trials 60 --out DIR
    python -m benchmarks.hpo.ceiling --task cash_iris --sampling dicts --group dict \\
        --draws 1500 --trials 30 --out DIR
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import warnings  # noqa: E402
from collections import defaultdict  # noqa: E402
from collections.abc import Iterator, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from benchmarks.hpo import pairings  # noqa: E402
from benchmarks.hpo.spec import Config, Task, suggest  # noqa: E402
from benchmarks.hpo.tasks import CASH_TASKS, get_task  # noqa: E402
from benchmarks.records import load_records  # noqa: E402

SAMPLINGS = ("suite", "dicts")
GROUPS = ("pairing", "dict")
#: Levels reported, best first.
N_LEVELS = 3
#: Runs whose median the bar is on.
N_RUNS = 10
#: A group takes part in the oracle column only with this many draws (its share is an estimate).
MIN_GROUP_DRAWS = 20


def reach_probability(share: float, trials: int) -> float:
    """Chance that at least one of ``trials`` independent draws, each at a level with
    probability ``share``, reaches it: ``1 - (1 - q)^n`` (eq. 1)."""
    return 1.0 - (1.0 - share) ** trials


def at_least(k: int, runs: int, p: float) -> float:
    """``P(Binomial(runs, p) >= k)`` (eq. 2)."""
    return sum(math.comb(runs, j) * p**j * (1.0 - p) ** (runs - j) for j in range(k, runs + 1))


def suite_draws(
    task: Task, seed: int, fixed: Config | None = None
) -> Iterator[tuple[Config, str]]:
    """Configurations as the suite's ``random`` peer draws them (Optuna's RandomSampler), with
    the parameters of ``fixed`` held at their values (a pairing, for ``--within``)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=seed))
    while True:
        if fixed:
            study.enqueue_trial(fixed)
        trial = study.ask()
        config = suggest(trial, task.space)
        study.tell(trial, 0.0)
        yield config, ""


def dict_draws(task: Task, seed: int) -> Iterator[tuple[Config, str]]:
    """Configurations as ``RandomizedSearchCV`` draws them from the list of dicts of
    ``search_cv_cash --space patterns``, with the index of the dict drawn."""
    from sklearn.model_selection import ParameterSampler

    from benchmarks.hpo.search_cv_cash import active_config, dict_index, search_space

    dicts = search_space("patterns")
    dict_of = dict_index(dicts)
    for params in ParameterSampler(dicts, 10**9, random_state=seed):
        yield active_config(params), str(dict_of(params))


def pairing(config: Config) -> str:
    return " + ".join(pairings.pairing(config))


def draw(
    task: Task, sampling: str, n: int, path: Path, seed: int = 0, fixed: Config | None = None
) -> list[dict[str, Any]]:
    """The first ``n`` draws (``fixed`` held, suite sampling only), scored; those in ``path``
    are read back, the rest evaluated and appended (the same seed gives the same sequence)."""
    from sklearn.exceptions import ConvergenceWarning

    from benchmarks.hpo.cash import config_key

    done = load_records(path)
    source = suite_draws(task, seed, fixed) if sampling == "suite" else dict_draws(task, seed)
    rows = []
    with path.open("a") as out, warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", UserWarning)
        for i, (config, index) in zip(range(n), source, strict=False):
            if i < len(done):
                assert done[i]["config"] == json.loads(config_key(config)), "draws changed"
                rows.append(done[i])
                continue
            value, _ = task.evaluate(config)
            row = {"config": json.loads(config_key(config)), "dict": index, "value": value}
            out.write(json.dumps(row) + "\n")
            out.flush()
            rows.append(row)
    return rows


def levels(values: Sequence[float]) -> list[float]:
    """The best :data:`N_LEVELS` distinct values, best (lowest) first."""
    return sorted(set(values))[:N_LEVELS]


def find_then_stay(group_share: float, share: float, outside: float, trials: int) -> float:
    """Chance that a run reaches a level when it draws at random until its first draw in the
    group (a share ``g`` of the draws), then draws only inside it, where the level has share
    ``q_g``; outside the group the level has share ``r``. One minus the chance of missing::

        sum_k ((1 - g)(1 - r))^(k-1) g (1 - q_g)^(n - k + 1) + ((1 - g)(1 - r))^n

    over ``k = 1..n``, the draw ``k`` the first in the group (eq. 3)."""
    before = (1.0 - group_share) * (1.0 - outside)
    miss = before**trials + sum(
        before ** (k - 1) * group_share * (1.0 - share) ** (trials - k + 1)
        for k in range(1, trials + 1)
    )
    return 1.0 - miss


def _shares(values: Sequence[float], level: float) -> float:
    return sum(v <= level for v in values) / len(values)


def _level_rows(rows: list[dict[str, Any]], key: Any, tops: list[float]) -> list[str]:
    n = len(rows)
    out = [
        "| level | draws at it or better | share q (s.e.) | groups holding it |",
        "|---|---|---|---|",
    ]
    for t in tops:
        holders: dict[str, int] = defaultdict(int)
        for r in rows:
            if r["value"] <= t:
                holders[key(r)] += 1
        hits = sum(holders.values())
        q = hits / n
        named = ", ".join(
            f"{g} ({c})" for g, c in sorted(holders.items(), key=lambda x: -x[1])[:4]
        )
        out.append(f"| {t:.5g} | {hits} | {q:.4f} ({math.sqrt(q * (1 - q) / n):.4f}) | {named} |")
    return out


def _group_rows(groups: dict[str, list[float]], group: str, tops: list[float]) -> list[str]:
    out = [
        f"| {group} | draws | best | " + " | ".join(f"share <= {t:.4g}" for t in tops) + " |",
        "|---|---|---|" + "---|" * len(tops),
    ]
    for g in sorted(groups, key=lambda g: (min(groups[g]), -len(groups[g])))[:10]:
        shares = " | ".join(f"{_shares(groups[g], t):.3f}" for t in tops)
        out.append(f"| {g} | {len(groups[g])} | {min(groups[g]):.5g} | {shares} |")
    return out


def _chance_rows(
    rows: list[dict[str, Any]],
    groups: dict[str, list[float]],
    tops: list[float],
    trials: int,
    searcher: str,
) -> list[str]:
    n = len(rows)
    runs = f"P(>= 5 of {N_RUNS}), P(>= 6 of {N_RUNS})"
    out = [
        f"| level | best group (draws; share at the level) | {searcher}: one run; {runs} "
        f"| find the group, then stay: one run; {runs} "
        f"| find the group at all: one run; {runs} "
        f"| in the group from the start: one run; {runs} |",
        "|---|---|---|---|---|---|",
    ]
    sized = [g for g in groups if len(groups[g]) >= MIN_GROUP_DRAWS] or list(groups)
    for t in tops:
        best = max(sized, key=lambda g: _shares(groups[g], t))
        q_g = _shares(groups[best], t)
        g = len(groups[best]) / n
        q = _shares([r["value"] for r in rows], t)
        r = (q - g * q_g) / (1.0 - g) if g < 1 else 0.0
        chances = (
            reach_probability(q, trials),
            find_then_stay(g, q_g, r, trials),
            find_then_stay(g, 1.0, r, trials),
            reach_probability(q_g, trials),
        )
        cells = " | ".join(
            f"{p:.3f}; {at_least(5, N_RUNS, p):.3f}, {at_least(6, N_RUNS, p):.3f}" for p in chances
        )
        out.append(f"| {t:.5g} | {best} ({len(groups[best])}; {q_g:.3f}) | {cells} |")
    return out


def report(
    rows: list[dict[str, Any]], group: str, trials: int, searcher: str = "random search"
) -> str:
    """The three tables of the module docstring, in Markdown; ``searcher`` names the draws'
    search in the last table."""
    if group == "dict":
        key = lambda r: f"dict {r['dict']}: {pairing(r['config'])}"  # noqa: E731
    else:
        key = lambda r: pairing(r["config"])  # noqa: E731
    groups: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        groups[key(r)].append(r["value"])
    tops = levels([r["value"] for r in rows])
    out = [f"{len(rows)} draws; levels are values, lower is better; runs of {trials} trials", ""]
    out += _level_rows(rows, key, tops) + [""] + _group_rows(groups, group, tops) + [""]
    out += _chance_rows(rows, groups, tops, trials, searcher)
    return "\n".join(out) + "\n"


def _pairing_params(
    task: Task, within: str, sampling: str, parser: argparse.ArgumentParser
) -> Config:
    """``--within pca+sgd`` as the two root parameters' values, checked against the space."""
    if sampling != "suite":
        parser.error("--within needs --sampling suite")
    roots = [p for p in task.space if p.parent is None and p.kind == "categorical"]
    values = within.split("+")
    if len(values) != len(roots) or any(
        v not in p.choices for v, p in zip(values, roots, strict=False)
    ):
        choices = " + ".join(f"{p.name} in {p.choices}" for p in roots)
        parser.error(f"--within {within!r}: give one value per root parameter ({choices})")
    return {p.name: v for p, v in zip(roots, values, strict=True)}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", choices=CASH_TASKS, required=True)
    parser.add_argument("--sampling", choices=SAMPLINGS, default="suite")
    parser.add_argument("--group", choices=GROUPS, default="pairing")
    parser.add_argument("--draws", type=int, default=1500)
    parser.add_argument("--trials", type=int, default=60, help="trials of one run")
    parser.add_argument(
        "--within",
        metavar="PREPROCESSING+ESTIMATOR",
        help="draw inside one pairing only (suite sampling), e.g. pca+sgd",
    )
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    args = parser.parse_args(argv)
    if args.draws < 1 or args.trials < 1:
        parser.error("--draws and --trials must be at least 1")
    if args.sampling == "dicts" and args.task == "cash_diabetes":
        parser.error("--sampling dicts is the classification search of search_cv_cash")
    if args.group == "dict" and args.sampling != "dicts":
        parser.error("--group dict needs --sampling dicts")
    task = get_task(args.task)
    fixed, name, searcher = None, f"{args.task}_{args.sampling}", "random search"
    if args.within is not None:
        fixed = _pairing_params(task, args.within, args.sampling, parser)
        name, searcher = f"{name}_within_{args.within}", f"random draws inside {args.within}"
    args.out.mkdir(parents=True, exist_ok=True)
    rows = draw(task, args.sampling, args.draws, args.out / f"draws_{name}.jsonl", fixed=fixed)
    text = report(rows, args.group, args.trials, searcher)
    (args.out / f"ceiling_{name}_{args.group}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
