"""Optuna's own third-party sampler suite, run for every sampler of the library.

Fast settings (few candidates, one restart, two fantasies of the running trials the suite leaves
pending) keep the ~130 tests per sampler to a few minutes; they exercise the same code paths as
the defaults.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from optuna.samplers import BaseSampler

pytest.importorskip(
    "optuna.testing.pytest_samplers", reason="Optuna's third-party sampler suite (newer Optuna)"
)
from optuna.testing.pytest_samplers import (  # noqa: E402
    BasicSamplerTestCase,
    MultiObjectiveSamplerTestCase,
    RelativeSamplerTestCase,
)

from condsamplers import (
    ArcGPSampler,
    BNGPSampler,
    BOHAMIANNSampler,
    DNGOSampler,
    TreeGPSampler,
)

#: Acquisition settings every sampler takes; BOHAMIANN has no ``n_restarts``.
FAST_ACQUISITION = dict(n_candidates=64, n_local_search=2, n_fantasies=2)
FAST = dict(FAST_ACQUISITION, n_restarts=0)
#: Test-sized networks and budgets for the neural samplers.
FAST_DNGO = dict(FAST, hidden_sizes=(10, 10), n_epochs=30, n_epochs_warm=5, max_updates=60)
FAST_BOHAMIANN = dict(
    FAST_ACQUISITION,
    hidden_sizes=(10, 10),
    n_burn_in=50,
    n_burn_in_warm=20,
    n_samples=5,
    keep_every=5,
)

SAMPLER_FACTORIES: dict[str, Callable[[], BaseSampler]] = {
    # n_startup_trials=1 so the suite's few-trial tests reach the model.
    "arcgp": lambda: ArcGPSampler(seed=0, n_startup_trials=1, **FAST),
    "bngp": lambda: BNGPSampler(seed=0, n_startup_trials=1, **FAST),
    "treegp": lambda: TreeGPSampler(seed=0, n_startup_trials=1, **FAST),
    "dngo": lambda: DNGOSampler(seed=0, n_startup_trials=1, **FAST_DNGO),
    "bohamiann": lambda: BOHAMIANNSampler(seed=0, n_startup_trials=1, **FAST_BOHAMIANN),
}


class _EverySampler:
    @pytest.fixture(params=sorted(SAMPLER_FACTORIES))
    def sampler(self, request: pytest.FixtureRequest) -> Callable[[], BaseSampler]:
        return SAMPLER_FACTORIES[request.param]


class TestBasic(_EverySampler, BasicSamplerTestCase):
    pass


class TestRelative(_EverySampler, RelativeSamplerTestCase):
    pass


class TestMultiObjective(_EverySampler, MultiObjectiveSamplerTestCase):
    pass
