"""Strict tools: a tool with `strict=True` as the Messages API's strict tool use.

The API constrains the model's input to a strict tool's schema as it decodes it,
in the same subset of JSON Schema as native output (`subset_schema`): every
object closed, optional properties left optional (unlike OpenAI's strict mode,
which needs every property required). What the subset cannot ask for is refused
before the call, naming the tool and where: a schema with no form in it, and
strict tools past the limits the API states.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, cast

from pydantic import JsonValue

from neuron_tool.schema import ToolSchema
from neuron_turn.loop.provider_errors import InvalidRequestError

from ._name import PROVIDER
from ._output_format import JsonObject, subset_schema

# The API's stated per-request limits on structured outputs ("Schema complexity
# limits", "Explicit limits"): past one the API refuses the whole request, so a turn
# would pay a round trip to learn what is known here.
# https://platform.claude.com/docs/en/build-with-claude/structured-outputs#schema-complexity-limits
MAX_STRICT_TOOLS: Final = 20
"""Tools with `strict: true` in one request; non-strict tools do not count."""
MAX_OPTIONAL_PARAMETERS: Final = 24
"""Parameters not listed in `required`, across all strict schemas of a request."""
MAX_UNION_PARAMETERS: Final = 16
"""Parameters using `anyOf` or a list of types, across all strict schemas of a request."""


def strict_tool_json(tool: ToolSchema) -> JsonObject:
    """Return the body's `tools` entry for strict `tool`: its schema in the subset, `strict: true`.

    Raises:
        InvalidRequestError: the schema has no form in the subset (naming the tool and where).
    """

    def refused(path: str, why: str) -> InvalidRequestError:
        return InvalidRequestError(
            f"Anthropic: tool {tool.name!r} cannot be strict: its input schema at {path} {why}; "
            "make the tool strict=None (its input is still checked against its schema), "
            "or change its schema",
            provider=PROVIDER,
        )

    return {
        "name": tool.name,
        "description": tool.description,
        "input_schema": subset_schema(tool.input_schema, refused),
        "strict": True,
    }


def check_strict_limits(entries: Sequence[JsonObject]) -> None:
    """Refuse a request's strict tools (their `tools` entries) past the API's stated limits.

    Only each tool's own parameters (its schema's top-level properties) are
    counted: the docs do not say how nested properties count, and counting what
    surely counts never refuses a request the API would take. The native output
    schema's parameters count toward the same limits and are left to the API.

    Raises:
        InvalidRequestError: naming the count, the limit and the tools.
    """
    if len(entries) > MAX_STRICT_TOOLS:
        names = ", ".join(str(entry["name"]) for entry in entries)
        raise _over(
            f"has {len(entries)} strict tools ({names}), and the API takes at most "
            f"{MAX_STRICT_TOOLS} in a request (non-strict ones do not count)",
            "make some of them strict=None",
        )
    optional: dict[str, int] = {}
    unions: dict[str, int] = {}
    for entry in entries:
        name = str(entry["name"])
        optional[name], unions[name] = _parameter_counts(entry["input_schema"])
    if sum(optional.values()) > MAX_OPTIONAL_PARAMETERS:
        raise _over(
            f"has {_counted(optional)} optional parameters in its strict tools, and the API "
            f"takes at most {MAX_OPTIONAL_PARAMETERS} in a request",
            "make some of the tools strict=None, or more of their parameters required",
        )
    if sum(unions.values()) > MAX_UNION_PARAMETERS:
        raise _over(
            f"has {_counted(unions)} parameters of a union type (anyOf, or a list of types) "
            f"in its strict tools, and the API takes at most {MAX_UNION_PARAMETERS} in a request",
            "make some of the tools strict=None, or more of their parameters of one type",
        )


def _parameter_counts(schema: JsonValue) -> tuple[int, int]:
    """A converted input schema's optional parameters and parameters of a union type."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return 0, 0
    properties = cast(JsonObject, schema["properties"])
    required = schema.get("required")
    wanted = (
        {name for name in required if isinstance(name, str)}
        if isinstance(required, list)
        else set()
    )
    optional = sum(1 for name in properties if name not in wanted)
    unions = sum(
        1
        for node in properties.values()
        if isinstance(node, dict) and ("anyOf" in node or isinstance(node.get("type"), list))
    )
    return optional, unions


def _counted(counts: dict[str, int]) -> str:
    """`25 (a: 20, b: 5)`: a total and the tools it comes from."""
    parts = ", ".join(f"{name}: {count}" for name, count in counts.items() if count)
    return f"{sum(counts.values())} ({parts})"


def _over(what: str, fix: str) -> InvalidRequestError:
    return InvalidRequestError(f"Anthropic: the request {what}; {fix}", provider=PROVIDER)
