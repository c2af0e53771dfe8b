"""Pure conversions between layer0 values and what the database stores.

Values and scopes are canonical JSON text (`neuron_turn.plugins.stored_values`,
shared with every store); this module adds the text FTS5 indexes and reads.
"""

from __future__ import annotations

import re
from typing import Final

from pydantic import JsonValue

from neuron_turn.plugins.stored_values import decode_value, scope_key
from neuron_turn.plugins.stored_values import encode_value as canonical_json

__all__ = ["decode_value", "encode_value", "match_expression", "scope_key"]

# What a query may hold that cannot reach FTS5 as text: NUL, lone surrogates.
_NOT_SENT: Final = re.compile("[\0\ud800-\udfff]")


def encode_value(value: JsonValue, *, scope: str, key: str) -> tuple[str, str]:
    """Return `value` as canonical JSON text and as the plain text search indexes.

    Raises:
        SerializationError: `value` is not JSON; the message names scope and key.
    """
    strings: list[str] = []
    return canonical_json(value, scope=scope, key=key, strings=strings), "\n".join(strings)


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
