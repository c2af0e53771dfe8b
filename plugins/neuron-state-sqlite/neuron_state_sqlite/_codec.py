"""Pure conversions between layer0 values and what the database stores."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Hashable
from typing import Final, cast

from pydantic import JsonValue, TypeAdapter, ValidationError

from layer0 import Scope, SerializationError, StateError

__all__ = ["decode_value", "encode_items", "encode_value", "match_expression", "scope_key"]

_SCOPE: Final[TypeAdapter[Scope]] = TypeAdapter(Scope)
# What a query may hold that cannot reach FTS5 as text: NUL, lone surrogates.
_NOT_SENT: Final = re.compile("[\0\ud800-\udfff]")
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
        return _SCOPE.dump_json(_SCOPE.validate_python(scope)).decode()
    except ValidationError as exc:
        raise StateError(f"not a layer0 Scope: {scope!r}") from exc


def encode_value(value: JsonValue, *, scope: str, key: str) -> tuple[str, str]:
    """Return `value` as canonical JSON text and as the plain text search indexes.

    Only values that read back equal are accepted: tuples, non-string object
    keys, NaN and infinities would silently change shape through JSON.

    Raises:
        SerializationError: `value` is not JSON; the message names scope and key.
    """
    strings: list[str] = []
    return _encoded(value, strings, scope=scope, key=key), "\n".join(strings)


def encode_items(value: JsonValue, *, scope: str, key: str) -> str:
    """Return `value` as canonical JSON text, checked as `encode_value` checks it.

    Why: appended items are not searched, so their text for the index is never built.

    Raises:
        SerializationError: `value` is not JSON; the message names scope and key.
    """
    return _encoded(value, None, scope=scope, key=key)


def _encoded(value: JsonValue, strings: list[str] | None, *, scope: str, key: str) -> str:
    try:
        _collect_strings(value, strings)
        text = _ENCODER.encode(value)
        # Lone surrogates survive json.dumps but not SQLite's UTF-8.
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


def match_expression(query: str) -> str | None:
    """Return an FTS5 expression matching any word of `query`, or None if it has none.

    Each whitespace-separated word becomes a quoted phrase, so FTS5 operators,
    column filters and brackets in the user's text are only ever words. NUL
    ends an FTS5 string early, and a lone surrogate cannot be encoded for
    SQLite (a model may write either), so both are treated as separators too.
    """
    words = _NOT_SENT.sub(" ", query).split()
    if not words:
        return None
    return " OR ".join('"' + word.replace('"', '""') + '"' for word in words)
