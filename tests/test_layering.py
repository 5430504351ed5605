"""The pipeline's stages import downwards only: a module never imports from a stage above its own,
so each stage can be read, tested and replaced below the ones that use it. Imports under
``if TYPE_CHECKING:`` count too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "condsamplers"

#: The stage of each top-level module or package of condsamplers, lowest first.
STAGES = {
    "log": 0,
    "validation": 0,
    "space": 1,
    "one_hot": 2,
    "kernels": 2,
    "warping": 2,
    "models": 3,
    "evidence_warping": 3,
    "acquisition": 4,
    "hypervolume": 4,
    "optimize": 5,
    "branch_draw": 5,
    "branch_tpe": 5,
    "path_patience": 5,
    "pipeline": 6,
    "pipeline_pareto": 6,
    "samplers": 7,
    "sklearn": 8,
    "importance": 8,
    "importance_result": 8,
    "importance_sobol": 8,
    "visualization": 9,
}


def _stage_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "condsamplers" or len(parts) < 2:
        return None
    return STAGES[parts[1]]


def _module_name(path: Path) -> str:
    relative = path.relative_to(SRC.parent).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imported(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return {n for n in names if n.startswith("condsamplers.")}


MODULES = sorted(p for p in SRC.rglob("*.py") if p.parent != SRC or p.name != "__init__.py")


def test_every_module_has_a_stage() -> None:
    unknown = {_module_name(p).split(".")[1] for p in MODULES} - set(STAGES)
    assert not unknown, f"add {unknown} to STAGES"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: _module_name(p))
def test_a_module_imports_no_stage_above_its_own(path: Path) -> None:
    own = _stage_of(_module_name(path))
    above = [m for m in _imported(path) if (_stage_of(m) or 0) > own]
    assert not above, f"{_module_name(path)} (stage {own}) imports higher stages: {above}"
