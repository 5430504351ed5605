"""Shared test settings: small torch problems run fastest on one thread on a 2-core machine;
the samplers every behaviour test runs for (fixtures ``sampler_class`` and ``make_sampler``)."""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

from condsamplers import ArcGPSampler, BNGPSampler, TreeGPSampler  # noqa: E402
from condsamplers.samplers.base import ConditionalSampler  # noqa: E402

torch.set_num_threads(1)

#: Fast settings of the behaviour tests: they exercise the same code paths as the defaults.
FAST_SAMPLER_SETTINGS = dict(n_candidates=128, n_local_search=2, n_restarts=0)

SAMPLER_CLASSES: dict[str, type[ConditionalSampler]] = {
    "arcgp": ArcGPSampler,
    "bngp": BNGPSampler,
    "treegp": TreeGPSampler,
}


@pytest.fixture(params=sorted(SAMPLER_CLASSES))
def sampler_class(request: pytest.FixtureRequest) -> type[ConditionalSampler]:
    """Each sampler class of the library in turn."""
    return SAMPLER_CLASSES[request.param]


@pytest.fixture
def make_sampler(sampler_class: type[ConditionalSampler]):
    """Build ``sampler_class`` with seed 0, 5 startup trials and fast settings (overridable)."""

    def make(**kwargs) -> ConditionalSampler:
        settings = {"seed": 0, "n_startup_trials": 5, **FAST_SAMPLER_SETTINGS, **kwargs}
        return sampler_class(**settings)

    return make
