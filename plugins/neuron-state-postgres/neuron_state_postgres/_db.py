"""The SQL work of each store operation, on one pooled connection (autocommit mode).

Every psycopg error leaves here as a layer0 error naming the operation, the
scope and the key, with the psycopg error chained (server messages hold
data, never the connection string).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Final, TypeAlias

import psycopg
from psycopg import AsyncConnection
from psycopg.errors import DeadlockDetected, SerializationFailure
from psycopg.rows import TupleRow

from layer0 import HistoryConflict, StateError, WriteFailed

from ._statements import Statements

__all__ = [
    "Append",
    "Connection",
    "Op",
    "Put",
    "PutTurn",
    "Remove",
    "apply",
    "failing_as",
    "list_keys",
    "read",
    "read_turn",
    "search",
    "turn_sessions",
    "turn_summaries",
]

Connection: TypeAlias = AsyncConnection[TupleRow]

# A batch that touches keys another batch touches in the other order may
# deadlock; the server aborts one of them, which is safe to run again.
_ATTEMPTS: Final = 5
_RETRIED: Final = (DeadlockDetected, SerializationFailure)


@dataclass(frozen=True, slots=True)
class Put:
    """Store `value` (JSON text) under `key`, with `body` for snippets and `words` to index."""

    scope: str
    key: str
    value: str
    body: str
    words: str


@dataclass(frozen=True, slots=True)
class Remove:
    """Delete `key` if it is there."""

    scope: str
    key: str


@dataclass(frozen=True, slots=True)
class Append:
    """Append `count` items (`items`, a JSON array's text) to the list under `key`.

    Once per `append_id`; when `expected_length` is set, only if the list
    holds exactly that many items (else `HistoryConflict` naming `session`).
    """

    scope: str
    key: str
    append_id: str
    items: str
    count: int
    expected_length: int | None
    session: str


@dataclass(frozen=True, slots=True)
class PutTurn:
    """Store a turn record (its JSON, and its summary's), replacing the one with its id."""

    turn_id: str
    session: str | None
    started: str
    summary: str
    record: str


Op: TypeAlias = Put | Remove | Append | PutTurn
"""One operation of an `apply` batch."""


async def apply(connection: Connection, sql: Statements, ops: Sequence[Op]) -> list[int]:
    """Apply `ops` in order in one transaction: all of them or, on any error, none.

    Returns the length of the list under each `Append`'s key after it, in order.
    A transaction the server aborted to break a deadlock is run again.

    Raises:
        WriteFailed: nothing was changed; the message names the failing operation.
        HistoryConflict: an `Append` found another length than it expected.
    """
    for attempt in range(1, _ATTEMPTS + 1):
        failed_at: list[int] = [0]
        try:
            async with connection.transaction():
                return await _apply_ops(connection, sql, ops, failed_at)
        except _RETRIED as exc:
            if attempt == _ATTEMPTS:
                raise WriteFailed(_apply_failure(ops, failed_at[0], exc)) from exc
        except psycopg.Error as exc:
            raise WriteFailed(_apply_failure(ops, failed_at[0], exc)) from exc
        except UnicodeEncodeError as exc:  # a lone surrogate in a key
            raise WriteFailed(_apply_failure(ops, failed_at[0], exc)) from exc
    raise AssertionError("unreachable: the last attempt returns or raises")


async def _apply_ops(
    connection: Connection, sql: Statements, ops: Sequence[Op], failed_at: list[int]
) -> list[int]:
    """Apply `ops` inside the open transaction; `failed_at[0]` follows the one running."""
    lengths: list[int] = []
    await _lock_keys(connection, sql, ops)
    for index, op in enumerate(ops):
        failed_at[0] = index
        if isinstance(op, Remove) and "\0" in op.key:
            continue  # no such key can be stored, so there is nothing to delete
        _refuse_nul(op)
        if isinstance(op, Append):
            lengths.append(await _append(connection, sql, op))
        elif isinstance(op, Put):
            row = (op.scope, op.key, op.value, op.body, op.words)
            await connection.execute(sql.upsert, row)
            await connection.execute(sql.delete_appended, (op.scope, op.key))
        elif isinstance(op, PutTurn):
            row5 = (op.turn_id, op.session, op.started, op.summary, op.record)
            await connection.execute(sql.put_turn, row5)
        else:
            await connection.execute(sql.delete, (op.scope, op.key))
            await connection.execute(sql.delete_appended, (op.scope, op.key))
    return lengths


async def _lock_keys(connection: Connection, sql: Statements, ops: Sequence[Op]) -> None:
    """Take a lock per key a batch touches, all at once, in one order for every batch.

    Why: two batches touching the same keys in opposite orders would each hold a
    row the other waits for, and the server would abort one after a second. With
    the keys locked up front in sorted order, one simply waits for the other. A
    batch of one key needs none: its row lock is the first lock it takes.
    """
    keys = {_lock_key(op) for op in ops}
    if len(keys) > 1:
        await connection.execute(sql.lock_keys, (sorted(keys),))


def _lock_key(op: Op) -> int:
    """A 64-bit lock id for the row `op` writes (a collision only makes two batches queue)."""
    name = f"turn\0{op.turn_id}" if isinstance(op, PutTurn) else f"{op.scope}\0{op.key}"
    digest = hashlib.blake2b(name.encode(errors="surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def _refuse_nul(op: Op) -> None:
    """Refuse a name holding NUL, which Postgres text cannot hold (JSON values escape it)."""
    names = (
        (("turn id", op.turn_id), ("session", op.session or ""))
        if isinstance(op, PutTurn)
        else (("key", op.key),)
    )
    for what, name in names:
        if "\0" in name:
            raise _NulInName(f"the {what} {name!r} holds a NUL character, which PostgreSQL refuses")


class _NulInName(psycopg.DataError):
    """A key, turn id or session holding NUL (reported as WriteFailed naming it)."""


async def _append(connection: Connection, sql: Statements, op: Append) -> int:
    """Append inside the open transaction: a few index lookups, whatever the list's length.

    The key's row is locked first, so appends to one key never interleave.
    Returns the list's length afterwards (unchanged when `op` was appended before).
    """
    base = await _locked_base_length(connection, sql, op)
    cursor = await connection.execute(
        sql.last_length_and_has, {"scope": op.scope, "key": op.key, "id": op.append_id}
    )
    row = await cursor.fetchone()
    assert row is not None
    last, has = row
    length = base if last is None else int(str(last))
    if has:
        return length
    if op.expected_length is not None and op.expected_length != length:
        raise HistoryConflict(op.session, expected=op.expected_length, found=length)
    row5 = (op.scope, op.key, op.append_id, op.items, length + op.count)
    await connection.execute(sql.insert_appended, row5)
    return length + op.count


async def _locked_base_length(connection: Connection, sql: Statements, op: Append) -> int:
    """Lock the key's row (creating an empty list) and return the length stored whole in it."""
    while True:
        await connection.execute(sql.insert_empty, (op.scope, op.key))
        cursor = await connection.execute(sql.lock, (op.scope, op.key))
        row = await cursor.fetchone()
        if row is not None:
            break
        # Deleted by another transaction between the two statements: create it again.
    try:
        base = json.loads(str(row[0]))
    except ValueError:
        base = None
    if not isinstance(base, list):
        raise _NotAList(f"the value of key {op.key!r} in scope {op.scope} is not a list")
    return len(base)


class _NotAList(psycopg.DataError):
    """An append to a key whose value is not a JSON list (reported as WriteFailed)."""


async def read(
    connection: Connection, sql: Statements, scope: str, key: str
) -> tuple[str, list[str]] | None:
    """Return the JSON text stored under `key` and the item arrays appended to it, or None."""
    if "\0" in key:
        return None  # no such key can be stored
    async with failing_as(StateError, f"read of key {key!r} in scope {scope}"):
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
    async with failing_as(StateError, f"list of prefix {prefix!r} in scope {scope}"):
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
    async with failing_as(StateError, f"search in scope {scope}"):
        cursor = await connection.execute(sql.search, params)
        rows = await cursor.fetchall()
    return [(str(key), float(str(score)), str(snippet) or None) for key, score, snippet in rows]


async def read_turn(connection: Connection, sql: Statements, turn_id: str) -> str | None:
    """Return the JSON text of the record of `turn_id`, or None."""
    if "\0" in turn_id:
        return None
    async with failing_as(StateError, f"read of turn record {turn_id!r}"):
        cursor = await connection.execute(sql.read_turn, (turn_id,))
        row = await cursor.fetchone()
    return None if row is None else str(row[0])


async def turn_summaries(
    connection: Connection, sql: Statements, session: str | None, everything: bool, limit: int
) -> list[str]:
    """Return the JSON texts of up to `limit` turn summaries, newest first.

    Every turn's when `everything`, else those of `session` (None: turns without one).
    """
    async with failing_as(StateError, "list of turn records"):
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
    async with failing_as(StateError, "list of sessions with turn records"):
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
async def failing_as(error: type[StateError], what: str) -> AsyncIterator[None]:
    """Translate psycopg errors in the block into `error`, naming `what` failed."""
    try:
        yield
    except (psycopg.Error, UnicodeEncodeError) as exc:
        raise error(f"{what} failed: {exc}") from exc


def _apply_failure(ops: Sequence[Op], failed_at: int, exc: Exception) -> str:
    """Describe a failed `apply`: which operation failed, and that none was applied."""
    if len(ops) == 1:
        return f"{_describe(ops[0])} failed: {exc}"
    return (
        f"batch of {len(ops)} operations failed at #{failed_at + 1} "
        f"({_describe(ops[failed_at])}); none was applied: {exc}"
    )


def _describe(op: Op) -> str:
    """Name one operation: its kind, key and scope (a turn record: its id)."""
    if isinstance(op, PutTurn):
        return f"write of turn record {op.turn_id!r}"
    verb = "write" if isinstance(op, Put) else "delete" if isinstance(op, Remove) else "append"
    return f"{verb} of key {op.key!r} in scope {op.scope}"
