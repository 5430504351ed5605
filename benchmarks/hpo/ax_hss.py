"""Ax's hierarchical-search-space surrogate problems (MNIST, Fashion-MNIST, CIFAR-10) as tasks.

The ``ax-platform`` wheel ships, under ``ax/benchmark/problems/surrogate/hss/``, three
benchmark problems (``mnist_surrogate.py``, ``fashion_mnist_surrogate.py``,
``cifar10_surrogate.py``) whose oracle is a set of four XGBoost regressors
(``checkpoints/<problem>_xgb_model_<i>.json``), one per combination of the two boolean flags
that switch an optional hyperparameter on. Ax's ``HierarchicalSearchSpaceSurrogate``
(``base.py``) picks the model from the flags ``(flag_a, flag_b)`` in the order
``(F, F), (F, T), (T, F), (T, T)`` (index ``2 * flag_a + flag_b``) and feeds it the *active*
non-flag parameters only, in declaration order, as raw values: no log transform, booleans as
0 / 1, inactive parameters left out (not filled). The prediction is a test accuracy to
maximise; it is not clipped (on MNIST it exceeds 1 in part of the space; Ax's own recorded
optimum there is 1.079). The trees were fitted on grid data and split exactly at some upper
bounds (``softplus_beta`` at 2.0, ``lr`` at 0.1, ``weight_decay`` at 1e-2): on CIFAR-10 Ax's
recorded optimum (0.8204) needs ``softplus_beta == 2.0`` exactly; any beta below it gives at
most 0.7973, so a sampler drawing from the open interval never reaches it.

This module re-declares the three spaces in the :mod:`benchmarks.hpo.spec` format and calls the
shipped checkpoints directly with xgboost (loaded once, lazily). Ax itself is never imported:
only its installed files are located. Ax's factories default to ``num_trials=50`` (the problems
are not in Ax's registry), so the tasks use 50 trials.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Any

from benchmarks.hpo.spec import Config, Param, Task, check_space

_INSTALL_HINT = "pip install ax-platform xgboost"
_HSS_DIR = Path("benchmark", "problems", "surrogate", "hss")
#: Ax's ``get_*_surrogate_benchmark(num_trials=50)`` default.
N_TRIALS = 50

_BOOL = (False, True)

_MNIST_SPACE = (
    Param("lr", "float", 1e-5, 1.0, log=True),
    Param("use_dropout", "categorical", choices=_BOOL),
    Param("dropout", "float", 0.1, 0.5, parent="use_dropout", values=(True,)),
    Param("use_weight_decay", "categorical", choices=_BOOL),
    Param("weight_decay", "float", 1e-5, 1.0, log=True, parent="use_weight_decay", values=(True,)),
)

# Fashion-MNIST and CIFAR-10 share one space (a residual network); only the models differ.
_RESNET_SPACE = (
    Param("lr", "float", 1e-5, 1e-1, log=True),
    Param("two-more-blocks", "categorical", choices=_BOOL),
    Param("use_softplus_activation", "categorical", choices=_BOOL),
    Param("softplus_beta", "float", 0.5, 2.0, parent="use_softplus_activation", values=(True,)),
    Param("use_weight_decay", "categorical", choices=_BOOL),
    Param(
        "weight_decay", "float", 1e-8, 1e-2, log=True, parent="use_weight_decay", values=(True,)
    ),
)

#: name -> (space, checkpoint prefix, the two flags selecting the model, source file in Ax).
_PROBLEMS: dict[str, tuple[tuple[Param, ...], str, tuple[str, str], str]] = {
    "mnist": (_MNIST_SPACE, "mnist", ("use_dropout", "use_weight_decay"), "mnist_surrogate.py"),
    "fashion_mnist": (
        _RESNET_SPACE,
        "fashion_mnist",
        ("use_softplus_activation", "use_weight_decay"),
        "fashion_mnist_surrogate.py",
    ),
    "cifar10": (
        _RESNET_SPACE,
        "cifar10",
        ("use_softplus_activation", "use_weight_decay"),
        "cifar10_surrogate.py",
    ),
}

#: Ax's recorded (optimal, Sobol baseline) accuracies, for the descriptions.
_AX_REFERENCE = {
    "mnist": (1.0790634, 0.9837410950660705),
    "fashion_mnist": (0.9225427, 0.9153884375095367),
    "cifar10": (0.82043886, 0.7594003677368164),
}


def _checkpoint_dir() -> Path:
    """The wheel's checkpoint folder, found without importing Ax."""
    spec = importlib.util.find_spec("ax")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"the Ax HSS surrogate tasks need Ax's checkpoints: {_INSTALL_HINT}")
    for root in spec.submodule_search_locations:
        folder = Path(root, _HSS_DIR, "checkpoints")
        if folder.is_dir():
            return folder
    raise ImportError(
        f"this ax-platform has no {_HSS_DIR.as_posix()}/checkpoints; install one that ships "
        f"them (1.x): {_INSTALL_HINT}"
    )


