"""The report reads the rest of commchar through one door: of its modules, only
report/adapters.py imports commchar.models, commchar.store or commchar.modelfile
(at the top or inside a function). The check reads the imports with `ast`, and is
run on small modules that break the rule, so it is known to catch what it looks for."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPORT = Path(__file__).resolve().parents[1] / "src" / "commchar" / "report"
BEHIND_THE_DOOR = ("commchar.models", "commchar.store", "commchar.modelfile")
DOOR = "adapters.py"


def _behind(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in BEHIND_THE_DOOR)


def crossings(source: str) -> list[str]:
    """'line: module' for every import of a package behind the door."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"{node.lineno}: {a.name}" for a in node.names if _behind(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if _behind(node.module):
                found.append(f"{node.lineno}: {node.module}")
            elif node.module == "commchar":
                found += [f"{node.lineno}: commchar.{a.name}" for a in node.names if _behind(f"commchar.{a.name}")]
    return found


def test_only_the_adapters_import_models_store_and_modelfile() -> None:
    modules = sorted(REPORT.glob("*.py"))
    assert len(modules) > 10 and (REPORT / DOOR) in modules
    broken = {p.name: crossings(p.read_text(encoding="utf-8")) for p in modules if p.name != DOOR}
    assert {name: found for name, found in broken.items() if found} == {}
    assert crossings((REPORT / DOOR).read_text(encoding="utf-8"))  # the door itself does


@pytest.mark.parametrize("source", [
    "from commchar.models.thresholds import describe\n",
    "import commchar.store\n",
    "from commchar import modelfile\n",
    "def f():\n    from commchar.store.locality import library_label\n",
    "import commchar.models.metrics as m\n",
])
def test_the_check_catches_each_way_in(source: str) -> None:
    assert len(crossings(source)) == 1


@pytest.mark.parametrize("source", [
    "from commchar.report.adapters import describe\n",
    "from commchar import vocabulary\n",
    "import commchar.modelling\n",
    "from .adapters import ModelView\n",
])
def test_the_check_lets_the_rest_through(source: str) -> None:
    assert crossings(source) == []
