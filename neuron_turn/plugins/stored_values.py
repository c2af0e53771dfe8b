"""Values as a state store keeps them: canonical JSON text, checked to read back equal.

For state store plugins (`neuron-state-sqlite`, `neuron-state-postgres`), so
every store turns values and scopes into text alike: sorted keys, UTF-8, and
only what reads back equal (tuples, non-string object keys, NaN and
infinities would silently change shape through JSON, and lone surrogates
cannot be stored as UTF-8). The strings inside a value come out too, for a
store's search index.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Hashable
from typing import Final, cast

from pydantic import JsonValue, TypeAdapter, ValidationError
from pydantic_core import PydanticSerializationError

from layer0 import Scope, SerializationError, StateError

__all__ = ["decode_value", "encode_value", "scope_key"]

_SCOPE: Final[TypeAdapter[Scope]] = TypeAdapter(Scope)
# One encoder for every value: `json.dumps` with options builds a new one per call.
_ENCODER: Final = json.JSONEncoder(
    sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False
)


def scope_key(scope: Scope) -> str:
    """Return the canonical JSON of `scope`, the column that keeps scopes apart.

    The wire form is injective over scopes (`"global"`, `{"session":"a"}` and
    `{"custom":"a"}` all differ), so no two scopes can ever share a row.

    Raises:
        StateError: `scope` is not a layer0 `Scope`.
        SerializationError: `scope` names an id UTF-8 cannot hold (a lone surrogate).
    """
    try:
        # A turn's writes name the same few scopes over and over; the type is
        # in the key so that equal objects of different types never share one.
        return _cached_scope_key(cast(Hashable, type(scope)), scope)
    except TypeError:  # unhashable: not a Scope model, but validation says so
        return _scope_key(scope)


@functools.lru_cache(maxsize=1024)
def _cached_scope_key(kind: Hashable, scope: Scope) -> str:
    return _scope_key(scope)


def _scope_key(scope: Scope) -> str:
    try:
        validated = _SCOPE.validate_python(scope)
    except ValidationError as exc:
        raise StateError(f"not a layer0 Scope: {scope!r}") from exc
    try:
        return _SCOPE.dump_json(validated).decode()
    except PydanticSerializationError as exc:
        # A lone surrogate in its id (argv bytes that are not UTF-8 decode to
        # them): no store can hold it, so the same call can never pass.
        raise SerializationError(f"cannot store scope {scope!r} as JSON: {exc}") from exc


def encode_value(
    value: JsonValue, *, scope: str, key: str, strings: list[str] | None = None
) -> str:
    """Return `value` as canonical JSON text; append every string in it to `strings` if given.

    `scope` and `key` name the value in the error.

    Raises:
        SerializationError: `value` is not JSON that reads back equal.
    """
    try:
        _collect_strings(value, strings)
        text = _ENCODER.encode(value)
        # Lone surrogates survive json.dumps but not the UTF-8 a database takes.
        text.encode()
    except (TypeError, ValueError, RecursionError) as exc:
        raise SerializationError(
            f"cannot store the value of key {key!r} in scope {scope} as JSON: {exc}"
        ) from exc
    return text


def decode_value(text: str, *, scope: str, key: str) -> JsonValue:
    """Return the value stored as `text`.

    Raises:
        SerializationError: the stored text is not JSON (written by something else).
    """
    try:
        value: JsonValue = json.loads(text)
    except ValueError as exc:
        raise SerializationError(
            f"the stored value of key {key!r} in scope {scope} is not valid JSON: {exc}"
        ) from exc
    return value


def _collect_strings(value: object, out: list[str] | None) -> None:
    """Append every string in `value` to `out` (if given); raise TypeError on anything not JSON."""
    if value is None or isinstance(value, bool | int | float):
        return
    if isinstance(value, str):
        if out is not None:
            out.append(value)
    elif isinstance(value, list):
        for item in value:
            _collect_strings(item, out)
    elif isinstance(value, dict):
        for name, item in value.items():
            if not isinstance(name, str):
                raise TypeError(f"object keys must be strings, not {type(name).__name__}")
            _collect_strings(item, out)
    else:
        raise TypeError(f"{type(value).__name__} is not a JSON type")
