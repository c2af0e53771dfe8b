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


def trusted(model: type[_M], fields: dict[str, Any], fields_set: frozenset[str]) -> _M:
    """Return a `model` holding `fields` (every field, valid), `fields_set` as if passed."""
    instance = model.__new__(model)
    object.__setattr__(instance, "__dict__", fields)
    object.__setattr__(instance, "__pydantic_fields_set__", set(fields_set))
    object.__setattr__(instance, "__pydantic_extra__", None)
    object.__setattr__(instance, "__pydantic_private__", None)
    return instance


def is_plain_json(value: object, depth: int = _MAX_DEPTH) -> bool:
    """Return whether `value` is made only of JSON's types, nested at most `depth` deep.

    What a provider parsed from JSON always is; a Python provider's own
    objects (tuples, sets, models) are not, and go through validation, which
    says what is wrong with them.
    """
    items: Iterable[object]
    if isinstance(value, dict):
        if not all(type(key) is str for key in value):
            return False
        items = value.values()
    elif isinstance(value, list):
        items = value
    else:
        return type(value) in _SCALARS
    if depth < 1:
        return False
    return all(type(item) in _SCALARS or is_plain_json(item, depth - 1) for item in items)
