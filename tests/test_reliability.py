"""The README's "What holds" table cannot rot: every test it names exists and is marked."""

from __future__ import annotations

import ast
import subprocess
import sys

from tests._reliability import ROOT, node_ids, promises


def _defined(node_id: str) -> bool:
    path, *names = node_id.split("::")
    file = ROOT / path
    if not file.is_file():
        return False
    scope: list[ast.stmt] = ast.parse(file.read_text(encoding="utf-8")).body
    for name in names:
        found = [
            node
            for node in scope
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and node.name == name
        ]
        if not found:
            return False
        scope = found[0].body if isinstance(found[0], ast.ClassDef) else []
    return True


def test_the_table_covers_faults_inputs_and_secrets() -> None:
    table = promises()
    assert len(table) >= 20
    assert all(nodes for nodes in table.values())


def test_every_test_the_table_names_exists() -> None:
    missing = sorted(node for node in node_ids() if not _defined(node))
    assert missing == [], f"README 'What holds' names tests that do not exist: {missing}"


def test_the_reliability_marker_selects_exactly_the_tests_the_table_names() -> None:
    files = sorted({node.split("::")[0] for node in node_ids()})
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "reliability", *files],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert collected.returncode == 0, collected.stdout[-2000:] + collected.stderr[-2000:]
    selected = {line.split("[", 1)[0] for line in collected.stdout.splitlines() if "::" in line}
    assert selected == node_ids()
