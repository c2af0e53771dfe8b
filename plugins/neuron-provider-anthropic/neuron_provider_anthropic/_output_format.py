"""Native typed answers: the output type's JSON Schema as the Messages API's `output_config.format`.

Structured outputs constrain the model's text to a subset of JSON Schema: every
object closed (`additionalProperties: false`), strings with a listed `format`,
`minItems` of 0 or 1. What the subset lacks (bounds, lengths, patterns, other
formats) is written into the node's description, so the model still reads it,
and the loop validates the answer against the full schema as in every mode. An
object of free keys (a `dict[str, int]`) has no closed form: it is refused
before the call rather than sent as an object that can only be `{}`.

Strict tools (`_strict_tools`) take the same subset for their input schemas, so
`subset_schema` serves both, each with its own refusal.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Final, TypeAlias

from pydantic import JsonValue

from neuron_turn.loop.output import OutputSchema
from neuron_turn.loop.provider_errors import InvalidRequestError

from ._name import PROVIDER

JsonObject: TypeAlias = dict[str, JsonValue]

_FORMATS: Final = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)
_COMBINATIONS: Final = {"anyOf": "anyOf", "oneOf": "anyOf", "allOf": "allOf"}

Refusal: TypeAlias = Callable[[str, str], InvalidRequestError]
"""Makes the error for a node with no form in the subset, from its path (`$.a.b`) and why."""


def output_format_json(output: OutputSchema) -> JsonObject:
    """The `output_config.format` asking for an answer of `output`'s schema.

    Raises:
        InvalidRequestError: the schema holds an object of free keys, or a node that
            is not a JSON object.
    """
    schema = subset_schema(output.schema, _refused)
    if output.description and "description" not in schema:
        schema["description"] = output.description
    return {"type": "json_schema", "schema": schema}


def subset_schema(schema: JsonValue, refused: Refusal) -> JsonObject:
    """Return `schema` in structured outputs' subset of JSON Schema; `schema` is not changed.

    Native output and strict tools share the subset, but not the advice for a
    schema that has no form in it: `refused` words the error for its caller.

    Raises:
        InvalidRequestError: `refused`'s, for a node with no form in the subset.
    """
    return _node(schema, "$", refused, 0)


_MAX_DEPTH: Final = 100
"""Nodes nested deeper are refused: an MCP server's schema is untrusted, and recursion
that deep would exhaust the stack (the API takes far fewer levels)."""


def _node(node: JsonValue, path: str, refused: Refusal, depth: int) -> JsonObject:
    if depth > _MAX_DEPTH:
        raise refused(path, f"nests deeper than {_MAX_DEPTH} levels")
    if not isinstance(node, dict):
        raise refused(path, "is not a JSON Schema object")
    depth += 1
    rest = dict(node)
    if "$ref" in rest:
        return {"$ref": rest["$ref"]}
    kept: JsonObject = {}
    defs = rest.pop("$defs", None)
    if isinstance(defs, dict):
        kept["$defs"] = {
            name: _node(value, f"{path}.$defs.{name}", refused, depth)
            for name, value in defs.items()
        }
    for key in ("type", "enum", "const", "title", "description"):
        if key in rest:
            kept[key] = rest.pop(key)
    for key, form in _COMBINATIONS.items():
        variants = rest.pop(key, None)
        if isinstance(variants, list):
            kept[form] = [
                _node(v, f"{path}.{key}[{i}]", refused, depth) for i, v in enumerate(variants)
            ]
    kind = kept.get("type")
    if kind == "object" or "properties" in rest:
        _object(rest, kept, path, refused, depth)
    elif kind == "array":
        _array(rest, kept, path, refused, depth)
    elif kind == "string" and _listed_format(rest.get("format")):
        kept["format"] = rest.pop("format")
    if rest:
        _describe(kept, rest)
    return kept


def _listed_format(value: JsonValue) -> bool:
    # A schema is untrusted: a format of another type (a list) is described, never hashed.
    return isinstance(value, str) and value in _FORMATS


def _object(rest: JsonObject, kept: JsonObject, path: str, refused: Refusal, depth: int) -> None:
    properties = rest.pop("properties", None)
    extra = rest.pop("additionalProperties", None)
    if not isinstance(properties, dict) or not properties:
        if extra is not False:
            raise refused(
                path, "is an object of free keys, which structured outputs cannot ask for"
            )
        properties = {}
    kept["properties"] = {
        name: _node(value, f"{path}.{name}", refused, depth) for name, value in properties.items()
    }
    kept["additionalProperties"] = False
    if "required" in rest:
        kept["required"] = rest.pop("required")


def _array(rest: JsonObject, kept: JsonObject, path: str, refused: Refusal, depth: int) -> None:
    items = rest.pop("items", None)
    if items is not None:
        kept["items"] = _node(items, f"{path}[]", refused, depth)
    if rest.get("minItems") in (0, 1):
        kept["minItems"] = rest.pop("minItems")


def _describe(kept: JsonObject, rest: JsonObject) -> None:
    # The model still reads what the subset cannot enforce.
    said = ", ".join(f"{key}: {json.dumps(value)}" for key, value in rest.items())
    description = kept.get("description")
    kept["description"] = f"{description}\n\n{{{said}}}" if description else f"{{{said}}}"


def _refused(path: str, why: str) -> InvalidRequestError:
    return InvalidRequestError(
        f"Anthropic: native output cannot use this schema: {path} {why}; "
        "use output mode 'tool' (the default) or 'prompted'",
        provider=PROVIDER,
    )
