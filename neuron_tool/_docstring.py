"""Split a Google-style docstring into the tool description and parameter descriptions."""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from typing import Final

_ARG_SECTIONS: Final = frozenset(
    {"Args", "Arguments", "Parameters", "Params", "Keyword Args", "Keyword Arguments"}
)
# Sections about the Python interface: they mean nothing to a model calling the tool.
_DROPPED_SECTIONS: Final = _ARG_SECTIONS | {"Returns", "Return", "Yields", "Yield", "Raises"}
_SECTION_HEADER: Final = re.compile(r"([A-Z][A-Za-z ]*):\s*\Z")
_ARG_ENTRY: Final = re.compile(r"\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)\Z")


@dataclass(frozen=True, slots=True)
class Docstring:
    """A parsed docstring: the prose for the model and each argument's description."""

    description: str
    params: dict[str, str] = field(default_factory=dict)


def parse_docstring(doc: str | None) -> Docstring:
    """Parse `doc`, dropping the Args/Returns/Yields/Raises sections from the description."""
    if not doc:
        return Docstring(description="")
    kept: list[str] = []
    params: dict[str, str] = {}
    lines = inspect.cleandoc(doc).splitlines()
    index = 0
    while index < len(lines):
        header = _SECTION_HEADER.match(lines[index])
        if header is None or header.group(1) not in _DROPPED_SECTIONS:
            kept.append(lines[index])
            index += 1
            continue
        body, index = _section_body(lines, index + 1)
        if header.group(1) in _ARG_SECTIONS:
            params.update(_parse_args(body))
    return Docstring(description=_tidy(kept), params=params)


def _section_body(lines: list[str], start: int) -> tuple[list[str], int]:
    """Return the indented (or blank) lines from `start` and the index just past them."""
    end = start
    while end < len(lines) and (not lines[end].strip() or lines[end][0].isspace()):
        end += 1
    return lines[start:end], end


def _parse_args(body: list[str]) -> dict[str, str]:
    """Read `name (type): text` entries; deeper-indented lines continue the entry above."""
    entries: dict[str, list[str]] = {}
    indent: int | None = None
    current: list[str] | None = None
    for line in body:
        if not line.strip():
            continue
        depth = len(line) - len(line.lstrip())
        indent = depth if indent is None else indent
        entry = _ARG_ENTRY.match(line.strip()) if depth <= indent else None
        if entry is not None:
            current = entries.setdefault(entry.group(1), [])
            current.append(entry.group(2))
        elif current is not None:
            current.append(line.strip())
    return {name: " ".join(part for part in text if part) for name, text in entries.items()}


def _tidy(lines: list[str]) -> str:
    """Join the kept lines, collapsing the blank runs that removed sections leave behind."""
    text = "\n".join(lines).strip()
    return re.sub(r"\n{3,}", "\n\n", text)
