"""Sampler factories of the synthetic benchmark (``benchmarks/run.py``): the samplers by name,
this library's and its peers (Optuna's TPE, GP and random sampling), and :class:`TimedSampler`,
which clocks only a sampler's own methods."""

from __future__ import annotations

import importlib
import sys
import time
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import optuna
from optuna.distributions import BaseDistribution
from optuna.samplers import BaseSampler
from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

REPO_ROOT = Path(__file__).resolve().parents[1]
#: Fantasies of the "-mc" (Monte-Carlo EI) variants; the "-kb" ones use the kriging believer.
MC_FANTASIES = 8

SamplerFactory = Callable[[int, int], BaseSampler]


# --------------------------------------------------------------------------------------------
# Samplers
# --------------------------------------------------------------------------------------------


def _import_condsamplers() -> ModuleType:
    """Import ``condsamplers``, falling back to the in-tree ``src/`` layout if not installed."""
    try:
        return importlib.import_module("condsamplers")
    except ModuleNotFoundError as exc:
        if exc.name != "condsamplers":
            raise
    src = str(REPO_ROOT / "src")
    if src not in sys.path:
        sys.path.insert(0, src)
    return importlib.import_module("condsamplers")


def condsamplers_factory(class_name: str, **options: Any) -> SamplerFactory:
    """Return a factory building ``condsamplers.<class_name>(seed=, n_startup_trials=,
    **options)``."""

    def factory(seed: int, n_startup_trials: int) -> BaseSampler:
        sampler_cls = getattr(_import_condsamplers(), class_name)
        return sampler_cls(seed=seed, n_startup_trials=n_startup_trials, **options)

    return factory


def _random(seed: int, n_startup_trials: int) -> BaseSampler:
    """Optuna's random sampler (``n_startup_trials`` is irrelevant)."""
    return optuna.samplers.RandomSampler(seed=seed)


def _tpe(seed: int, n_startup_trials: int) -> BaseSampler:
    """Optuna's multivariate TPE with group decomposition for conditional spaces."""
    return optuna.samplers.TPESampler(
        multivariate=True, group=True, seed=seed, n_startup_trials=n_startup_trials
    )


def _gp(seed: int, n_startup_trials: int) -> BaseSampler:
    """Optuna's GP sampler (falls back to random sampling for conditional parameters)."""
    return optuna.samplers.GPSampler(
        seed=seed, n_startup_trials=n_startup_trials, warn_independent_sampling=False
    )


#: Registered, but only run when named: they assume an objective that is never negative.
POSITIVE_OBJECTIVE_SAMPLERS: dict[str, SamplerFactory] = {
    # log scale for a positive objective (Branin, 0.4 to 300): models log(y - 0), since on the
    # raw scale BOHAMIANN fits a large noise and misses the minimum
    "bohamiann-bound0": condsamplers_factory("BOHAMIANNSampler", objective_bound=0.0),
    # ... plus pybnn's noise prior (log-normal, median 1e-6, log-variance 0.01)
    "bohamiann-bound0-pybnn": condsamplers_factory(
        "BOHAMIANNSampler", objective_bound=0.0, noise_prior_median=1e-6, noise_prior_log_var=0.01
    ),
}

# Later samplers are one line each.
SAMPLERS: dict[str, SamplerFactory] = {
    "treegp": condsamplers_factory("TreeGPSampler"),
    "bngp": condsamplers_factory("BNGPSampler"),
    "treegp-joint": condsamplers_factory("TreeGPSampler", acquisition="joint"),
    "treegp-linear": condsamplers_factory("TreeGPSampler", inner_basis="linear"),
    "treegp-linear-joint": condsamplers_factory(
        "TreeGPSampler", inner_basis="linear", acquisition="joint"
    ),
    "treegp-leaf": condsamplers_factory("TreeGPSampler", leaf_inputs="leaf"),
    "treegp-samples": condsamplers_factory("TreeGPSampler", hyperparameter_samples=8),
    "treegp-tail": condsamplers_factory("TreeGPSampler", output_warping="tail"),
    "treegp-rank": condsamplers_factory("TreeGPSampler", output_warping="rank"),
    "treegp-tail-shared": condsamplers_factory(
        "TreeGPSampler", output_warping="tail", offsets="shared"
    ),
    "independent": condsamplers_factory("TreeGPSampler", independent=True, acquisition="joint"),
    "arcgp": condsamplers_factory("ArcGPSampler"),
    "arcgp-kb": condsamplers_factory("ArcGPSampler", n_fantasies=0),
    "arcgp-mc": condsamplers_factory("ArcGPSampler", n_fantasies=MC_FANTASIES),
    "treegp-kb": condsamplers_factory("TreeGPSampler", n_fantasies=0),
    "treegp-mc": condsamplers_factory("TreeGPSampler", n_fantasies=MC_FANTASIES),
    "dngo": condsamplers_factory("DNGOSampler"),
    "bohamiann": condsamplers_factory("BOHAMIANNSampler"),
    **POSITIVE_OBJECTIVE_SAMPLERS,
    "tpe": _tpe,
    "gp": _gp,
    "random": _random,
}


DEFAULT_SAMPLERS = [name for name in SAMPLERS if name not in POSITIVE_OBJECTIVE_SAMPLERS]


def make_sampler(name: str, seed: int, n_startup_trials: int) -> BaseSampler:
    """Build the registered sampler ``name``."""
    return SAMPLERS[name](seed, n_startup_trials)


@contextmanager
def _quiet() -> Iterator[None]:
    """Silence Optuna's info logs and experimental/user warnings inside the block."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        warnings.simplefilter("ignore", UserWarning)
        yield


def sampler_unavailable_reason(name: str) -> str | None:
    """Return why sampler ``name`` cannot be built here, or ``None`` if it can."""
    try:
        with _quiet():
            make_sampler(name, 0, 10)
    except (ImportError, AttributeError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


class TimedSampler(BaseSampler):
    """Delegating sampler that accumulates the inner sampler's wall time per trial number."""

    def __init__(self, inner: BaseSampler) -> None:
        self.inner = inner
        self.times: defaultdict[int, float] = defaultdict(float)

    def __str__(self) -> str:
        return f"TimedSampler({self.inner})"

    @contextmanager
    def _clock(self, number: int) -> Iterator[None]:
        """Add the wall time of the enclosed block to trial ``number``."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.times[number] += time.perf_counter() - start

    def infer_relative_search_space(
        self, study: Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        with self._clock(trial.number):
            return self.inner.infer_relative_search_space(study, trial)

    def sample_relative(
        self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        with self._clock(trial.number):
            return self.inner.sample_relative(study, trial, search_space)

    def sample_independent(
        self,
        study: Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        with self._clock(trial.number):
            return self.inner.sample_independent(study, trial, param_name, param_distribution)

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        with self._clock(trial.number):
            self.inner.before_trial(study, trial)

    def after_trial(
        self,
        study: Study,
        trial: FrozenTrial,
        state: TrialState,
        values: Sequence[float] | None,
    ) -> None:
        with self._clock(trial.number):
            self.inner.after_trial(study, trial, state, values)

    def reseed_rng(self) -> None:
        self.inner.reseed_rng()

    def time_per_trial(self, n_trials: int) -> list[float]:
        """Return the accumulated sampler time of trials ``0..n_trials-1``."""
        return [self.times.get(number, 0.0) for number in range(n_trials)]
