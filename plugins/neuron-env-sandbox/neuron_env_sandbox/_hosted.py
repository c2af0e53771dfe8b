"""Hosted tools as JSON: how a recipe and a provider request carry them to and from the child.

`{"name": "web_search", "max_uses": 3, "allowed_domains": [...], "user_location":
{...}}`: the tool's `name` and its fields that are set. Reading one checks it
as the hosted tool's own constructor does, so a malformed one (from a file, or
from the child, which is not trusted) is a `ValueError` naming what is wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from pydantic import JsonValue

from neuron_turn import CodeExecution, HostedTool, UserLocation, WebFetch, WebSearch

__all__ = ["hosted_tool_json", "hosted_tool_of"]

_FIELDS: Final[dict[str, frozenset[str]]] = {
    "web_search": frozenset({"max_uses", "allowed_domains", "blocked_domains", "user_location"}),
    "web_fetch": frozenset({"max_uses", "allowed_domains", "blocked_domains"}),
    "code_execution": frozenset(),
}
_LOCATION_FIELDS: Final = frozenset({"city", "region", "country", "timezone"})
_DOMAIN_KEYS: Final = ("allowed_domains", "blocked_domains")


def hosted_tool_json(tool: HostedTool) -> dict[str, JsonValue]:
    """`tool` as JSON: its name and the fields that are set."""
    data: dict[str, JsonValue] = {"name": tool.name}
    if isinstance(tool, WebSearch | WebFetch):
        if tool.max_uses is not None:
            data["max_uses"] = tool.max_uses
        if tool.allowed_domains:
            data["allowed_domains"] = list(tool.allowed_domains)
        if tool.blocked_domains:
            data["blocked_domains"] = list(tool.blocked_domains)
    if isinstance(tool, WebSearch) and tool.user_location is not None:
        data["user_location"] = dict(tool.user_location.as_dict())
    return data


def hosted_tool_of(value: object) -> HostedTool:
    """A hosted tool, or one from `hosted_tool_json`'s form.

    Raises:
        ValueError: not a hosted tool: an unknown name or field, or limits the
            tool refuses (`UnsupportedHostedToolError`, a `ValueError`).
    """
    if isinstance(value, WebSearch | WebFetch | CodeExecution):
        return value
    if not isinstance(value, Mapping):
        raise ValueError(f"a hosted tool is an object with a name; got {type(value).__name__}")
    fields = dict(value)
    name = fields.pop("name", None)
    allowed = _FIELDS.get(name) if isinstance(name, str) else None
    if allowed is None:
        raise ValueError(f"unknown hosted tool {name!r}; known: {', '.join(sorted(_FIELDS))}")
    unknown = sorted(set(fields) - allowed)
    if unknown:
        raise ValueError(f"hosted tool {name} has no field {', '.join(map(repr, unknown))}")
    if name == "code_execution":
        return CodeExecution()
    limits = {key: _domains(key, fields[key]) for key in _DOMAIN_KEYS if key in fields}
    max_uses = fields.get("max_uses")
    if max_uses is not None and (not isinstance(max_uses, int) or isinstance(max_uses, bool)):
        raise ValueError(f"hosted tool {name}: max_uses is a whole number; got {max_uses!r}")
    if name == "web_fetch":
        return WebFetch(max_uses=max_uses, **limits)
    location = fields.get("user_location")
    return WebSearch(
        max_uses=max_uses,
        user_location=None if location is None else _location(location),
        **limits,
    )


def _domains(key: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(d, str) for d in value):
        raise ValueError(f"{key} is a list of domain names; got {value!r}")
    return tuple(value)


def _location(value: object) -> UserLocation:
    if not isinstance(value, Mapping) or not set(value) <= _LOCATION_FIELDS:
        raise ValueError(
            f"user_location is an object of {', '.join(sorted(_LOCATION_FIELDS))}; got {value!r}"
        )
    return UserLocation(**{key: value[key] for key in value})
