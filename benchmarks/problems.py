"""Synthetic benchmark problems with conditional (define-by-run, tree-structured) search spaces.

Every problem is a :class:`Problem`: a define-by-run ``suggest`` function that draws the
parameters of one trial with ``trial.suggest_*`` and a noise-free ``value`` function of the
resulting parameter dict.  ``Problem.objective`` is what a study optimises (the true value plus,
for noisy problems, reproducible Gaussian noise); ``Problem.true_value`` is the noise-free value
used for regret.  ``Problem.expected_tree`` describes the exact conditional structure as
``{param: None}`` for a root parameter or ``{param: (parent, sorted tuple of activating parent
values)}`` for a conditional one.

Problems: ``jenatton_small``, ``jenatton_small_offcentre``, ``jenatton_large``,
``branching_nested`` and ``net_depth``, and the unconditional ``branin`` and ``hartmann6`` of
the DNGO / BOHAMIANN papers; see the docstrings of their builder functions.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import optuna

Params = Mapping[str, Any]
TreeEntry = tuple[str, tuple[Any, ...]] | None
SuggestFn = Callable[[optuna.Trial], dict[str, Any]]
ValueFn = Callable[[Params], float]


@dataclass(frozen=True)
class Problem:
    """A benchmark problem over a conditional search space.

    Attributes:
        name: Identifier used on the command line and in result files.
        direction: ``"minimize"`` or ``"maximize"``.
        n_trials: Evaluation budget of one benchmark run.
        optimum: Exact optimal (noise-free) objective value.
        optimal_params: A parameter dict (active parameters only) attaining ``optimum``.
        expected_tree: Exact conditional structure, see the module docstring.
        suggest: Define-by-run sampler of one configuration; returns the active parameters.
        value: Noise-free objective as a function of a trial's parameter dict.
        n_startup_trials: Random start-up trials given to model-based samplers.
        noise_std: Standard deviation of the Gaussian observation noise (0: noise-free).
        noise_seed: Seed mixed with the trial number to draw the observation noise.
        description: One-line summary for reports.
    """

    name: str
    direction: str
    n_trials: int
    optimum: float
    optimal_params: dict[str, Any]
    expected_tree: dict[str, TreeEntry]
    suggest: SuggestFn = field(repr=False)
    value: ValueFn = field(repr=False)
    n_startup_trials: int = 10
    noise_std: float = 0.0
    noise_seed: int = 0
    description: str = ""

    def objective(self, trial: optuna.Trial) -> float:
        """Suggest one configuration and return its (possibly noisy) observed value.

        The noise is ``noise_std * N(0, 1)`` from ``numpy.random.default_rng([noise_seed,
        trial.number])``, so reruns with the same ``noise_seed`` observe identical noise.
        """
        params = self.suggest(trial)
        observed = self.value(params)
        if self.noise_std > 0.0:
            rng = np.random.default_rng([self.noise_seed, trial.number])
            observed += self.noise_std * float(rng.standard_normal())
        return float(observed)

    def true_value(self, params: Params) -> float:
        """Return the noise-free objective value of a trial's parameters."""
        return float(self.value(params))

    def regret(self, true_value: float) -> float:
        """Return the simple regret of a configuration with the given true value."""
        if self.direction == "minimize":
            return true_value - self.optimum
        return self.optimum - true_value

    def is_better(self, a: float, b: float) -> bool:
        """Return whether observed value ``a`` is strictly better than ``b``."""
        return a < b if self.direction == "minimize" else a > b

    def with_noise_seed(self, noise_seed: int) -> Problem:
        """Return a copy of the problem whose observation noise uses ``noise_seed``."""
        return dataclasses.replace(self, noise_seed=noise_seed)


# --------------------------------------------------------------------------------------------
# Jenatton et al. (2017), sec. 4.1: small balanced tree with shared variables r8, r9.
# --------------------------------------------------------------------------------------------

