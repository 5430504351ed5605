"""The OptunaHub package (``optunahub/package/samplers/condsamplers``, the registry's layout)
loads with ``optunahub.load_local_module`` and its example runs."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

optunahub = pytest.importorskip("optunahub")

import condsamplers  # noqa: E402

REGISTRY_ROOT = Path(__file__).resolve().parents[1] / "optunahub" / "package"
PACKAGE = "samplers/condsamplers"


def _load_local(package: str) -> object:
    return optunahub.load_local_module(package, registry_root=str(REGISTRY_ROOT))


def test_the_package_loads_and_gives_the_library_samplers() -> None:
    module = _load_local(PACKAGE)
    for name in ("TreeGPSampler", "ArcGPSampler", "BNGPSampler", "DNGOSampler"):
        assert getattr(module, name) is getattr(condsamplers, name)


def test_the_readme_has_the_registry_front_matter() -> None:
    readme = (REGISTRY_ROOT / PACKAGE / "README.md").read_text()
    front = readme.split("---")[1]
    fields = dict(re.findall(r"^(\w+): (.+)$", front, flags=re.M))
    assert set(fields) >= {"author", "title", "description", "tags", "optuna_versions", "license"}
    assert "sampler" in fields["tags"]
    assert (REGISTRY_ROOT / PACKAGE / "LICENSE").exists()


def test_the_example_runs_with_the_package_loaded_from_disk(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(optunahub, "load_module", _load_local)  # the registry is not reachable
    spec = importlib.util.spec_from_file_location(
        "hub_example", REGISTRY_ROOT / PACKAGE / "example.py"
    )
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    study = example.main(n_trials=14)
    assert len(study.trials) == 14
    out = capsys.readouterr().out
    assert "[if model == 'net']" in out and "best value" in out
