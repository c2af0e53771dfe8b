"""The placeholder a cleared tool result's content becomes (private).

Shared by `ClearToolResults`, which clears old results, and `Staged`, which
clears any result larger than the whole budget before its steps run.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from neuron_turn import ToolResultPart, describe_file

__all__ = ["CLEARED_PREFIX", "cleared", "is_placeholder"]

CLEARED_PREFIX: Final = "[tool result cleared to save context"
"""How every placeholder starts, so a cleared result is never cleared again."""

_PLACEHOLDER_CHARS: Final = 10_000
"""The longest text taken for a placeholder (room for many files' names): a tool's
output that only starts like one is cleared all the same."""


def is_placeholder(text: str) -> bool:
    """Whether `text` is a placeholder; a tool's long output that merely starts like one is not."""
    return text.startswith(CLEARED_PREFIX) and len(text) <= _PLACEHOLDER_CHARS


def cleared(part: ToolResultPart) -> ToolResultPart:
    """`part` with its content replaced by a placeholder naming its size and files, files gone."""
    if is_placeholder(part.content):
        text = part.content.removesuffix("]")  # its text went earlier: only its files go now
    else:
        text = f"{CLEARED_PREFIX}: {len(part.content)} characters"
    if part.files:
        # Named, so the model knows what it was shown and may ask for it again.
        files = "; ".join(describe_file(file) for file in part.files)
        text += f" and {_count(len(part.files))} ({files})"
    return replace(part, content=text + "]", files=())


def _count(files: int) -> str:
    return "1 file" if files == 1 else f"{files} files"