_SMALL_LEAVES = ("x4", "x5", "x6", "x7")
_SMALL_SHIFTS = {"x4": 0.1, "x5": 0.2, "x6": 0.3, "x7": 0.4}
_SMALL_CENTRES = {"x4": 0.0, "x5": 0.0, "x6": 0.0, "x7": 0.0}
_OFFCENTRE_CENTRES = {"x4": 0.37, "x5": -0.61, "x6": 0.52, "x7": -0.28}
_SMALL_TREE: dict[str, TreeEntry] = {
    "x1": None,
    "x2": ("x1", (0,)),
    "r8": ("x1", (0,)),
    "x3": ("x1", (1,)),
    "r9": ("x1", (1,)),
    "x4": ("x2", (0,)),
    "x5": ("x2", (1,)),
    "x6": ("x3", (0,)),
    "x7": ("x3", (1,)),
}


def _suggest_jenatton_small(trial: optuna.Trial) -> dict[str, Any]:
    """Define-by-run sampling of the small Jenatton tree (x1 -> x2/x3 -> leaf)."""
    x1 = trial.suggest_categorical("x1", [0, 1])
    if x1 == 0:
        x2 = trial.suggest_categorical("x2", [0, 1])
        trial.suggest_float("r8", 0.0, 1.0)
        leaf = "x4" if x2 == 0 else "x5"
    else:
        x3 = trial.suggest_categorical("x3", [0, 1])
        trial.suggest_float("r9", 0.0, 1.0)
        leaf = "x6" if x3 == 0 else "x7"
    trial.suggest_float(leaf, -1.0, 1.0)
    return dict(trial.params)


def _small_leaf_and_shared(params: Params) -> tuple[str, float]:
    """Return the active leaf variable name and the active shared variable's value."""
    if params["x1"] == 0:
        return ("x4" if params["x2"] == 0 else "x5"), float(params["r8"])
    return ("x6" if params["x3"] == 0 else "x7"), float(params["r9"])


def _make_small_value(centres: Mapping[str, float]) -> ValueFn:
    """Build f = (leaf - c_leaf)^2 + shift_leaf + shared for the small Jenatton tree."""

    def value(params: Params) -> float:
        leaf, shared = _small_leaf_and_shared(params)
        return (float(params[leaf]) - centres[leaf]) ** 2 + _SMALL_SHIFTS[leaf] + shared

    return value


def jenatton_small() -> Problem:
    """Small balanced tree with shared variables (Jenatton et al. 2017, sec. 4.1, Fig. 1 bottom).

    ``x1 in {0, 1}``; ``x1 = 0`` activates ``x2 in {0, 1}`` and the shared ``r8 in [0, 1]``;
    ``x1 = 1`` activates ``x3 in {0, 1}`` and ``r9 in [0, 1]``.  The leaf variable is ``x4``
    (``x2 = 0``), ``x5`` (``x2 = 1``), ``x6`` (``x3 = 0``) or ``x7`` (``x3 = 1``), in ``[-1, 1]``.
    ``f = leaf^2 + {0.1, 0.2, 0.3, 0.4}[leaf] + (r8 if x1 = 0 else r9)``, minimised;
    optimum 0.1 at ``x1 = x2 = 0, x4 = 0, r8 = 0``.
    """
    return Problem(
        name="jenatton_small",
        direction="minimize",
        n_trials=50,
        optimum=0.1,
        optimal_params={"x1": 0, "x2": 0, "r8": 0.0, "x4": 0.0},
        expected_tree=dict(_SMALL_TREE),
        suggest=_suggest_jenatton_small,
        value=_make_small_value(_SMALL_CENTRES),
        description="Jenatton et al. (2017) small tree with shared r8/r9, leaf minima at 0",
    )


