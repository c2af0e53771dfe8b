"""The README's "What holds" table: the reliability promises and the tests that prove them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[1]
README: Final = ROOT / "README.md"
_SECTION: Final = "## What holds"
_NODE_ID: Final = re.compile(r"`(tests/[\w/]+\.py::\w+(?:::\w+)?)`")


def promises() -> dict[str, list[str]]:
    """Return each promise of the table with the test node ids that prove it, in order."""
    text = README.read_text(encoding="utf-8")
    start = text.index(_SECTION)
    end = text.find("\n## ", start + len(_SECTION))
    rows: dict[str, list[str]] = {}
    for line in text[start : None if end == -1 else end].splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 2 and _NODE_ID.search(cells[1]):
            rows[cells[0]] = _NODE_ID.findall(cells[1])
    return rows


def node_ids() -> set[str]:
    """Return every test node id the table names."""
    return {node for nodes in promises().values() for node in nodes}
