"""Tool-call arguments the loop will not carry: refused on arrival, answered as a tool error.

A model's arguments end up in hook contexts, the stored history and the
turn's output, all layer0 JSON, which pydantic validates only to about 250
levels and the Rust reference reads only to 128. Arguments nested deeper
than `MAX_INPUT_DEPTH` are therefore replaced, the moment the response
arrives, by an empty object and an error the model reads as the call's
result, so nothing a model sends can crash the turn further down. A
provider-specific block (`RawPart`) nested that deep has no call to answer:
the answer cannot be used, a `ModelError` saying why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from pydantic import JsonValue

from layer0 import ModelError

from .provider import ContentPart, RawPart, ToolUsePart

MAX_INPUT_DEPTH: Final = 64
"""Deepest nesting of objects and arrays a tool call's arguments may have."""


@dataclass(frozen=True, slots=True)
class RefusedCall(ToolUsePart):
    """A tool call whose arguments were refused; the tool round answers `refusal` unrun."""

    refusal: str = ""


def guard_tool_inputs(content: Sequence[ContentPart]) -> list[ContentPart]:
    """Return `content` with every tool call whose arguments nest too deep refused.

    Raises:
        ModelError: a provider-specific block nests deeper than `MAX_INPUT_DEPTH`.
    """
    for part in content:
        if isinstance(part, RawPart) and deeper_than(part.data, MAX_INPUT_DEPTH):
            raise ModelError(
                f"the answer holds a {part.provider!r} block nested deeper than "
                f"{MAX_INPUT_DEPTH} levels of objects and arrays"
            )
    return [_guarded(part) if isinstance(part, ToolUsePart) else part for part in content]


def _guarded(call: ToolUsePart) -> ToolUsePart:
    if not deeper_than(call.input, MAX_INPUT_DEPTH):
        return call
    refusal = (
        f"Error: the arguments of this call to {call.name!r} nest deeper than "
        f"{MAX_INPUT_DEPTH} levels of objects and arrays, so the tool was not run; "
        "call it again with flatter arguments"
    )
    return RefusedCall(call.id, call.name, {}, refusal)


def deeper_than(value: JsonValue, limit: int) -> bool:
    """Return whether `value` nests deeper than `limit`; iterative, and bounded on cycles."""
    pending: list[tuple[object, int]] = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        children: list[object] | None = None
        if isinstance(item, dict):
            children = list(item.values())
        elif isinstance(item, list | tuple):
            children = list(item)
        if children is None:
            continue
        if depth + 1 > limit:
            return True
        pending.extend((child, depth + 1) for child in children)
    return False
