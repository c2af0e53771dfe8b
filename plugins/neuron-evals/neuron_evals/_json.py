"""Any value as plain JSON, for comparisons, files and reports (private)."""

from __future__ import annotations

import json
from typing import cast

from pydantic import JsonValue
from pydantic_core import to_jsonable_python


def to_json_value(value: object) -> JsonValue:
    """Return `value` as JSON data: models and dataclasses dumped, the unknown as its `str`."""
    return cast(JsonValue, to_jsonable_python(value, fallback=str))


def as_text(value: object) -> str:
    """Return `value` as text: a string as it is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(to_json_value(value), ensure_ascii=False, separators=(", ", ": "))
