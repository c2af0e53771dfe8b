"""Strict tool inputs: a tool's input schema in the form strict decoding takes, and back.

A tool made with `strict=True` (`@tool(strict=True)`, or any tool whose `strict`
attribute is True) asks the provider to constrain the model's arguments to the
input schema as they are decoded (OpenAI's and Anthropic's strict tools), so a
call fits the schema by construction rather than after a retry. The registry
still checks every call against the tool's own schema.

OpenAI's strict mode takes a subset of JSON Schema, and `strict_form` writes a
tool's schema in it:

- every object is closed (`additionalProperties: false`): closing an object the
  tool leaves open only narrows what the model may send;
- a property the tool leaves optional becomes required and nullable, and
  `StrictForm.restore` drops the nulls the model sends for it, so the tool gets
  the arguments it would have got without strict mode and its default applies;
- `oneOf` becomes `anyOf`, and a `$ref` with sibling keywords moves into an
  `anyOf` of one, as the subset has them;
- what the subset lacks (`default`, string lengths, `uniqueItems`, formats it
  does not list...) is written into the node's description for the model to
  read.

A schema with no such form is refused, naming where (`StrictSchemaError`): an
object of free keys (`dict[str, int]`, which closed could only be `{}`), a
union of two objects or arrays whose optional properties a null could not be
told back to (unless a constant tag names the branch, as pydantic's
discriminated unions have), a tuple, `allOf` of more than one schema, `not`,
`if`/`then`/`else`, or a `$ref` outside `#/$defs`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, TypeAlias

from pydantic import JsonValue

from .errors import StrictSchemaError

__all__ = ["StrictForm", "StrictSchemaError", "strict_form"]

_Json: TypeAlias = dict[str, JsonValue]

_KEPT: Final = frozenset(
    {
        "type", "enum", "const", "title", "description", "properties", "required",
        "additionalProperties", "items", "anyOf", "$ref", "$defs", "pattern", "format",
        "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
        "minItems", "maxItems",
    }
)  # fmt: skip
"""The keywords OpenAI's strict mode takes (its Structured Outputs guide, "Supported schemas")."""

_FORMATS: Final = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
"""The string formats the subset lists; others are described."""

_REFUSED: Final = {
    "prefixItems": "is a tuple (prefixItems), which strict mode has no form for",
    "not": "uses not, which strict mode has no form for",
    "if": "uses if/then/else, which strict mode has no form for",
    "then": "uses if/then/else, which strict mode has no form for",
    "else": "uses if/then/else, which strict mode has no form for",
}
_DEFS_PREFIX: Final = "#/$defs/"
_ROOT: Final = "#"


@dataclass(frozen=True, slots=True)
class _Object:
    nullable: frozenset[str]
    """The properties made nullable: a null sent for one is dropped."""
    properties: Mapping[str, _Plan]


@dataclass(frozen=True, slots=True)
class _Array:
    items: _Plan


@dataclass(frozen=True, slots=True)
class _Ref:
    name: str
    """A `$defs` name, or `#` for the root."""


@dataclass(frozen=True, slots=True)
class _Union:
    """The branch that restores a value is the one of its JSON kind (one each at most)."""

    objects: _Plan = None
    arrays: _Plan = None


@dataclass(frozen=True, slots=True)
class _Tagged:
    """Object branches told apart by a constant tag property (a discriminated union)."""

    tag: str
    branches: Mapping[str, _Plan]


_Plan: TypeAlias = _Object | _Array | _Ref | _Union | _Tagged | None
"""How to undo the nullable optional properties below a node (None: nothing to undo)."""