def jenatton_small_offcentre() -> Problem:
    """:func:`jenatton_small` with off-centre leaf minima.

    ``f = (leaf - c_leaf)^2 + shift_leaf + shared`` with ``c = (0.37, -0.61, 0.52, -0.28)``
    for ``x4..x7``, so proposing the centre of ``[-1, 1]`` does not find the optimum.
    Optimum 0.1 at ``x1 = x2 = 0, x4 = 0.37, r8 = 0``.
    """
    return Problem(
        name="jenatton_small_offcentre",
        direction="minimize",
        n_trials=50,
        optimum=0.1,
        optimal_params={"x1": 0, "x2": 0, "r8": 0.0, "x4": _OFFCENTRE_CENTRES["x4"]},
        expected_tree=dict(_SMALL_TREE),
        suggest=_suggest_jenatton_small,
        value=_make_small_value(_OFFCENTRE_CENTRES),
        description="jenatton_small with leaf minima at (0.37, -0.61, 0.52, -0.28)",
    )


# --------------------------------------------------------------------------------------------
# Jenatton et al. (2017), sec. 4.1: depth-3 balanced binary tree, 8 leaves, 2 shared variables.
# --------------------------------------------------------------------------------------------


def _large_names(b1: int, b2: int, b3: int) -> tuple[str, str, str, str]:
    """Return (level-2 node, shared variable, level-3 node, leaf) names for a path b1 b2 b3."""
    level2 = f"x{2 + b1}"
    shared = "r_left" if b1 == 0 else "r_right"
    level3 = f"x{4 + 2 * b1 + b2}"
    leaf = f"l{1 + 4 * b1 + 2 * b2 + b3}"
    return level2, shared, level3, leaf


def _large_tree() -> dict[str, TreeEntry]:
    """Exact conditional structure of :func:`jenatton_large`."""
    tree: dict[str, TreeEntry] = {"x1": None}
    for b1 in (0, 1):
        for b2 in (0, 1):
            for b3 in (0, 1):
                level2, shared, level3, leaf = _large_names(b1, b2, b3)
                tree[level2] = ("x1", (b1,))
                tree[shared] = ("x1", (b1,))
                tree[level3] = (level2, (b2,))
                tree[leaf] = (level3, (b3,))
    return tree


def _suggest_jenatton_large(trial: optuna.Trial) -> dict[str, Any]:
    """Define-by-run sampling of the depth-3 Jenatton tree."""
    b1 = trial.suggest_categorical("x1", [0, 1])
    level2, shared, _, _ = _large_names(b1, 0, 0)
    b2 = trial.suggest_categorical(level2, [0, 1])
    trial.suggest_float(shared, 0.0, 1.0)
    _, _, level3, _ = _large_names(b1, b2, 0)
    b3 = trial.suggest_categorical(level3, [0, 1])
    trial.suggest_float(_large_names(b1, b2, b3)[3], -1.0, 1.0)
    return dict(trial.params)


def _value_jenatton_large(params: Params) -> float:
    """f = leaf^2 + 0.1 * leaf_index + shared, leaves l1..l8 indexed 1..8 left to right."""
    b1 = int(params["x1"])
    level2, shared, _, _ = _large_names(b1, 0, 0)
    b2 = int(params[level2])
    _, _, level3, _ = _large_names(b1, b2, 0)
    b3 = int(params[level3])
    leaf = _large_names(b1, b2, b3)[3]
    shift = 0.1 * (1 + 4 * b1 + 2 * b2 + b3)
    return float(params[leaf]) ** 2 + shift + float(params[shared])


def jenatton_large() -> Problem:
    """Depth-3 balanced binary tree with two shared variables (Jenatton et al. 2017, sec. 4.1).

    Inner binary nodes: root ``x1``; ``x1 = 0 -> x2`` (+ shared ``r_left in [0, 1]``),
    ``x1 = 1 -> x3`` (+ shared ``r_right in [0, 1]``); ``x2 = 0 -> x4``, ``x2 = 1 -> x5``,
    ``x3 = 0 -> x6``, ``x3 = 1 -> x7``.  The 8 leaves ``x4 = 0, x4 = 1, x5 = 0, ..., x7 = 1``
    each activate their own float ``l1..l8 in [-1, 1]`` (left to right) with shifts
    ``0.1..0.8``.  ``f = leaf^2 + shift + (r_left or r_right)``, minimised; optimum 0.1 at
    ``x1 = x2 = x4 = 0, l1 = 0, r_left = 0``.
    """
    return Problem(
        name="jenatton_large",
        direction="minimize",
        n_trials=100,
        optimum=0.1,
        optimal_params={"x1": 0, "x2": 0, "r_left": 0.0, "x4": 0, "l1": 0.0},
        expected_tree=_large_tree(),
        suggest=_suggest_jenatton_large,
        value=_value_jenatton_large,
        description="Jenatton et al. (2017) depth-3 tree, 7 binary nodes, 8 leaves, 2 shared",
    )


