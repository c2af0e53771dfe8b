"""How deep a model's JSON may nest: a tool call's arguments, a typed answer.

Python's parsers and serialisers recurse, so a value nested a few thousand
levels deep crashes the code that reads or writes it; the loop refuses what
nests deeper than `MAX_INPUT_DEPTH` the moment it arrives.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

__all__ = ["MAX_INPUT_DEPTH", "deeper_than"]

MAX_INPUT_DEPTH: Final = 64
"""Deepest nesting of objects and arrays a tool call's arguments may have."""


def deeper_than(value: object, limit: int) -> bool:
    """Return whether `value` nests deeper than `limit` objects and arrays.

    Depth-first and recursive only as deep as `limit`, so a cyclic value (a
    provider's own Python objects, never parsed JSON) ends at the limit too.
    """
    if isinstance(value, dict):
        children: Iterable[object] = value.values()
    elif isinstance(value, list | tuple):
        children = value
    else:
        return False
    if limit < 1:
        return True
    for child in children:
        if isinstance(child, _NESTED) and deeper_than(child, limit - 1):
            return True
    return False


_NESTED: Final = (dict, list, tuple)
