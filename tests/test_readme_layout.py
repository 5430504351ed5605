"""The design page's module layout names every module, and only modules that exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOP_LEVELS = ("src/condsamplers", "benchmarks", "examples")
DESIGN = ROOT / "docs" / "design.md"
HEADING = "## Module layout"


def _layout_paths() -> set[str]:
    """The files the ``## Module layout`` code block of docs/design.md lists, as paths from the
    root: an entry ends in ``.py`` or ``/``, and its indentation (two spaces a level) places it
    in the directory listed above it."""
    page = DESIGN.read_text()
    assert re.search(f"^{HEADING}$", page, flags=re.M), f"docs/design.md has no {HEADING!r}"
    section = page.split(f"\n{HEADING}\n", 1)[1]
    block = section.split("```", 2)[1]
    stack: list[str] = []
    paths = set()
    for line in block.splitlines():
        match = re.match(r"^( *)(\S+)", line)
        if not match or not match.group(2).endswith(("/", ".py")):
            continue
        level = len(match.group(1)) // 2
        stack = [*stack[:level], match.group(2).rstrip("/")]
        if match.group(2).endswith(".py"):
            paths.add("/".join(stack))
    return paths


def _modules() -> set[str]:
    return {
        str(path.relative_to(ROOT))
        for top in TOP_LEVELS
        for path in (ROOT / top).rglob("*.py")
        if path.name not in ("__init__.py", "__main__.py")
    }


def test_the_design_module_layout_names_every_module_and_no_other() -> None:
    listed, present = _layout_paths(), _modules()
    assert not present - listed, (
        f"add to the module layout of docs/design.md: {sorted(present - listed)}"
    )
    assert not listed - present, (
        f"in the module layout of docs/design.md but no longer there: {sorted(listed - present)}"
    )
