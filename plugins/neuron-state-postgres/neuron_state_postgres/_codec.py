r"""Pure conversions between layer0 values and what the database stores.

Values are canonical JSON text (sorted keys, UTF-8, `\u0000` escaped), the
same text `SqliteStore` stores, so every value reads back equal: integers of
any size, floats exactly, NUL characters inside strings. Not `jsonb`, which
refuses `\u0000`, and turns integers past 2**53 and floats into numerics.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Hashable
from typing import Final, cast

from pydantic import JsonValue, TypeAdapter, ValidationError

from layer0 import Scope, SerializationError, StateError

__all__ = [
    "SEARCHED_CHARACTERS",
    "decode_value",
    "encode_items",
    "encode_value",
    "query_words",
    "scope_key",
    "searched_text",
]

SEARCHED_CHARACTERS: Final = 100_000
"""How much of a value's text is indexed and searched: a tsvector holds at most 1 MiB."""

_SCOPE: Final[TypeAdapter[Scope]] = TypeAdapter(Scope)
_ENCODER: Final = json.JSONEncoder(
    sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False
)
# Postgres's parser reads `a/b` as a file path and `x.com/a` as a URL, one token
# each, so the words of a key or value would not be found alone; a word here is a
# run of letters and digits. Lone surrogates cannot be sent, so they separate too.
_NOT_A_WORD: Final = re.compile(r"[\W_\ud800-\udfff]+")


def scope_key(scope: Scope) -> str:
    """Return the canonical JSON of `scope`, the column that keeps scopes apart.

    Raises:
        StateError: `scope` is not a layer0 `Scope`.
    """
    try:
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
    """Return `value` as canonical JSON text and the plain text of its strings (for snippets).

    Raises:
        SerializationError: `value` is not JSON; the message names scope and key.
    """
    strings: list[str] = []
    text = _encoded(value, strings, scope=scope, key=key)
    return text, "\n".join(strings).replace("\0", " ")


def encode_items(value: JsonValue, *, scope: str, key: str) -> str:
    """Return `value` as canonical JSON text, checked as `encode_value` checks it.

    Raises:
        SerializationError: `value` is not JSON; the message names scope and key.
    """
    return _encoded(value, None, scope=scope, key=key)


def _encoded(value: JsonValue, strings: list[str] | None, *, scope: str, key: str) -> str:
    try:
        _collect_strings(value, strings)
        text = _ENCODER.encode(value)
        # Lone surrogates survive json.dumps but not the UTF-8 the server takes.
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


def searched_text(key: str, body: str) -> str:
    """The words of `key` and `body` that are indexed, separated by spaces."""
    return _NOT_A_WORD.sub(" ", f"{key} {body[:SEARCHED_CHARACTERS]}")


def query_words(query: str) -> list[str]:
    """The words of a search query, each matched alone; no syntax in it is ever interpreted."""
    return _NOT_A_WORD.sub(" ", query).split()
