r"""Pure conversions between layer0 values and what the database stores.

Values are canonical JSON text (sorted keys, UTF-8, `\u0000` escaped), the
same text `SqliteStore` stores, so every value reads back equal: integers of
any size, floats exactly, NUL characters inside strings. Not `jsonb`, which
refuses `\u0000`, and turns integers past 2**53 and floats into numerics.
"""

from __future__ import annotations

import re
from typing import Final

from pydantic import JsonValue

from neuron_turn.plugins.stored_values import decode_value, scope_key
from neuron_turn.plugins.stored_values import encode_value as canonical_json

__all__ = [
    "SEARCHED_CHARACTERS",
    "decode_value",
    "encode_value",
    "query_words",
    "scope_key",
    "searched_text",
]

SEARCHED_CHARACTERS: Final = 100_000
"""How much of a value's text is indexed and searched: a tsvector holds at most 1 MiB."""

# Postgres's parser reads `a/b` as a file path and `x.com/a` as a URL, one token
# each, so the words of a key or value would not be found alone; a word here is a
# run of letters and digits. Lone surrogates cannot be sent, so they separate too.
_NOT_A_WORD: Final = re.compile(r"[\W_\ud800-\udfff]+")


def encode_value(value: JsonValue, *, scope: str, key: str) -> tuple[str, str]:
    """Return `value` as canonical JSON text and the plain text of its strings (for snippets).

    Raises:
        SerializationError: `value` is not JSON; the message names scope and key.
    """
    strings: list[str] = []
    text = canonical_json(value, scope=scope, key=key, strings=strings)
    return text, "\n".join(strings).replace("\0", " ")


def searched_text(key: str, body: str) -> str:
    """The words of `key` and `body` that are indexed, separated by spaces."""
    return _NOT_A_WORD.sub(" ", f"{key} {body[:SEARCHED_CHARACTERS]}")


def query_words(query: str) -> list[str]:
    """The words of a search query, each matched alone; no syntax in it is ever interpreted."""
    return _NOT_A_WORD.sub(" ", query).split()
