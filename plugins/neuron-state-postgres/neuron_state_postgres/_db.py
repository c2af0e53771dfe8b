"""The SQL of each reading store operation, on one pooled connection (autocommit mode).

Every psycopg error leaves here as a layer0 `StateError` naming the operation,
the scope and the key, with the psycopg error chained (server messages hold
data, never the connection string). Writes are `_write`'s.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TypeAlias

import psycopg
from psycopg import AsyncConnection
from psycopg.rows import TupleRow

from layer0 import StateError

from ._statements import Statements

__all__ = [
    "Connection",
    "ConnectionDropped",
    "failing_as",
    "list_keys",
    "read",
    "read_turn",
    "search",
    "turn_sessions",
    "turn_summaries",
]

Connection: TypeAlias = AsyncConnection[TupleRow]


class ConnectionDropped(Exception):
    """The connection turned out dropped by the server before anything could commit.

    Why: the pool does not check a connection before handing it out (a round
    trip per operation); an operation meeting a dropped one runs again on
    another, and raises `error` only when none is left to try.
    """

    def __init__(self, error: StateError) -> None:
        super().__init__(str(error))
        self.error = error


def failure(
    connection: Connection, error: StateError, cause: BaseException, *, committing: bool = False
) -> Exception:
    """`error` caused by `cause`, or `ConnectionDropped` carrying it when that is what happened.

    `committing`: the COMMIT may have reached the server, so the operation
    must not run again.
    """
    error.__cause__ = cause
    if connection.broken and not committing:
        return ConnectionDropped(error)
    return error


async def read(
    connection: Connection, sql: Statements, scope: str, key: str
) -> tuple[str, list[str]] | None:
    """Return the JSON text stored under `key` and the item arrays appended to it, or None."""
    if "\0" in key:
        return None  # no such key can be stored
    async with failing_as(connection, StateError, f"read of key {key!r} in scope {scope}"):
        cursor = await connection.execute(sql.read, (scope, key))
        row = await cursor.fetchone()
    if row is None:
        return None
    value, appended = row
    assert isinstance(appended, list)
    return str(value), [str(items) for items in appended]


async def list_keys(connection: Connection, sql: Statements, scope: str, prefix: str) -> list[str]:
    """Return the keys of `scope` starting with `prefix`, sorted by code point."""
    if "\0" in prefix:
        return []
    params = {"scope": scope, "prefix": prefix, "end": _after_prefix(prefix)}
    async with failing_as(connection, StateError, f"list of prefix {prefix!r} in scope {scope}"):
        cursor = await connection.execute(sql.keys, params)
        rows = await cursor.fetchall()
    return [str(key) for (key,) in rows]


def _after_prefix(prefix: str) -> str | None:
    """The least string after every string starting with `prefix` (None: there is none).

    Why: with it the scan of the primary key stops where the prefix's keys end.
    """
    chars = list(prefix)
    while chars:
        code = ord(chars.pop()) + 1
        if 0xD800 <= code <= 0xDFFF:
            code = 0xE000  # surrogates cannot be sent; no stored key holds one
        if code <= 0x10FFFF:
            return "".join(chars) + chr(code)
    return None


async def search(
    connection: Connection, sql: Statements, scope: str, words: list[str], limit: int
) -> list[tuple[str, float, str | None]]:
    """Return `(key, score, snippet)` of the best `limit` values matching any of `words`."""
    params = {"words": words, "scope": scope, "limit": limit}
    async with failing_as(connection, StateError, f"search in scope {scope}"):
        cursor = await connection.execute(sql.search, params)
        rows = await cursor.fetchall()
    return [(str(key), float(str(score)), str(snippet) or None) for key, score, snippet in rows]


async def read_turn(connection: Connection, sql: Statements, turn_id: str) -> str | None:
    """Return the JSON text of the record of `turn_id`, or None."""
    if "\0" in turn_id:
        return None
    async with failing_as(connection, StateError, f"read of turn record {turn_id!r}"):
        cursor = await connection.execute(sql.read_turn, (turn_id,))
        row = await cursor.fetchone()
    return None if row is None else str(row[0])


async def turn_summaries(
    connection: Connection, sql: Statements, session: str | None, everything: bool, limit: int
) -> list[str]:
    """Return the JSON texts of up to `limit` turn summaries, newest first.

    Every turn's when `everything`, else those of `session` (None: turns without one).
    """
    async with failing_as(connection, StateError, "list of turn records"):
        if everything:
            cursor = await connection.execute(sql.summaries, (limit,))
        else:
            cursor = await connection.execute(sql.session_summaries, (session, limit))
        rows = await cursor.fetchall()
    return [str(summary) for (summary,) in rows]


async def turn_sessions(
    connection: Connection, sql: Statements, limit: int
) -> list[tuple[str | None, int, str, str, str]]:
    """Return `(session, turns, first start, last start, first title)`, most recent first."""
    async with failing_as(connection, StateError, "list of sessions with turn records"):
        cursor = await connection.execute(sql.sessions, (limit,))
        rows = await cursor.fetchall()
    return [
        (
            None if session is None else str(session),
            int(str(turns)),
            str(first),
            str(last),
            _title(str(summary)),
        )
        for session, turns, first, last, summary in rows
    ]


def _title(summary: str) -> str:
    """The title of a stored summary ("" when it has none or does not parse)."""
    try:
        title = json.loads(summary).get("title")
    except (ValueError, AttributeError):
        return ""
    return title if isinstance(title, str) else ""


@asynccontextmanager
async def failing_as(
    connection: Connection, error: type[StateError], what: str
) -> AsyncIterator[None]:
    """Translate psycopg errors in the block into `error`, naming `what` failed.

    On a connection the server dropped, `ConnectionDropped` carrying it (a read
    is safe to run again).
    """
    try:
        yield
    except (psycopg.Error, UnicodeEncodeError) as exc:
        raise failure(connection, error(f"{what} failed: {exc}"), exc) from exc
