"""The placeholder a cleared tool result's content becomes, and clearing results too large.

Shared by the built-in `sliding_window`, which clears a result larger than the
whole limit in the exchanges it must keep, and neuron-context-strategies'
`ClearToolResults` (old results) and `Staged` (any result larger than the
whole budget, once its steps are not enough).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Final

from .exchanges import exchanges
from .provider import ProviderMessage, ToolResultPart
from .tool_files import describe_file

__all__ = ["CLEARED_PREFIX", "cleared", "is_placeholder", "without_oversized"]

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


def without_oversized(
    messages: Sequence[ProviderMessage],
    *,
    limit: int,
    count: Callable[[Sequence[ProviderMessage]], int],
) -> list[ProviderMessage]:
    """`messages` with every tool result that alone exceeds `limit` cleared, pinned ones kept.

    Why: such a result can never be sent whole; kept, every later request
    overflows the model's window (a provider error) and a slide drops the task
    with it. Cleared, its call stays and the model is told its size.
    """
    current = list(messages)
    if count(current) <= limit:
        return current
    for span in exchanges(current):
        if any(current[i].pinned for i in span):
            continue
        for index in span:
            message = current[index]
            parts = [
                cleared(part)
                if isinstance(part, ToolResultPart)
                and count([replace(message, content=[part])]) > limit
                else part
                for part in message.content
            ]
            if any(new is not old for new, old in zip(parts, message.content, strict=True)):
                current[index] = replace(message, content=parts)
    return current
