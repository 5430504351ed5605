"""The documentation site (mkdocs.yml) lists pages that exist, and its API reference documents
every public object of the packages users import from (CI builds the site with --strict)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The packages whose ``__all__`` is the public API, and public objects of other modules.
PUBLIC_PACKAGES = ("condsamplers", "condsamplers.sklearn")
PUBLIC_OBJECTS = (
    "condsamplers.importance.SobolImportanceEvaluator",
    "condsamplers.importance.sobol_indices",
    "condsamplers.importance.SobolResult",
    "condsamplers.visualization.plot_main_effects",
    "condsamplers.visualization.plot_interaction",
    "condsamplers.visualization.plot_conditional_space",
    "condsamplers.samplers.options.SamplerOptions",
)


def _documented() -> set[str]:
    api = (ROOT / "docs" / "api.md").read_text()
    return set(re.findall(r"^::: ([\w.]+)$", api, flags=re.M))


def test_every_public_object_is_in_the_api_reference() -> None:
    documented = _documented()
    wanted = set(PUBLIC_OBJECTS)
    for package in PUBLIC_PACKAGES:
        module = importlib.import_module(package)
        wanted |= {f"{package}.{name}" for name in module.__all__}
    assert not wanted - documented, f"add to docs/api.md: {sorted(wanted - documented)}"


def test_every_documented_object_imports() -> None:
    for path in _documented():
        module_name, name = path.rsplit(".", 1)
        assert hasattr(importlib.import_module(module_name), name), path


def test_every_page_of_the_site_exists() -> None:
    config = (ROOT / "mkdocs.yml").read_text()
    pages = re.findall(r"^ +- [^:]+: (\S+\.md)$", config, flags=re.M)
    assert len(pages) >= 10
    assert all((ROOT / "docs" / page).exists() for page in pages), pages
    unlisted = {path.name for path in (ROOT / "docs").glob("*.md")} - set(pages)
    assert not unlisted, f"pages outside the navigation: {sorted(unlisted)}"
