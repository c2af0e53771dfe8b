"""`Json`: a free-form JSON value whose objects are written with sorted keys.

The reference stores free-form payloads in ordered maps, so its output has
every object's keys sorted; sorting on the way out makes our bytes match.
"""

from __future__ import annotations

from typing import Annotated, TypeAlias

from pydantic import JsonValue, PlainSerializer

__all__ = ["Json", "sorted_json"]


def sorted_json(value: JsonValue) -> JsonValue:
    """Return `value` with the keys of every object in it sorted."""
    if isinstance(value, dict):
        return {key: sorted_json(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [sorted_json(item) for item in value]
    return value


# return_type given, not read from the annotation: a deferred build may resolve it from
# another module (a Temporal workflow sandbox), where `JsonValue` is not in scope.
Json: TypeAlias = Annotated[JsonValue, PlainSerializer(sorted_json, return_type=JsonValue)]
"""Any JSON value (object, array, string, number, bool or null)."""
