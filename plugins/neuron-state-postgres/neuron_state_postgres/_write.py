"""A write transaction (`apply`): a batch's statements pipelined, in two round trips.

Why: one round trip per statement made a turn's transaction (check, begin,
locks, append, record, commit) cost nine trips and psycopg's async machinery
around each. In pipeline mode the statements go out together: BEGIN and every
statement of the batch, one sync, then COMMIT. The sync in between is there
because an append's outcome (a `HistoryConflict`, a value that is not a list)
is decided here, after the server answered and before anything commits, and
because a connection found dropped by then has committed nothing, so the
batch can run again on another (the pool does not check connections first).

A batch holding more than `PIPELINED_AT_MOST` characters goes statement by
statement instead: psycopg's pipeline mode (3.3) can wait for ever on a
statement of some 12 MiB (the server waiting for the rest of it, the client
for its answer), and beside such a transfer the round trips cost nothing.

Every psycopg error leaves here as `WriteFailed` naming the operation that
failed, with the psycopg error chained (server messages hold data, never the
connection string).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager, nullcontext, suppress
from dataclasses import dataclass, field
from typing import Final, TypeAlias

import psycopg
from psycopg import AsyncCursor, AsyncPipeline
from psycopg.errors import DeadlockDetected, SerializationFailure
from psycopg.pq import TransactionStatus
from psycopg.rows import TupleRow

from layer0 import HistoryConflict, WriteFailed
from neuron_turn.plugins.store_ops import Append, Forget, PutTurn, Remove

from ._db import Connection, failure
from ._statements import Statements

__all__ = ["PIPELINED_AT_MOST", "Append", "Forget", "Op", "Put", "PutTurn", "Remove", "apply"]

Cursor: TypeAlias = AsyncCursor[TupleRow]

# A batch that touches keys another batch touches in the other order may
# deadlock; the server aborts one of them, which is safe to run again.
_ATTEMPTS: Final = 5
_RETRIED: Final = (DeadlockDetected, SerializationFailure)

PIPELINED_AT_MOST: Final = 1 << 20
"""The most characters of values a batch sends pipelined; a bigger one goes one by one."""


@dataclass(frozen=True, slots=True)
class Put:
    """Store `value` (JSON text) under `key`, with `body` for snippets and `words` to index."""

    scope: str
    key: str
    value: str
    body: str
    words: str


Op: TypeAlias = Put | Remove | Append | PutTurn | Forget
"""One operation of an `apply` batch."""


async def apply(connection: Connection, sql: Statements, ops: Sequence[Op]) -> list[int]:
    """Apply `ops` in order in one transaction: all of them or, on any error, none.

    Returns the length of the list under each `Append`'s key after it, and the
    count of entries each `Forget` deleted, in order. A transaction the server
    aborted to break a deadlock is run again.

    Raises:
        WriteFailed: nothing was changed; the message names the failing operation
            (or, the connection lost with the COMMIT on its way, says the batch may
            have been applied).
        HistoryConflict: an `Append` found another length than it expected.
    """
    for index, op in enumerate(ops):
        _refuse_nul(ops, index, op)
    for attempt in range(1, _ATTEMPTS + 1):
        sent = _Sent()
        try:
            return await _transaction(connection, sql, ops, sent)
        except _RETRIED as exc:
            if attempt == _ATTEMPTS:
                raise WriteFailed(_apply_failure(ops, sent.failed_at(exc), exc)) from exc
        except (psycopg.Error, UnicodeEncodeError) as exc:  # the latter: a lone surrogate
            if sent.committing and connection.broken:
                raise WriteFailed(_commit_unknown(ops, exc)) from exc
            error = WriteFailed(_apply_failure(ops, sent.failed_at(exc), exc))
            raise failure(connection, error, exc, committing=sent.committing) from exc
    raise AssertionError("unreachable: the last attempt returns or raises")


@dataclass(slots=True)
class _Sent:
    """The cursors of a transaction's statements, queued so far: which op did an error hit?

    Why: in pipeline mode an error surfaces at a sync (or at a later statement's
    queuing), not at its own statement. The statements before it have their
    answers; it and those after it have none.
    """

    locks: list[Cursor] = field(default_factory=list)
    ops: list[list[Cursor]] = field(default_factory=list)
    queuing: int | None = None
    """The op whose statements are being queued: psycopg reads the answers that have
    come while it queues, so an op's own error may surface at its next statement,
    before its cursors are recorded here."""
    checking: int | None = None
    """The op whose answer is being checked, once the server answered them all."""
    committing: bool = False
    """COMMIT is on its way: from here a dropped connection leaves the outcome unknown."""

    def failed_at(self, exc: BaseException) -> int:
        """The index of the op `exc` belongs to."""
        if self.checking is not None:
            return self.checking
        if isinstance(exc, UnicodeEncodeError) and self.queuing is not None:
            return self.queuing  # raised encoding a statement of the op being queued
        if _unanswered(self.locks):
            return 0
        for index, cursors in enumerate(self.ops):
            if _unanswered(cursors):
                return index
        if self.queuing is not None:
            return self.queuing  # every op queued before it was answered: its own error
        return max(0, len(self.ops) - 1)  # the COMMIT: the batch as a whole


def _unanswered(cursors: list[Cursor]) -> bool:
    return any(cursor.pgresult is None for cursor in cursors)


async def _transaction(
    connection: Connection, sql: Statements, ops: Sequence[Op], sent: _Sent
) -> list[int]:
    """Run `ops` as one pipelined transaction, recording its statements in `sent`.

    Anything raised leaves the connection out of the transaction, rolled back.
    """
    pipelined = _characters(ops) <= PIPELINED_AT_MOST
    try:
        async with _pipeline(connection) if pipelined else _unpipelined() as pipeline:
            # Named, not the server's default: an append's statement must see every
            # append committed before it took the key's lock, as only READ COMMITTED
            # does (at REPEATABLE READ it would count from a snapshot taken before
            # the wait, and take a changed history for the one it expected).
            await connection.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
            sent.locks = await _lock_keys(connection, sql, ops)
            for index, op in enumerate(ops):
                sent.queuing = index
                sent.ops.append(await _send(connection, sql, op))
            sent.queuing = None
            if pipeline is not None:
                await pipeline.sync()
            lengths: list[int] = []
            for index, op in enumerate(ops):
                if isinstance(op, Append):
                    sent.checking = index
                    lengths.append(await _appended(op, sent.ops[index]))
                elif isinstance(op, Forget):
                    sent.checking = index
                    lengths.append(await _counted(sent.ops[index]))
            sent.checking = None
            sent.committing = True
            await connection.execute("COMMIT")
        return lengths
    except BaseException:
        await _roll_back(connection)
        raise


def _pipeline(connection: Connection) -> AbstractAsyncContextManager[AsyncPipeline | None]:
    return connection.pipeline()


def _unpipelined() -> AbstractAsyncContextManager[AsyncPipeline | None]:
    return nullcontext(None)


def _characters(ops: Sequence[Op]) -> int:
    """How many characters of values and records `ops` send (names are short)."""
    total = 0
    for op in ops:
        if isinstance(op, Append):
            total += len(op.items)
        elif isinstance(op, Put):
            total += len(op.value) + len(op.body) + len(op.words)
        elif isinstance(op, PutTurn):
            total += len(op.record) + len(op.summary)
    return total


async def _roll_back(connection: Connection) -> None:
    """End a transaction left open by an error; a broken connection the pool replaces."""
    if connection.pgconn.transaction_status in (
        TransactionStatus.INTRANS,
        TransactionStatus.INERROR,
    ):
        with suppress(psycopg.Error):
            await connection.rollback()


async def _send(connection: Connection, sql: Statements, op: Op) -> list[Cursor]:
    """Queue the statements of `op`; return their cursors (an append's answer is its last)."""
    if isinstance(op, Append):
        return [
            await connection.execute(sql.lock_for_append, (op.scope, op.key)),
            await connection.execute(
                sql.append,
                {
                    "scope": op.scope,
                    "key": op.key,
                    "id": op.append_id,
                    "items": op.items,
                    "count": op.count,
                    "expected": op.expected_length,
                },
            ),
        ]
    if isinstance(op, Put):
        row = (op.scope, op.key, op.value, op.body, op.words)
        return [
            await connection.execute(sql.upsert, row),
            await connection.execute(sql.delete_appended, (op.scope, op.key)),
        ]
    if isinstance(op, PutTurn):
        row5 = (op.turn_id, op.session, op.started, op.summary, op.record)
        return [await connection.execute(sql.put_turn, row5)]
    if isinstance(op, Forget):
        return await _send_forget(connection, sql, op)
    if "\0" in op.key:
        return []  # no such key can be stored, so there is nothing to delete
    return [
        await connection.execute(sql.delete, (op.scope, op.key)),
        await connection.execute(sql.delete_appended, (op.scope, op.key)),
    ]


async def _send_forget(connection: Connection, sql: Statements, op: Forget) -> list[Cursor]:
    """Queue the deletes of `op`; each but the appends' answers a count.

    Names holding NUL are left out: Postgres text cannot hold one, so nothing
    is stored under them.
    """
    scopes = [scope for scope in op.scopes if "\0" not in scope]
    sessions = [session for session in op.sessions if "\0" not in session]
    keys = [(scope, key) for scope, key in op.keys if "\0" not in scope + key]
    turns = [turn_id for turn_id in op.turns if "\0" not in turn_id]
    pairs = {"scopes": [scope for scope, _ in keys], "keys": [key for _, key in keys]}
    return [
        await connection.execute(sql.forget_scopes, (scopes,)),
        await connection.execute(sql.forget_scopes_appended, (scopes,)),
        await connection.execute(sql.forget_turns, (sessions,)),
        await connection.execute(sql.forget_sessionless_turns, (turns,)),
        await connection.execute(sql.forget_keys, pairs),
    ]


async def _counted(cursors: list[Cursor]) -> int:
    """The entries a `Forget` deleted, as the server's answers say."""
    gone = 0
    for cursor in cursors:
        if cursor.description is not None:
            row = await cursor.fetchone()
            assert row is not None  # count(*) answers one row
            gone += int(row[0])
    return gone


async def _appended(op: Append, cursors: list[Cursor]) -> int:
    """The list's length after `op`, as the server's answer says; raise if it must not commit.

    The answer is `(length before, appended before, length after)`: the last is
    NULL when the statement appended nothing (see `_statements`).
    """
    row = await cursors[-1].fetchone()
    assert row is not None  # the key's row exists: `lock_for_append` made it
    before, has, after = row
    if has:
        return int(before)
    if before is None:
        raise _NotAList(f"the value of key {op.key!r} in scope {op.scope} is not a list")
    if after is None:
        assert op.expected_length is not None  # else the statement appends
        raise HistoryConflict(op.session, expected=op.expected_length, found=int(before))
    return int(after)


async def _lock_keys(connection: Connection, sql: Statements, ops: Sequence[Op]) -> list[Cursor]:
    """Take a lock per key a batch touches, all at once, in one order for every batch.

    Why: two batches touching the same keys in opposite orders would each hold a
    row the other waits for, and the server would abort one after a second. With
    the keys locked up front in sorted order, one simply waits for the other. A
    batch of one key needs none: its row lock is the first lock it takes.
    """
    keys = {_lock_key(op) for op in ops}
    if len(keys) > 1:
        return [await connection.execute(sql.lock_keys, (sorted(keys),))]
    return []


def _lock_key(op: Op) -> int:
    """A 64-bit lock id for the row `op` writes (a collision only makes two batches queue)."""
    if isinstance(op, Forget):
        name = "forget\0" + "\0".join(op.sessions)
    elif isinstance(op, PutTurn):
        name = f"turn\0{op.turn_id}"
    else:
        name = f"{op.scope}\0{op.key}"
    digest = hashlib.blake2b(name.encode(errors="surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def _refuse_nul(ops: Sequence[Op], index: int, op: Op) -> None:
    """Refuse a name holding NUL, which Postgres text cannot hold (JSON values escape it).

    A delete of such a key is no error: no such key can be stored.
    """
    if isinstance(op, Remove | Forget):
        return
    names = (
        (("turn id", op.turn_id), ("session", op.session or ""))
        if isinstance(op, PutTurn)
        else (("key", op.key),)
    )
    for what, name in names:
        if "\0" in name:
            problem = _NulInName(
                f"the {what} {name!r} holds a NUL character, which PostgreSQL refuses"
            )
            raise WriteFailed(_apply_failure(ops, index, problem)) from problem


class _NulInName(psycopg.DataError):
    """A key, turn id or session holding NUL (reported as WriteFailed naming it)."""


class _NotAList(psycopg.DataError):
    """An append to a key whose value is not a JSON list (reported as WriteFailed)."""


def _apply_failure(ops: Sequence[Op], failed_at: int, exc: Exception) -> str:
    """Describe a failed `apply`: which operation failed, and that none was applied."""
    if len(ops) == 1:
        return f"{_describe(ops[0])} failed: {exc}"
    return (
        f"batch of {len(ops)} operations failed at #{failed_at + 1} "
        f"({_describe(ops[failed_at])}); none was applied: {exc}"
    )


def _commit_unknown(ops: Sequence[Op], exc: Exception) -> str:
    """Describe a batch whose connection was lost with its COMMIT on the way: applied or not."""
    what = _describe(ops[0]) if len(ops) == 1 else f"batch of {len(ops)} operations"
    return (
        f"{what}: the connection was lost while committing, so it may or may not have been"
        f" applied (each operation is safe to apply again: an append once per id): {exc}"
    )


def _describe(op: Op) -> str:
    """Name one operation: its kind, key and scope (a turn record: its id)."""
    if isinstance(op, PutTurn):
        return f"write of turn record {op.turn_id!r}"
    if isinstance(op, Forget):
        return f"forgetting of session(s) {', '.join(map(repr, op.sessions))}"
    verb = "write" if isinstance(op, Put) else "delete" if isinstance(op, Remove) else "append"
    return f"{verb} of key {op.key!r} in scope {op.scope}"
