"""The repository holds the product: a small documentation folder of pages and figures, no
prototype patches, no references to how it was made, a README a newcomer reads through, and
one version told the same by the package, its metadata, the changelog and the docs site."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

import condsamplers

ROOT = Path(__file__).resolve().parents[1]
#: An ordinal work-period label (an ordinal, in words or digits, before "session") or an issue
#: number.
INTERNAL_REFERENCE = re.compile(
    r"(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth"
    r"|[a-z]*teenth|[a-z]*tieth|twenty[a-z]*|thirty[a-z]*|forty[a-z]*|fifty[a-z]*"
    r"|[0-9]+(st|nd|rd|th))[ _-]?session|\bissues?[ -]?#?[0-9]+",
    flags=re.I,
)
TEXT_SUFFIXES = {".py", ".md", ".toml", ".yml", ".yaml", ".txt", ".cfg", ".json", ""}


def _tracked_files() -> list[str]:
    try:
        listing = subprocess.run(
            ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [name for name in listing.stdout.splitlines() if (ROOT / name).is_file()]


def _pyproject_version() -> str:
    text = (ROOT / "pyproject.toml").read_text()
    return re.search(r'^version = "([^"]+)"', text, flags=re.M).group(1)


def test_docs_hold_pages_and_figures_only() -> None:
    files = [path for path in (ROOT / "docs").rglob("*") if path.is_file()]
    assert sum(path.stat().st_size for path in files) <= 2 * 1024 * 1024
    assert {path.suffix for path in files} <= {".md", ".png", ".svg"}


def test_no_patch_file_and_no_internal_reference_is_tracked() -> None:
    names = _tracked_files()
    assert not [name for name in names if name.endswith(".patch")]
    assert not [name for name in names if INTERNAL_REFERENCE.search(name)]
    hits = []
    for name in names:
        if Path(name).suffix not in TEXT_SUFFIXES or name.endswith(".json"):
            continue
        for number, line in enumerate((ROOT / name).read_text(errors="replace").splitlines()):
            if INTERNAL_REFERENCE.search(line):
                hits.append(f"{name}:{number + 1}: {line.strip()[:100]}")
    assert not hits, "\n".join(hits[:20])


def test_the_readme_is_short() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 150


def test_one_version_everywhere() -> None:
    version = _pyproject_version()
    assert condsamplers.__version__ == version
    changelog = (ROOT / "CHANGELOG.md").read_text()
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", changelog, flags=re.M)
    assert releases and releases[0] == version, releases
    headings = re.findall(r"^## (.*)$", changelog, flags=re.M)
    assert all(h == "[Unreleased]" or re.match(r"\[\d+\.\d+\.\d+\] - ", h) for h in headings)
    assert f"condsamplers {version}" in (ROOT / "mkdocs.yml").read_text()
