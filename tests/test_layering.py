"""The dependency rule of architecture.md: arrows point down only."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OURS = {"layer0", "neuron_hooks", "neuron_tool", "neuron_turn"}
ALLOWED = {
    "layer0": set(),
    "neuron_hooks": {"layer0"},
    "neuron_tool": {"layer0"},
    "neuron_turn": {"layer0", "neuron_hooks", "neuron_tool"},
}


def _imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_package_imports_only_the_packages_below_it(package: str) -> None:
    offences = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for imported in _imported_packages(path) & (OURS - {package}):
            if imported not in ALLOWED[package]:
                offences.append(f"{path.relative_to(ROOT)} imports {imported}")
    assert offences == []


def test_layer0_does_no_io() -> None:
    io_modules = {"httpx", "sqlite3", "socket", "asyncio", "subprocess", "pluggy", "jsonschema"}
    offences = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted((ROOT / "layer0").rglob("*.py"))
        for name in _imported_packages(path) & io_modules
    ]
    assert offences == []


def test_rule_check_catches_an_upward_import(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text("from neuron_turn import NeuronTurn\nimport neuron_tool.registry\n")
    assert _imported_packages(module) == {"neuron_turn", "neuron_tool"}