def _require_packages() -> None:
    missing = [m for m in ("ax", "xgboost") if importlib.util.find_spec(m) is None]
    if missing:
        raise ImportError(f"the Ax HSS surrogate tasks need {', '.join(missing)}: {_INSTALL_HINT}")


@functools.cache
def _load_models(prefix: str) -> tuple[Any, ...]:
    """The four boosters of one problem, in Ax's flag order (loaded once)."""
    try:
        import xgboost
    except ImportError as err:
        raise ImportError(f"the Ax HSS surrogate tasks need xgboost: {_INSTALL_HINT}") from err
    folder = _checkpoint_dir()
    boosters = []
    for i in range(4):
        booster = xgboost.Booster()
        booster.load_model(str(folder / f"{prefix}_xgb_model_{i}.json"))
        booster.set_param({"nthread": 1})  # one row at a time: threads only cost
        boosters.append(booster)
    return tuple(boosters)


def _features(space: tuple[Param, ...], flags: tuple[str, str], config: Config) -> list[float]:
    """Ax's feature vector: the active non-flag parameters in declaration order, raw values."""
    row = []
    for p in space:
        if p.name in flags:
            continue
        if p.parent is not None and config.get(p.parent) not in p.values:
            continue  # inactive: Ax leaves it out of the row (it selects a smaller model)
        row.append(float(config[p.name]))  # bool -> 0.0 / 1.0, as numpy does in Ax
    return row


def _make_evaluate(name: str):
    space, prefix, flags, _ = _PROBLEMS[name]

    def evaluate(config: Config) -> tuple[float, dict[str, float]]:
        import numpy as np

        index = 2 * bool(config[flags[0]]) + bool(config[flags[1]])
        row = np.asarray([_features(space, flags, config)], dtype=np.float64)
        accuracy = float(_load_models(prefix)[index].inplace_predict(row)[0])
        return 1.0 - accuracy, {"accuracy": accuracy}

    evaluate.__name__ = f"ax_hss_{name}"
    return evaluate


def _describe(name: str) -> str:
    space, _, flags, source = _PROBLEMS[name]
    optimum, baseline = _AX_REFERENCE[name]
    return (
        f"Ax HSS surrogate {name}: XGBoost oracle of the test accuracy from the ax-platform "
        f"wheel, ax/{_HSS_DIR.as_posix()}/{source} (checkpoints/{_PROBLEMS[name][1]}"
        f"_xgb_model_0..3.json, one per ({flags[0]}, {flags[1]})). Minimises 1 - predicted "
        f"accuracy; Ax records an optimal accuracy {optimum:.4f} and a Sobol baseline "
        f"{baseline:.4f}."
    )


def ax_hss_tasks() -> dict[str, Task]:
    """The three Ax HSS surrogate tasks; an ImportError naming the install if Ax or xgboost is
    missing (checked here, without importing them; the models load on the first evaluation)."""
    _require_packages()
    tasks = {}
    for name, (space, *_rest) in _PROBLEMS.items():
        check_space(space)
        tasks[f"ax_hss_{name}"] = Task(
            name=f"ax_hss_{name}",
            space=space,
            evaluate=_make_evaluate(name),
            n_trials=N_TRIALS,
            description=_describe(name),
            value_name="1 - surrogate accuracy",
        )
    return tasks