# --------------------------------------------------------------------------------------------
# Zhang, Hung, Lin, Liu: branching and nested synthetic function (eq. 7, Table 2).
# --------------------------------------------------------------------------------------------

BRANCHING_NESTED_CHOICES: dict[int, tuple[int, ...]] = {1: (1, 2, 3), 2: (1, 2)}


def branching_nested_centres(z: int, v: int) -> tuple[float, float]:
    """Return ``(c1, c2)`` of Zhang et al. Table 2 for branch ``z`` and nested level ``v``."""
    if z == 1:
        return 3.0 - 0.5 * v, 5.0 - v
    return -1.0 + v, 7.0 - v


def branching_nested_function(x1: Any, x2: Any, z: int, v: int) -> Any:
    """Noise-free eq. 7 of Zhang et al.; ``x1`` and ``x2`` may be floats or numpy arrays."""
    c1, c2 = branching_nested_centres(z, v)
    return (
        v / 2.0 * np.exp(-((x1 - c1) ** 2))
        + 2.0 / v * np.exp(-((x1 - c2) ** 2) / 10.0)
        + 1.0 / (x2**2 + 1.0)
        + z
    )


def _suggest_branching_nested(trial: optuna.Trial) -> dict[str, Any]:
    """Define-by-run sampling: shared x1, x2; branching z; nested v with branch-specific range."""
    trial.suggest_float("x1", -10.0, 10.0)
    trial.suggest_float("x2", -5.0, 5.0)
    z = trial.suggest_categorical("z", [1, 2])
    choices = BRANCHING_NESTED_CHOICES[z]
    trial.suggest_int("v", choices[0], choices[-1])
    return dict(trial.params)


def _value_branching_nested(params: Params) -> float:
    """Noise-free eq. 7 evaluated at a trial's parameters."""
    x1, x2 = float(params["x1"]), float(params["x2"])
    return float(branching_nested_function(x1, x2, int(params["z"]), int(params["v"])))


def branching_nested() -> Problem:
    """Branching-and-nested synthetic function of Zhang et al. (eq. 7, Table 2), maximised.

    Implemented exactly as printed::

        f(x1, x2, z, v) = v/2 * exp(-(x1 - c1)^2) + 2/v * exp(-(x1 - c2)^2 / 10)
                          + 1 / (x2^2 + 1) + z

    with ``x1 in [-10, 10]``, ``x2 in [-5, 5]``, branching ``z in {1, 2}`` (categorical) and
    nested ``v in {1, 2, 3}`` under ``z = 1``, ``v in {1, 2}`` under ``z = 2``, and (Table 2)
    ``z = 1: c1 = 3 - 0.5 v, c2 = 5 - v``; ``z = 2: c1 = -1 + v, c2 = 7 - v``.  The PDF
    extraction drops the minus signs of Table 2 ("30.5 x v", "1+v"); the LaTeX source in the
    same text reads ``3-0.5\\times v`` and ``-1+v``, and this is the reading under which the
    stated optimum holds.

    Optimum: ``f(6, 0, 2, 1) = 0.5 exp(-36) + 2 + 1 + 2 = 5 + 1.2e-16``, i.e. 5.0 in float64
    (the exact supremum, at ``x1 = 6 - 3.5e-15``, exceeds 5 by ~1e-16).  The best values of the
    other four branches are 4.200 (z=1, v=1), 3.912 (1, 2), 4.151 (1, 3), 4.209 (2, 2), checked
    by grid search in ``tests/test_benchmark_problems.py``.

    Optuna forbids one parameter name with two different ``CategoricalDistribution`` choice
    sets in a study ("CategoricalDistribution does not support dynamic value space"), so the
    nested ``v`` is ``suggest_int("v", 1, 3)`` under ``z = 1`` and ``suggest_int("v", 1, 2)``
    under ``z = 2``: the same name with branch-dependent ranges.  ``expected_tree`` records
    ``v`` as nested in ``z`` for both values, ``("z", (1, 2))``.

    Observed values add ``N(0, 0.2^2)`` noise seeded by ``(noise_seed, trial.number)``.
    """
    return Problem(
        name="branching_nested",
        direction="maximize",
        n_trials=60,
        optimum=5.0,
        optimal_params={"x1": 6.0, "x2": 0.0, "z": 2, "v": 1},
        expected_tree={"x1": None, "x2": None, "z": None, "v": ("z", (1, 2))},
        suggest=_suggest_branching_nested,
        value=_value_branching_nested,
        noise_std=0.2,
        description="Zhang et al. eq. 7 branching/nested function, maximised, N(0, 0.2^2) noise",
    )


