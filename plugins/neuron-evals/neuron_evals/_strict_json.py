"""`json_copy`: a value checked to be JSON as it is, and copied (private).

Unlike `_json.to_json_value`, nothing is converted: a value JSON would change
(a tuple, an int key, NaN) or cannot hold (a set, an object) is refused, saying
where in it, because what a task records must read back from a report as given.
"""

from __future__ import annotations

import math
import reprlib
from typing import Final

from pydantic import JsonValue

__all__ = ["MAX_JSON_DEPTH", "json_copy"]

_MAX_INT_BITS: Final = 14_000
"""The largest int kept, in bits (about 4200 digits): Python writes an int of more than
4300 digits in no JSON, and a report holding one could not be shown or written."""
MAX_JSON_DEPTH: Final = 100
"""How deeply lists and dicts may nest; deeper is refused (so is a list that holds itself)."""

_KINDS: Final = "None, a bool, int, finite float, str, list, or dict with str keys"


def _short_repr() -> reprlib.Repr:
    # Python 3.11's Repr takes no arguments; a refused value may be huge.
    shown = reprlib.Repr()
    shown.maxstring = shown.maxother = 40
    shown.maxlist = shown.maxdict = 3
    shown.maxlevel = 2
    return shown


_SHOWN: Final = _short_repr()


def json_copy(value: object) -> JsonValue:
    """A copy of `value` of plain JSON types only (a str subclass becomes a str).

    A copy, so what the caller changes later is not what was recorded.

    Raises:
        ValueError: something in `value` is not JSON; the message says where
            (`value['a'][2]`) and what it is.
    """
    return _copy(value, "", 0)


def _where(path: str) -> str:
    return f"value{path}" if path else "the value"


def _copy(value: object, path: str, depth: int) -> JsonValue:
    if depth > MAX_JSON_DEPTH:
        raise ValueError(
            f"{_where(path)} is nested more than {MAX_JSON_DEPTH} deep (does it hold itself?)"
        )
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if value.bit_length() > _MAX_INT_BITS:
            raise ValueError(
                f"{_where(path)} is an int of about {int(value.bit_length() * 0.30103)} digits; "
                "write one of at most 4200 digits (or as a string)"
            )
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{_where(path)} is {value!r}; JSON has no NaN or infinity")
        return float(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, list):
        return [_copy(item, f"{path}[{index}]", depth + 1) for index, item in enumerate(value)]
    if isinstance(value, dict):
        return _copy_dict(value, path, depth)
    kind = type(value).__name__
    raise ValueError(
        f"{_where(path)} is {_SHOWN.repr(value)}, of type {kind}, not JSON: give {_KINDS}"
    )


def _copy_dict(value: dict[object, object], path: str, depth: int) -> JsonValue:
    copied: dict[str, JsonValue] = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise ValueError(
                f"{_where(path)} has the key {_SHOWN.repr(key)}, of type {type(key).__name__}; "
                "JSON object keys are strings"
            )
        copied[str.__str__(key)] = _copy(item, f"{path}[{_SHOWN.repr(key)}]", depth + 1)
    return copied