@dataclass(frozen=True, slots=True)
class StrictForm:
    """A tool's input schema in strict mode's subset, and how to read the model's input back."""

    schema: _Json
    """The schema to send with `strict: true`."""
    _plan: _Plan = None
    _defs: Mapping[str, _Plan] = field(default_factory=dict)

    def restore(self, arguments: JsonValue) -> JsonValue:
        """Return `arguments` without the nulls sent for optional properties: the tool's input.

        Never changes `arguments`; a value of another shape than the schema's is
        returned as it is, for the registry's check to name.
        """
        return self._restore(self._plan, arguments, 0)

    def _restore(self, plan: _Plan, value: JsonValue, depth: int) -> JsonValue:
        if plan is None or depth > _MAX_DEPTH:
            return value
        if isinstance(plan, _Ref):
            return self._restore(self._defs.get(plan.name), value, depth + 1)
        if isinstance(plan, _Array):
            if not isinstance(value, list):
                return value
            return [self._restore(plan.items, item, depth + 1) for item in value]
        if isinstance(plan, _Union):
            branch = plan.objects if isinstance(value, dict) else plan.arrays
            return self._restore(branch, value, depth + 1)
        if not isinstance(value, dict):
            return value
        if isinstance(plan, _Tagged):
            tag = value.get(plan.tag)
            chosen = plan.branches.get(tag) if isinstance(tag, str) else None
            return self._restore(chosen, value, depth + 1)
        return {
            key: self._restore(plan.properties.get(key), item, depth + 1)
            for key, item in value.items()
            if item is not None or key not in plan.nullable
        }


_MAX_DEPTH: Final = 200
"""Past this the model's input is returned as it is: the registry's check judges it."""

_MAX_SCHEMA_DEPTH: Final = 100
"""Schema nodes nested deeper are refused (OpenAI takes far fewer levels)."""


def strict_form(schema: Mapping[str, JsonValue], *, tool: str) -> StrictForm:
    """Return `schema` (a tool's input schema) in OpenAI's strict subset.

    The last `_CACHE_SIZE` forms are kept by the schema object, so a provider asking
    on every model call of a turn writes each tool's form once. A `ToolSchema` is
    read as made, as the registry's validator is: a changed schema is a new one
    (`model_copy`, as a `prepare` makes), never its dict edited in place.

    Raises:
        StrictSchemaError: the schema has no strict form (the error names where and why).
    """
    held = _CACHE.get(id(schema))
    # The entry holds the schema itself, so its id cannot be another object's meanwhile.
    if held is not None and held[0] is schema and held[1] == tool:
        return held[2]
    form = _Converter(schema, tool).form()
    if len(_CACHE) >= _CACHE_SIZE:
        del _CACHE[next(iter(_CACHE))]
    _CACHE[id(schema)] = (schema, tool, form)
    return form


_CACHE: Final[dict[int, tuple[Mapping[str, JsonValue], str, StrictForm]]] = {}
_CACHE_SIZE: Final = 256