# --------------------------------------------------------------------------------------------
# Synthetic network-depth problem in the spirit of Swersky et al.'s MNIST experiment.
# --------------------------------------------------------------------------------------------

NET_MAX_DEPTH = 5
NET_BEST_DEPTH = 3
NET_BASE_ERROR = 0.05
NET_BEST_LOG10_LR = -2.5


def net_best_units(layer: int) -> int:
    """Optimal width of hidden layer ``layer`` (1-based): 256, 128, 64, 32, 16."""
    return 2 ** (9 - layer)


def net_best_dropout(units: Any) -> Any:
    """Optimal dropout for a layer of the given width: ``0.1 + 0.08 * log2(units / 16)``.

    Accepts floats or numpy arrays (as does :func:`net_layer_penalty`).
    """
    return 0.1 + 0.08 * np.log2(units / 16.0)


def net_layer_penalty(layer: int, units: Any, dropout: Any) -> Any:
    """Non-negative cost of one layer, zero at its best width and matching dropout."""
    width_term = 0.01 * (np.log2(units) - np.log2(net_best_units(layer))) ** 2
    dropout_term = 0.3 * (dropout - net_best_dropout(units)) ** 2
    return width_term + dropout_term


def _suggest_net_depth(trial: optuna.Trial) -> dict[str, Any]:
    """Define-by-run sampling: depth, then units/dropout per layer, then the global lr."""
    depth = trial.suggest_int("depth", 0, NET_MAX_DEPTH)
    for i in range(1, depth + 1):
        trial.suggest_int(f"units_{i}", 16, 512, log=True)
        trial.suggest_float(f"dropout_{i}", 0.0, 0.9)
    trial.suggest_float("lr", 1e-5, 1e-1, log=True)
    return dict(trial.params)


def _value_net_depth(params: Params) -> float:
    """Synthetic validation error; see :func:`net_depth`."""
    depth = int(params["depth"])
    error = NET_BASE_ERROR + 0.03 * (depth - NET_BEST_DEPTH) ** 2
    for i in range(1, depth + 1):
        error += net_layer_penalty(i, float(params[f"units_{i}"]), float(params[f"dropout_{i}"]))
    error += 0.04 * (math.log10(float(params["lr"])) - NET_BEST_LOG10_LR) ** 2
    return float(error)


def _net_tree() -> dict[str, TreeEntry]:
    """Exact conditional structure of :func:`net_depth`."""
    tree: dict[str, TreeEntry] = {"depth": None, "lr": None}
    for i in range(1, NET_MAX_DEPTH + 1):
        active = tuple(range(i, NET_MAX_DEPTH + 1))
        tree[f"units_{i}"] = ("depth", active)
        tree[f"dropout_{i}"] = ("depth", active)
    return tree


