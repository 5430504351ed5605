"""Shared test settings: small torch problems run fastest on one thread on a 2-core machine;
the samplers every behaviour test runs for (fixtures ``sampler_class`` and ``make_sampler``);
``run_script`` for the tests that run the scripts of examples/ and benchmarks/."""

import os
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import optuna  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from condsamplers import (  # noqa: E402
    ArcGPSampler,
    BNGPSampler,
    BOHAMIANNSampler,
    DNGOSampler,
    TreeGPSampler,
)
from condsamplers.samplers.base import ConditionalSampler  # noqa: E402

torch.set_num_threads(1)

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def optuna_logs_reach_caplog():
    """The library logs under Optuna's logger (``condsamplers.log``), which does not propagate
    to the root logger by default; pytest's ``caplog`` listens there."""
    optuna.logging.enable_propagation()
    yield
    optuna.logging.disable_propagation()


def with_stable_ids(checks: pytest.MarkDecorator) -> pytest.MarkDecorator:
    """``parametrize_with_checks``'s mark with ids that hold no object address: the class of
    each estimator, its position in the list and the check's name. scikit-learn's own ids
    are reprs, and a sampler or a scipy distribution inside a search space prints its
    address, which differs between pytest-xdist's workers (they must collect the same ids)."""
    argnames, cases = checks.args[0], list(checks.args[1])
    positions: dict[int, int] = {}
    ids = []
    for case in cases:
        estimator, check = getattr(case, "values", case)  # pytest.param(...) or a pair
        position = positions.setdefault(id(estimator), len(positions))
        function = getattr(check, "func", check)
        keywords = ",".join(f"{k}={v}" for k, v in getattr(check, "keywords", {}).items())
        name = f"{function.__name__}({keywords})" if keywords else function.__name__
        ids.append(f"{type(estimator).__name__}{position}-{name}")
    return pytest.mark.parametrize(argnames, cases, ids=ids)


def run_script(script: Path, *args: str, cwd: Path) -> str:
    """Runs ``script`` with ``args`` as a new user would (a fresh process, in ``cwd``, one
    thread); returns its standard output and fails the test on a non-zero exit status."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    done = subprocess.run(
        [sys.executable, str(script), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"{script.name} exited {done.returncode}:\n{done.stderr[-3000:]}"
    return done.stdout


#: Fast settings of the behaviour tests: they exercise the same code paths as the defaults.
FAST_SAMPLER_SETTINGS = dict(n_candidates=128, n_local_search=2, n_restarts=0)

#: Small networks and budgets for the neural samplers: the same code paths, test-sized.
FAST_BY_SAMPLER: dict[str, dict] = {
    "dngo": dict(FAST_SAMPLER_SETTINGS, hidden_sizes=(20, 20), n_epochs=100, n_epochs_warm=20),
    "bohamiann": dict(
        n_candidates=128,
        n_local_search=2,
        hidden_sizes=(20, 20),
        n_burn_in=300,
        n_burn_in_warm=100,
        n_samples=10,
        keep_every=10,
    ),
}

SAMPLER_CLASSES: dict[str, type[ConditionalSampler]] = {
    "arcgp": ArcGPSampler,
    "bngp": BNGPSampler,
    "treegp": TreeGPSampler,
    "dngo": DNGOSampler,
    "bohamiann": BOHAMIANNSampler,
}


@pytest.fixture(params=sorted(SAMPLER_CLASSES))
def sampler_name(request: pytest.FixtureRequest) -> str:
    """Each sampler of the library in turn."""
    return request.param


@pytest.fixture
def sampler_class(sampler_name: str) -> type[ConditionalSampler]:
    return SAMPLER_CLASSES[sampler_name]


@pytest.fixture
def make_sampler(sampler_name: str):
    """Build the sampler with seed 0, 5 startup trials and fast settings (overridable)."""
    fast = FAST_BY_SAMPLER.get(sampler_name, FAST_SAMPLER_SETTINGS)

    def make(**kwargs) -> ConditionalSampler:
        settings = {"seed": 0, "n_startup_trials": 5, **fast, **kwargs}
        return SAMPLER_CLASSES[sampler_name](**settings)

    return make


@pytest.fixture
def ei_noises(monkeypatch: pytest.MonkeyPatch) -> list[float | None]:
    """The ``noise`` argument of every log-EI a proposal builds (``None``: plain EI; a noise
    variance: the augmented-EI factor), recorded as the pipeline calls ``make_log_mc_ei``."""
    from condsamplers import pipeline

    noises: list[float | None] = []
    original = pipeline.make_log_mc_ei

    def spy(fantasies, noise=None):  # type: ignore[no-untyped-def]
        noises.append(noise)
        return original(fantasies, noise)

    monkeypatch.setattr(pipeline, "make_log_mc_ei", spy)
    return noises
