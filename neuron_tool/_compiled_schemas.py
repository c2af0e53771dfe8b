"""Input schemas checked and compiled once, reused by every tool that gives an equal one.

A tool source's tools are registered anew on every step of a run (`per_step`)
and on every request a served registry answers (`neuron_tool.mcp.serve_http`):
an MCP server's forty tools come as new objects each time, their schemas new
dicts equal to the last ones. Checking and compiling each schema again was
most of what such a step cost; here the registry finds the checked copy of a
schema and its compiled validator by the schema's JSON text.

Why keyed by content, in one bounded LRU table, rather than by tool object or
per source: tools are new objects on every listing (and views wrap them anew),
so their identity would never match; a changed schema is different text, so a
tool whose schema changed is never checked against its old one; one table
shared by every registry serves each step of a run and each request of a
gateway alike; and bounds on its entries and on their bytes keep a
long-running gateway whose upstream servers change their tools forever, or
send huge schemas, from growing without end: the least recently used go first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Final

from pydantic import JsonValue
from pydantic_core import from_json, to_json

from .schema import InputValidator

__all__ = ["COMPILED", "Compiled", "CompiledSchemas", "schema_key"]

CAPACITY: Final = 1024
"""Schemas kept at most: a gateway's upstream servers' tools many times over."""
MAX_BYTES: Final = 4 * 1024 * 1024
"""The JSON text of the schemas kept, in bytes at most, all together."""
MAX_SCHEMA_BYTES: Final = 256 * 1024
"""A schema longer than this as JSON is compiled each time, never kept."""


@dataclass(frozen=True, slots=True)
class Compiled:
    """A schema as the registry keeps it (its checked copy) and its compiled validator.

    `schema` is the table's own, never offered: registries share this entry, and a
    caller editing the schema its registry offers (a `prepare` narrowing it in
    place) must not change what another registry offers or checks. Each
    registration offers a copy of its own (`copy`).
    """

    schema: dict[str, JsonValue]
    validator: InputValidator
    text: bytes
    """`schema` as JSON (its key), which `copy` reads back: faster than copying the dicts."""

    @classmethod
    def of(
        cls, key: bytes, schema: dict[str, JsonValue], validator: InputValidator
    ) -> Compiled | None:
        """`schema` and its `validator` as kept under `key` (None: `key` reads back otherwise)."""
        compiled = cls(schema, validator, key)
        return compiled if compiled.copy() == schema else None

    def copy(self) -> dict[str, JsonValue]:
        """A copy of `schema` for one registration to offer, shared with no other."""
        copied: dict[str, JsonValue] = from_json(self.text)
        return copied


def schema_key(schema: object) -> bytes | None:
    """The JSON text `schema` is found by, or None when it is not to be kept.

    Key order is kept, not sorted: the order of a schema's properties is what
    the model is shown, so two orders are two schemas.
    """
    try:
        text = to_json(schema)
    except (ValueError, TypeError, RecursionError):
        return None  # not JSON: registering it fails, with the registry's own words
    return text if len(text) <= MAX_SCHEMA_BYTES else None


class CompiledSchemas:
    """Checked and compiled schemas by their JSON text: a bounded, least-recently-used table.

    Safe to share between threads (each run of `run_sync` has its own event
    loop, and every registry uses this one table): a lock guards the table;
    compiling happens outside it, so two threads may compile one schema at
    once, and the second's stays.
    """

    def __init__(self, *, capacity: int = CAPACITY, max_bytes: int = MAX_BYTES) -> None:
        """Start empty; keep `capacity` schemas and `max_bytes` of their JSON at most."""
        self.capacity: Final = capacity
        self.max_bytes: Final = max_bytes
        self._kept: OrderedDict[bytes, Compiled] = OrderedDict()
        self._bytes = 0
        self._lock: Final = threading.Lock()

    def __len__(self) -> int:
        return len(self._kept)

    @property
    def size(self) -> int:
        """The JSON text of the schemas kept, in bytes."""
        return self._bytes

    def get(self, key: bytes, schema: object) -> Compiled | None:
        """What was compiled for `key`, if it is `schema`'s, else None.

        The kept copy must also equal `schema`: a tuple or a non-string key
        reads as the same JSON as the list or string a checked copy holds, and
        must be refused as it would have been.
        """
        with self._lock:
            found = self._kept.get(key)
            if found is None:
                return None
            self._kept.move_to_end(key)
        return found if found.schema == schema else None

    def put(self, key: bytes, compiled: Compiled) -> None:
        """Keep `compiled` for `key`, dropping the least recently used past the bounds."""
        with self._lock:
            if self._kept.pop(key, None) is not None:
                self._bytes -= len(key)
            self._kept[key] = compiled
            self._bytes += len(key)
            while len(self._kept) > self.capacity or self._bytes > self.max_bytes:
                dropped, _ = self._kept.popitem(last=False)
                self._bytes -= len(dropped)

    def clear(self) -> None:
        """Forget every schema kept."""
        with self._lock:
            self._kept.clear()
            self._bytes = 0


COMPILED: Final = CompiledSchemas()
"""The table every registry finds compiled schemas in."""