def _net_optimal_params() -> dict[str, Any]:
    """The unique optimum of :func:`net_depth`."""
    params: dict[str, Any] = {"depth": NET_BEST_DEPTH, "lr": 10.0**NET_BEST_LOG10_LR}
    for i in range(1, NET_BEST_DEPTH + 1):
        params[f"units_{i}"] = net_best_units(i)
        params[f"dropout_{i}"] = float(net_best_dropout(net_best_units(i)))
    return params


def net_depth() -> Problem:
    """Synthetic "validation error" of an MLP with a conditional number of layers, minimised.

    Search space: ``depth in {0..5}`` (int); for ``i = 1..depth``: ``units_i in [16, 512]``
    (int, log) and ``dropout_i in [0, 0.9]``; global ``lr in [1e-5, 1e-1]`` (log).  Formula::

        err = 0.05 + 0.03 (depth - 3)^2
              + sum_{i=1..depth} [ 0.01 (log2 units_i - (9 - i))^2
                                   + 0.3 (dropout_i - (0.1 + 0.08 log2(units_i / 16)))^2 ]
              + 0.04 (log10 lr + 2.5)^2

    Layers share structure: the best width halves with depth (256, 128, 64, 32, 16) and the
    best dropout grows with the layer's actual width, the same function for every layer.
    Every term is >= 0 and the depth term is minimised at 3, so the unique optimum is
    ``err = 0.05`` at ``depth = 3``, ``units = (256, 128, 64)``, ``dropout = (0.42, 0.34,
    0.26)``, ``lr = 10^-2.5``.  Noise-free.
    """
    return Problem(
        name="net_depth",
        direction="minimize",
        n_trials=100,
        optimum=NET_BASE_ERROR,
        optimal_params=_net_optimal_params(),
        expected_tree=_net_tree(),
        suggest=_suggest_net_depth,
        value=_value_net_depth,
        description="synthetic MLP error: depth 0-5, per-layer units/dropout, global lr",
    )


# --------------------------------------------------------------------------------------------
# Classic unconditional benchmarks of DNGO (Snoek et al. 2015, Table 1) and BOHAMIANN
# (Springenberg et al. 2016, supplement Table 3): Branin and Hartmann6, minimised, 200 trials.
# --------------------------------------------------------------------------------------------

BRANIN_OPTIMUM = 5.0 / (4.0 * math.pi)  # 0.397887...
HARTMANN6_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
HARTMANN6_A = np.array(
    [
        [10.0, 3.0, 17.0, 3.5, 1.7, 8.0],
        [0.05, 10.0, 17.0, 0.1, 8.0, 14.0],
        [3.0, 3.5, 1.7, 10.0, 17.0, 8.0],
        [17.0, 8.0, 0.05, 10.0, 0.1, 14.0],
    ]
)
HARTMANN6_P = 1e-4 * np.array(
    [
        [1312.0, 1696.0, 5569.0, 124.0, 8283.0, 5886.0],
        [2329.0, 4135.0, 8307.0, 3736.0, 1004.0, 9991.0],
        [2348.0, 1451.0, 3522.0, 2883.0, 3047.0, 6650.0],
        [4047.0, 8828.0, 8732.0, 5743.0, 1091.0, 381.0],
    ]
)
#: The minimiser of Hartmann6, refined from the usual 6-digit one by L-BFGS-B (value -3.32237).
HARTMANN6_ARGMIN = (
    0.20168950968761765,
    0.15001069413863433,
    0.47687396963094986,
    0.27533242916768874,
    0.31165161370991157,
    0.6573005333899428,
)


def branin_function(x1: Any, x2: Any) -> Any:
    """Branin-Hoo: ``a (x2 - b x1^2 + c x1 - r)^2 + s (1 - t) cos(x1) + s`` with the usual
    constants; three global minima of ``5 / (4 pi)``. Floats or numpy arrays."""
    b = 5.1 / (4.0 * math.pi**2)
    c = 5.0 / math.pi
    t = 1.0 / (8.0 * math.pi)
    return (x2 - b * x1**2 + c * x1 - 6.0) ** 2 + 10.0 * (1.0 - t) * np.cos(x1) + 10.0


