"""Models built from values the loop already made valid, without validating them again.

The loop builds a hook context at every hook point of every iteration, a
record for every tool call and layer0 content for hooks and the stored
history; pydantic's validation (and `model_construct`, slower still) costs
several times what setting the instance's state does. Each builder here
produces exactly what validation would (tests check each against a validated
instance), and falls back to validation for anything the loop did not make.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final, TypeVar

from pydantic import BaseModel

__all__ = ["is_plain_json", "trusted"]

_M = TypeVar("_M", bound=BaseModel)
_SCALARS: Final = (str, int, float, bool, type(None))
_MAX_DEPTH: Final = 64
_set: Final = object.__setattr__
"""Bypasses the models' validating `__setattr__`; bound once, not looked up per field."""


def trusted(model: type[_M], fields: dict[str, Any], fields_set: frozenset[str]) -> _M:
    """Return a `model` holding `fields` (every field, valid), `fields_set` as if passed."""
    instance = model.__new__(model)
    _set(instance, "__dict__", fields)
    _set(instance, "__pydantic_fields_set__", set(fields_set))
    _set(instance, "__pydantic_extra__", None)
    _set(instance, "__pydantic_private__", None)
    return instance


def is_plain_json(value: object, depth: int = _MAX_DEPTH) -> bool:
    """Return whether `value` is made only of JSON's types, nested at most `depth` deep.

    What a provider parsed from JSON always is; a Python provider's own
    objects (tuples, sets, models) are not, and go through validation, which
    says what is wrong with them.
    """
    # Loops, not `all()` over generators: this runs on every tool input a hook sees.
    items: Iterable[object]
    if isinstance(value, dict):
        for key in value:
            if type(key) is not str:
                return False
        items = value.values()
    elif isinstance(value, list):
        items = value
    else:
        return type(value) in _SCALARS
    if depth < 1:
        return False
    for item in items:
        if type(item) not in _SCALARS and not is_plain_json(item, depth - 1):
            return False
    return True