class _Converter:
    def __init__(self, schema: Mapping[str, JsonValue], tool: str) -> None:
        self.root = dict(schema)
        self.tool = tool
        defs = self.root.get("$defs")
        self.defs: Mapping[str, JsonValue] = defs if isinstance(defs, dict) else {}
        self.plans: dict[str, _Plan] = {}
        self.depth = 0

    def form(self) -> StrictForm:
        if self.root.get("type") != "object" and "properties" not in self.root:
            raise self._refused("$", "is not an object schema")
        rest = dict(self.root)
        rest.pop("$defs", None)
        out, plan = self._node(rest, "$")
        if self.defs:
            converted: _Json = {}
            for name, value in self.defs.items():
                converted[name], self.plans[name] = self._node(value, f"$.$defs.{name}")
            out["$defs"] = converted
        self.plans[_ROOT] = plan
        return StrictForm(out, plan, self.plans)

    def _node(self, node: JsonValue, path: str) -> tuple[_Json, _Plan]:
        # An MCP server's schema is untrusted: nesting deep enough to exhaust the stack
        # is refused like any other schema strict mode cannot take.
        self.depth += 1
        try:
            if self.depth > _MAX_SCHEMA_DEPTH:
                raise self._refused(path, f"nests deeper than {_MAX_SCHEMA_DEPTH} levels")
            return self._converted(node, path)
        finally:
            self.depth -= 1

    def _converted(self, node: JsonValue, path: str) -> tuple[_Json, _Plan]:
        if not isinstance(node, dict):
            raise self._refused(path, "is not a JSON Schema object")
        rest = dict(node)
        for key, why in _REFUSED.items():
            if key in rest:
                raise self._refused(path, why)
        rest = self._merged_all_of(rest, path)
        if "oneOf" in rest:
            rest["anyOf"] = rest.pop("oneOf")
        if "$ref" in rest:
            return self._ref(rest, path)
        out: _Json = {}
        plan: _Plan = None
        if "anyOf" in rest:
            out["anyOf"], plan = self._union(rest.pop("anyOf"), path)
        if rest.get("type") == "object" or "properties" in rest:
            plan = self._object(rest, out, path)
        elif rest.get("type") == "array" or "items" in rest:
            plan = self._array(rest, out, path)
        self._keep(rest, out)
        return out, plan

    def _merged_all_of(self, rest: _Json, path: str) -> _Json:
        # A loop, not recursion: a schema's allOf chain may be as deep as it likes.
        while "allOf" in rest:
            all_of = rest.pop("allOf")
            if not isinstance(all_of, list) or len(all_of) != 1 or not isinstance(all_of[0], dict):
                reason = "uses allOf of more than one schema, which strict mode has no form for"
                raise self._refused(path, reason)
            rest = {**all_of[0], **rest}
        return rest

    def _ref(self, rest: _Json, path: str) -> tuple[_Json, _Plan]:
        ref = rest.pop("$ref")
        name = self._ref_name(ref, path)
        if not rest:
            return {"$ref": ref}, _Ref(name)
        # The subset takes no keyword beside `$ref`, but takes them beside `anyOf`.
        out: _Json = {"anyOf": [{"$ref": ref}]}
        self._keep(rest, out)
        return out, _Ref(name)

    def _ref_name(self, ref: JsonValue, path: str) -> str:
        if ref == _ROOT:
            return _ROOT
        if isinstance(ref, str) and ref.startswith(_DEFS_PREFIX):
            name = ref[len(_DEFS_PREFIX) :]
            if name in self.defs:
                return name
        raise self._refused(path, f"refers to {ref!r}, which is not in its $defs")

    def _object(self, rest: _Json, out: _Json, path: str) -> _Plan:
        properties = rest.pop("properties", None)
        extra = rest.pop("additionalProperties", None)
        required = rest.pop("required", [])
        if not isinstance(properties, dict) or not properties:
            if extra is not False:
                raise self._refused(
                    path, "is an object of free keys, which closed could only be {}"
                )
            properties = {}
        names = required if isinstance(required, list) else []
        wanted = {name for name in names if isinstance(name, str)}
        converted: _Json = {}
        plans: dict[str, _Plan] = {}
        nullable: set[str] = set()
        for name, value in properties.items():
            node, plans[name] = self._node(value, f"{path}.{name}")
            if name not in wanted and not _admits_null(node):
                node = _nullable(node, value)
                nullable.add(name)
            converted[name] = node
        out["type"] = rest.pop("type", "object")
        out["properties"] = converted
        out["required"] = list(converted)
        out["additionalProperties"] = False
        kept = {name: plan for name, plan in plans.items() if plan is not None}
        return _Object(frozenset(nullable), kept) if nullable or kept else None

    def _array(self, rest: _Json, out: _Json, path: str) -> _Plan:
        items = rest.pop("items", None)
        if items is None:
            return None
        out["items"], plan = self._node(items, f"{path}[]")
        return None if plan is None else _Array(plan)

    def _union(self, variants: JsonValue, path: str) -> tuple[list[JsonValue], _Plan]:
        if not isinstance(variants, list):
            raise self._refused(path, "has an anyOf that is not a list")
        converted: list[JsonValue] = []
        by_kind: dict[str, list[tuple[JsonValue, _Plan]]] = {}
        for index, variant in enumerate(variants):
            node, plan = self._node(variant, f"{path}.anyOf[{index}]")
            converted.append(node)
            kind = self._kind(variant, set())
            if kind is not None:
                by_kind.setdefault(kind, []).append((variant, plan))
        objects = by_kind.get("object", [])
        arrays = by_kind.get("array", [])
        if len(arrays) > 1 and any(plan is not None for _, plan in arrays):
            raise self._refused(path, _AMBIGUOUS)
        object_plan = self._objects_plan(objects, path)
        array_plan = arrays[0][1] if arrays else None
        if object_plan is None and array_plan is None:
            return converted, None
        return converted, _Union(object_plan, array_plan)

    def _objects_plan(self, objects: list[tuple[JsonValue, _Plan]], path: str) -> _Plan:
        if not any(plan is not None for _, plan in objects):
            return None
        if len(objects) == 1:
            return objects[0][1]
        tagged = self._tags([variant for variant, _ in objects])
        if tagged is None:
            raise self._refused(path, _AMBIGUOUS)
        tag, values = tagged
        return _Tagged(tag, {value: plan for value, (_, plan) in zip(values, objects, strict=True)})

    def _tags(self, variants: list[JsonValue]) -> tuple[str, list[str]] | None:
        """A property every variant holds with a distinct constant string, and its values."""
        shapes = [self._resolved(variant, set()) for variant in variants]
        properties = [s.get("properties") if isinstance(s, dict) else None for s in shapes]
        if not all(isinstance(p, dict) for p in properties):
            return None
        names = set.intersection(*(set(p) for p in properties if isinstance(p, dict)))
        for name in sorted(names):
            values = [_constant(p[name]) for p in properties if isinstance(p, dict)]
            strings = [value for value in values if isinstance(value, str)]
            if len(strings) == len(values) and len(set(strings)) == len(strings):
                return name, strings
        return None

    def _resolved(self, node: JsonValue, seen: set[str]) -> JsonValue:
        """`node`, or what its `$ref` (or a lone `allOf`) stands for."""
        while isinstance(node, dict):
            ref = node.get("$ref")
            all_of = node.get("allOf")
            if isinstance(ref, str) and ref not in seen:
                seen.add(ref)
                node = self.root if ref == _ROOT else self.defs.get(ref[len(_DEFS_PREFIX) :])
            elif isinstance(all_of, list) and len(all_of) == 1:
                node = all_of[0]
            else:
                break
        return node

    def _kind(self, node: JsonValue, seen: set[str]) -> str | None:
        shape = self._resolved(node, seen)
        if not isinstance(shape, dict):
            return None
        if shape.get("type") == "object" or "properties" in shape:
            return "object"
        if shape.get("type") == "array" or "items" in shape:
            return "array"
        return None

    def _keep(self, rest: _Json, out: _Json) -> None:
        form = rest.get("format")
        if form is not None and not (isinstance(form, str) and form in _FORMATS):
            described: _Json = {"format": rest.pop("format")}
        else:
            described = {}
        for key, value in rest.items():
            if key in _KEPT:
                out.setdefault(key, value)
            elif key != "discriminator":
                described[key] = value
        if described:
            _describe(out, described)

    def _refused(self, path: str, reason: str) -> StrictSchemaError:
        return StrictSchemaError(self.tool, path, reason)