def _suggest_branin(trial: optuna.Trial) -> dict[str, Any]:
    trial.suggest_float("x1", -5.0, 10.0)
    trial.suggest_float("x2", 0.0, 15.0)
    return dict(trial.params)


def _value_branin(params: Params) -> float:
    return float(branin_function(float(params["x1"]), float(params["x2"])))


def branin() -> Problem:
    """Branin-Hoo on ``x1 in [-5, 10]``, ``x2 in [0, 15]``, minimised (no conditional structure).

    Optimum ``5 / (4 pi) = 0.397887`` at ``(-pi, 12.275)``, ``(pi, 2.275)`` and
    ``(3 pi, 2.475)``. Noise-free. DNGO's Table 1 (Snoek et al. 2015): 0.398 after 200 trials.
    """
    return Problem(
        name="branin",
        direction="minimize",
        n_trials=200,
        optimum=BRANIN_OPTIMUM,
        optimal_params={"x1": math.pi, "x2": 2.275},
        expected_tree={"x1": None, "x2": None},
        suggest=_suggest_branin,
        value=_value_branin,
        description="Branin-Hoo, 2 continuous parameters, minimised (optimum 0.397887)",
    )


def hartmann6_function(x: Any) -> Any:
    """Hartmann 6-d: ``-sum_i alpha_i exp(-sum_j A_ij (x_j - P_ij)^2)``; ``x`` of shape
    ``(..., 6)``."""
    x = np.asarray(x, dtype=float)
    distances = ((x[..., None, :] - HARTMANN6_P) ** 2 * HARTMANN6_A).sum(-1)
    return -(HARTMANN6_ALPHA * np.exp(-distances)).sum(-1)


def suggest_unit_floats(trial: optuna.Trial, n: int) -> dict[str, Any]:
    """``x1`` to ``x<n>``, each a float in ``[0, 1]``."""
    for j in range(n):
        trial.suggest_float(f"x{j + 1}", 0.0, 1.0)
    return dict(trial.params)


def _suggest_hartmann6(trial: optuna.Trial) -> dict[str, Any]:
    return suggest_unit_floats(trial, 6)


def _value_hartmann6(params: Params) -> float:
    return float(hartmann6_function([float(params[f"x{j + 1}"]) for j in range(6)]))


def hartmann6() -> Problem:
    """Hartmann 6-d on ``[0, 1]^6``, minimised (no conditional structure).

    Optimum ``-3.32237`` at ``HARTMANN6_ARGMIN`` (the value there is the stored optimum); a
    local minimum of ``-3.2032`` traps many optimisers. Noise-free. DNGO's Table 1: -3.319
    after 200 trials.
    """
    optimal = {f"x{j + 1}": value for j, value in enumerate(HARTMANN6_ARGMIN)}
    return Problem(
        name="hartmann6",
        direction="minimize",
        n_trials=200,
        optimum=_value_hartmann6(optimal),
        optimal_params=optimal,
        expected_tree={name: None for name in optimal},
        suggest=_suggest_hartmann6,
        value=_value_hartmann6,
        description="Hartmann 6-d, 6 continuous parameters, minimised (optimum -3.32237)",
    )


PROBLEMS: dict[str, Problem] = {
    problem.name: problem
    for problem in (
        jenatton_small(),
        jenatton_small_offcentre(),
        jenatton_large(),
        branching_nested(),
        net_depth(),
        branin(),
        hartmann6(),
    )
}


def get_problem(name: str) -> Problem:
    """Return the problem registered under ``name``."""
    try:
        return PROBLEMS[name]
    except KeyError:
        known = ", ".join(PROBLEMS)
        raise KeyError(f"unknown problem {name!r}; known problems: {known}") from None
