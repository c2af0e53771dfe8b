"""A value a JSON Schema accepts, made up from the schema alone (for `testing.SchemaProvider`).

It covers what pydantic writes: objects with required properties, arrays,
`$ref` to `$defs`, `anyOf`/`oneOf`/`allOf`, `enum`, `const`, `default`,
numeric bounds, string lengths and the common string formats. A `pattern`
it cannot satisfy in general: the value is then one the schema may refuse,
which a tool reports as an argument error, as it would a model's.
"""

from __future__ import annotations

from typing import Final

from pydantic import JsonValue

__all__ = ["value_for"]

_MAX_DEPTH: Final = 32
_FORMATS: Final[dict[str, str]] = {
    "date-time": "2026-01-01T00:00:00Z",
    "date": "2026-01-01",
    "time": "00:00:00Z",
    "duration": "P1D",
    "email": "user@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
    "hostname": "example.com",
}


def value_for(schema: JsonValue) -> JsonValue:
    """A value `schema` accepts, built from its own constraints."""
    return _value(schema, schema, 0)


def _value(schema: JsonValue, root: JsonValue, depth: int) -> JsonValue:
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return None
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return _value(_resolved(ref, root), root, depth + 1)
    if "const" in schema:
        return schema["const"]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    if "default" in schema:
        return schema["default"]
    for combined in ("anyOf", "oneOf", "allOf"):
        options = schema.get(combined)
        if isinstance(options, list) and options:
            return _value(_first_not_null(options, root), root, depth + 1)
    return _typed(schema, _type_of(schema), root, depth)


def _typed(schema: dict[str, JsonValue], kind: str, root: JsonValue, depth: int) -> JsonValue:
    if kind == "object":
        return _object(schema, root, depth)
    if kind == "array":
        return _array(schema, root, depth)
    if kind in ("integer", "number"):
        return _number(schema, integer=kind == "integer")
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return _string(schema)


def _type_of(schema: dict[str, JsonValue]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if isinstance(k, str)]
        kind = next((k for k in kinds if k != "null"), kinds[0] if kinds else None)
    if isinstance(kind, str):
        return kind
    if "properties" in schema:
        return "object"
    if "items" in schema or "prefixItems" in schema:
        return "array"
    return "string"


def _object(schema: dict[str, JsonValue], root: JsonValue, depth: int) -> JsonValue:
    properties = schema.get("properties")
    required = schema.get("required")
    if not isinstance(properties, dict):
        return {}
    wanted = (
        [name for name in required if isinstance(name, str)] if isinstance(required, list) else []
    )
    return {name: _value(properties.get(name, {}), root, depth + 1) for name in wanted}


def _array(schema: dict[str, JsonValue], root: JsonValue, depth: int) -> JsonValue:
    prefix = schema.get("prefixItems")
    if isinstance(prefix, list):
        return [_value(item, root, depth + 1) for item in prefix]
    least = schema.get("minItems")
    count = least if isinstance(least, int) and least > 0 else 1
    most = schema.get("maxItems")
    if isinstance(most, int):
        count = min(count, most)
    item = _value(schema.get("items", {}), root, depth + 1)
    return [item for _ in range(count)]


def _number(schema: dict[str, JsonValue], *, integer: bool) -> int | float:
    """0 when the bounds allow it, else the first bound-derived candidate they allow."""
    low, high = _bound(schema, "minimum"), _bound(schema, "maximum")
    above, below = _bound(schema, "exclusiveMinimum"), _bound(schema, "exclusiveMaximum")

    def allowed(x: float) -> bool:
        return (
            (low is None or x >= low)
            and (high is None or x <= high)
            and (above is None or x > above)
            and (below is None or x < below)
            and (not integer or x == int(x))
        )

    floor = low if low is not None else above
    ceiling = high if high is not None else below
    candidates = [0, low, high, None if above is None else above + 1]
    candidates += [None if below is None else below - 1]
    if floor is not None and ceiling is not None:
        candidates.append((floor + ceiling) / 2)
    for x in candidates:
        if x is not None and allowed(x):
            return int(x) if integer else float(x)
    return 0 if integer else 0.0


def _bound(schema: dict[str, JsonValue], key: str) -> float | None:
    value = schema.get(key)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    return None


def _string(schema: dict[str, JsonValue]) -> str:
    form = schema.get("format")
    text = _FORMATS.get(form, "a") if isinstance(form, str) else "a"
    least = schema.get("minLength")
    if isinstance(least, int) and len(text) < least:
        text += "a" * (least - len(text))
    most = schema.get("maxLength")
    if isinstance(most, int):
        text = text[:most]
    return text


def _first_not_null(options: list[JsonValue], root: JsonValue) -> JsonValue:
    """The first option that is not `{"type": "null"}` (a more telling value), else the first."""
    for option in options:
        target = option
        if isinstance(option, dict) and isinstance(option.get("$ref"), str):
            target = _resolved(str(option["$ref"]), root)
        if not (isinstance(target, dict) and target.get("type") == "null"):
            return option
    return options[0]


def _resolved(ref: str, root: JsonValue) -> JsonValue:
    """The schema a local `$ref` (`#/$defs/Name`) points at; `{}` when it points nowhere."""
    if not ref.startswith("#"):
        return {}
    node = root
    for key in (part for part in ref[1:].split("/") if part):
        key = key.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or key not in node:
            return {}
        node = node[key]
    return node