_AMBIGUOUS: Final = (
    "is a union of objects (or arrays) with optional properties and no constant tag "
    "naming the branch, so a null sent for one could not be told back"
)


def _constant(node: JsonValue) -> JsonValue:
    if not isinstance(node, dict):
        return None
    if "const" in node:
        return node["const"]
    enum = node.get("enum")
    return enum[0] if isinstance(enum, list) and len(enum) == 1 else None


def _admits_null(node: _Json) -> bool:
    kind = node.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    enum = node.get("enum")
    if (isinstance(enum, list) and None in enum) or ("const" in node and node["const"] is None):
        return True
    variants = node.get("anyOf")
    return isinstance(variants, list) and any(
        isinstance(v, dict) and _admits_null(v) for v in variants
    )


def _nullable(node: _Json, original: JsonValue) -> _Json:
    """`node` or null; the description says what a null means."""
    inner = dict(node)
    description = inner.pop("description", None)
    title = inner.pop("title", None)
    given = isinstance(original, dict) and "default" in original
    said = "null: the default" if given else "null: not given"
    out: _Json = {"anyOf": [inner, {"type": "null"}]}
    if title is not None:
        out["title"] = title
    out["description"] = f"{description} ({said})" if isinstance(description, str) else f"({said})"
    return out


def _describe(out: _Json, described: _Json) -> None:
    # The model still reads what the subset cannot enforce; the registry enforces it.
    said = ", ".join(f"{key}: {json.dumps(value)}" for key, value in described.items())
    description = out.get("description")
    out["description"] = f"{description}\n\n{{{said}}}" if description else f"{{{said}}}"
