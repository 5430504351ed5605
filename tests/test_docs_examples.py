"""Every Python block of the README and of the getting-started page runs as written.

The blocks of one page run in order in one namespace (a later block may use what an earlier
one defined), in a fresh interpreter whose working directory is a temporary folder, so that a
block that writes a file writes it there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import run_script

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("README.md", "docs/index.md")


def python_blocks(page: str) -> list[str]:
    """The fenced ```python blocks of a page, in order."""
    return re.findall(r"^```python\n(.*?)^```", (ROOT / page).read_text(), flags=re.M | re.S)


@pytest.mark.parametrize("page", PAGES)
def test_every_python_block_of_the_page_runs(page: str, tmp_path: Path) -> None:
    blocks = python_blocks(page)
    assert blocks, f"{page} has no Python block"
    script = tmp_path / "blocks.py"
    script.write_text("\n\n".join(blocks))
    run_script(script, cwd=tmp_path)
