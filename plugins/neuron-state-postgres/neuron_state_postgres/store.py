"""`PostgresStore`: a `layer0.StateStore` in a PostgreSQL database, shared by many machines."""

from __future__ import annotations

import asyncio
import builtins
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Final, TypeVar, assert_never

import psycopg_pool
from pydantic import JsonValue

from layer0 import (
    DeleteMemoryEffect,
    HistoryAppend,
    Scope,
    SearchResult,
    SerializationError,
    SessionId,
    SessionTurns,
    StateError,
    TurnRecord,
    TurnSummary,
    WriteMemoryEffect,
)
from neuron_turn.plugins.store_ops import Append, Remove, append_op, forget_op, turn_op

from . import _connect, _db, _write
from ._codec import (
    SEARCHED_CHARACTERS,
    decode_value,
    encode_value,
    query_words,
    scope_key,
    searched_text,
)
from ._conninfo import Conninfo
from ._statements import Statements
from .errors import ConnectFailedError, ReadOnlyStoreError

__all__ = ["PostgresStore"]

T = TypeVar("T")

_MAX_LIMIT: Final = 2**63 - 1  # Postgres bigint
_MAX_IDENTIFIER: Final = 63  # bytes; Postgres cuts longer names short


class PostgresStore:
    """A `layer0.StateStore` in a PostgreSQL database, safe for many processes on many machines.

    The same contract as `SqliteStore`, value for value and error for error:
    values are canonical JSON text (so whatever was written reads back equal),
    each write, delete or `apply` batch is one transaction (all or none), a
    session's history grows by `append_history` one row per turn, once per
    turn id, at a cost that does not grow with the session's length, and
    appends from any number of connections queue on a lock of the session's
    row, so none is lost or doubled. `search` is Postgres full-text search,
    ranked, with snippets. Turn records are kept beside the state
    (a `layer0.TurnRecordStore`).

    Everything lives in one Postgres schema (`schema`, created with its tables
    on first use), so several stores or other programs can share a database.
    Every call is async: psycopg's async connections from one pool, never a
    blocking call on the event loop. A write whose caller is cancelled still
    finishes (or fails) whole; `close` waits for it.

    Use it as `async with PostgresStore(url) as store:`, or call `close()`.
    """

    def __init__(
        self,
        conninfo: str,
        *,
        schema: str = "neuron",
        min_size: int = 1,
        max_size: int = 10,
        connect_timeout: float = 10.0,
        timeout: float = 30.0,
        read_only: bool = False,
    ) -> None:
        """Prepare a store on the database `conninfo` names; nothing connects until first use.

        Args:
            conninfo: a `postgresql://` URL or libpq `key=value` string. The
                password may be in it, in `$PGPASSWORD` or in `~/.pgpass`
                (libpq reads them); it is never shown in a message.
            schema: the Postgres schema holding the store's tables.
            min_size: connections the pool keeps open.
            max_size: connections the pool may open at most.
            connect_timeout: seconds to wait for a new connection (whole
                seconds, at least 2, as libpq counts them).
            timeout: seconds an operation waits for a free connection of the
                pool before it fails with `ConnectFailedError`.
            read_only: only read (a viewer, the command line's reading commands, a
                user granted nothing more): the schema is checked, never created
                or migrated (a missing one reads as empty), the server refuses
                the connections' writes, and a write raises `ReadOnlyStoreError`.
        """
        if not schema or "\0" in schema or len(schema.encode()) > _MAX_IDENTIFIER:
            raise ValueError(f"schema must be 1 to {_MAX_IDENTIFIER} bytes without NUL: {schema!r}")
        if min_size < 0 or max_size < max(1, min_size):
            raise ValueError(
                f"need 0 <= min_size <= max_size and max_size >= 1, not {min_size}, {max_size}"
            )
        if connect_timeout <= 0 or timeout <= 0:
            raise ValueError(
                f"timeouts must be positive, not connect_timeout={connect_timeout}, "
                f"timeout={timeout}"
            )
        self._conninfo = Conninfo.parse(conninfo)
        self._schema = schema
        self._connect_timeout = connect_timeout
        self._timeout = timeout
        self._sql = Statements.of(schema)
        self._pool = _connect.pool(
            self._conninfo,
            min_size=min_size,
            max_size=max_size,
            connect_timeout=connect_timeout,
            timeout=timeout,
            read_only=read_only,
        )
        self._max_size = max_size
        self._read_only = read_only
        self._absent = False
        """Read-only, and the schema does not exist: every read finds nothing."""
        self._opening = asyncio.Lock()
        self._ready = False
        self._closed = False
        self._writes: set[asyncio.Future[builtins.list[int]]] = set()

    @property
    def schema(self) -> str:
        """The Postgres schema holding the store's tables."""
        return self._schema

    @property
    def where(self) -> str:
        """The database the store uses, as `user@host:port/dbname`, with no password."""
        return self._conninfo.shown

    def __repr__(self) -> str:
        return f"PostgresStore({self.where!r}, schema={self._schema!r})"

    async def __aenter__(self) -> PostgresStore:
        """Connect and check the schema now, so a bad server or schema fails here."""
        try:
            await self._ensure_ready()
        except BaseException:
            # `async with` does not call __aexit__ when __aenter__ fails.
            await self.close()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the store."""
        await self.close()

    async def close(self) -> None:
        """Finish the writes already started, then close the pool's connections.

        Later operations raise `StateError`. Closing twice is a no-op.
        """
        if self._closed:
            return
        self._closed = True
        if self._writes:
            await asyncio.wait(self._writes)
        async with self._opening:
            await self._pool.close()

    async def read(self, scope: Scope, key: str) -> JsonValue | None:
        """Return the value under `key` in `scope`, or None when there is none."""
        scope_json = scope_key(scope)
        if not await self._has_schema():
            return None
        found = await self._run(lambda connection: _db.read(connection, self._sql, scope_json, key))
        if found is None:
            return None
        text, appended = found
        value = decode_value(text, scope=scope_json, key=key)
        if not appended:
            return value
        assert isinstance(value, builtins.list)  # appends only ever go to a list
        for items in appended:
            value.extend(_items(decode_value(items, scope=scope_json, key=key)))
        return value

    async def list(self, scope: Scope, prefix: str) -> builtins.list[str]:
        """Return the keys in `scope` that start with `prefix`, sorted by code point.

        `prefix` is plain text: `%` and `_` match only themselves.
        """
        scope_json = scope_key(scope)
        if not await self._has_schema():
            return []
        return await self._run(
            lambda connection: _db.list_keys(connection, self._sql, scope_json, prefix)
        )

    async def search(self, scope: Scope, query: str, limit: int) -> builtins.list[SearchResult]:
        """Return up to `limit` keys whose key or values match any word of `query`, best first.

        Scores are `ts_rank` (higher is better); words are stemmed, so "colours"
        finds "colour". `query` is plain words: no syntax in it is interpreted,
        so no text makes it fail. Snippets mark matches with `**`. The first
        100,000 characters of a value's text are searched.
        """
        scope_json = scope_key(scope)
        words = query_words(query)
        if not words or limit <= 0 or not await self._has_schema():
            return []
        rows = await self._run(
            lambda connection: _db.search(
                connection, self._sql, scope_json, words, min(limit, _MAX_LIMIT)
            )
        )
        return [SearchResult(key=key, score=score, snippet=snippet) for key, score, snippet in rows]

    async def write(self, scope: Scope, key: str, value: JsonValue) -> None:
        """Store `value` under `key` in `scope`, replacing any previous value.

        Raises:
            SerializationError: `value` is not JSON; nothing was written.
            WriteFailed: the database refused the write (a key holding NUL, which
                Postgres text cannot hold, among others); nothing was written.
        """
        await self._run_write([self._put(scope, key, value)])

    async def delete(self, scope: Scope, key: str) -> None:
        """Remove `key` from `scope`; no-op when it is missing.

        Raises:
            WriteFailed: the database refused the delete; nothing was deleted.
        """
        await self._run_write([Remove(scope_key(scope), key)])

    async def append_history(self, append: HistoryAppend) -> int:
        """Append a turn's messages to its session's history, atomically, once per turn id.

        Returns the history's length afterwards. The cost is a row lock, a few
        index lookups and one row, however long the session is.

        Raises:
            HistoryConflict: `append.expected_length` is set and the history's
                length differs; nothing was appended.
            SerializationError: a message is not JSON; nothing was appended.
            WriteFailed: the database refused, or the stored history is not a
                list; nothing was appended.
        """
        (length,) = await self._run_write([append_op(append)])
        return length

    async def apply(
        self, effects: Iterable[WriteMemoryEffect | DeleteMemoryEffect | HistoryAppend]
    ) -> None:
        """Apply the memory effects of one turn in order, in one transaction: all or none.

        History appends go with them (a `neuron_orch_local.BatchStateStore`).

        Raises:
            SerializationError: a value is not JSON; nothing was applied.
            HistoryConflict: an append expected another history length; nothing was applied.
            WriteFailed: the database refused one of them; nothing was applied.
        """
        ops: builtins.list[_write.Op] = [self._op(effect) for effect in effects]
        if ops:
            await self._run_write(ops)

    async def apply_recorded(
        self,
        effects: Iterable[WriteMemoryEffect | DeleteMemoryEffect | HistoryAppend],
        record: TurnRecord,
    ) -> None:
        """Apply a turn's memory effects and store its record in one transaction: all or none.

        Why: an orchestrator keeps each turn's record beside its history at the
        cost of one commit, not two.

        Raises:
            SerializationError: a value is not JSON; nothing was applied.
            HistoryConflict: an append expected another history length; nothing was applied.
            WriteFailed: the database refused one of them; nothing was applied.
        """
        ops = [self._op(effect) for effect in effects]
        await self._run_write([*ops, turn_op(record)])

    async def forget_sessions(
        self,
        sessions: Sequence[SessionId],
        keys: Sequence[tuple[Scope, str]] = (),
        turns: Sequence[str] = (),
    ) -> int:
        """Delete everything kept of `sessions`, and `keys`, in one transaction (a `SessionEraser`).

        Every key of each session's scope (its history with its appends, its
        memory, anything else, with their search index), its turn records,
        `keys`, and the sessionless turn records `turns` names (one kept with
        a session stays) go; or, on any error, nothing. Returns how many entries
        went (keys and turn records). Deleting what is not there is no error.

        Raises:
            WriteFailed: the database refused; nothing was deleted (or, the
                connection lost as it committed, the message says it may have
                been: forgetting again is safe).
        """
        (gone,) = await self._run_write([forget_op(sessions, keys, turns)])
        return gone

    async def record_turn(self, record: TurnRecord) -> None:
        """Store a turn's record (a `layer0.TurnRecordStore`), replacing one with its id.

        Raises:
            WriteFailed: the database refused; nothing was written.
        """
        await self._run_write([turn_op(record)])

    async def turn_record(self, turn_id: str) -> TurnRecord | None:
        """Return the record of `turn_id`, or None when there is none.

        Raises:
            StateError: the stored record does not parse (the message names the turn).
        """
        if not await self._has_schema():
            return None
        text = await self._run(lambda connection: _db.read_turn(connection, self._sql, turn_id))
        return None if text is None else _parsed(TurnRecord, text, repr(turn_id))

    async def turn_summaries(
        self, *, session: str | None = None, limit: int = 100
    ) -> builtins.list[TurnSummary]:
        """Return up to `limit` turns, newest first; only `session`'s when it is given."""
        if not await self._has_schema():
            return []
        texts = await self._run(
            lambda connection: _db.turn_summaries(
                connection, self._sql, session, session is None, _limit(limit)
            )
        )
        return [_parsed(TurnSummary, text, "a listed turn") for text in texts]

    async def turn_sessions(self, *, limit: int = 100) -> builtins.list[SessionTurns]:
        """Return up to `limit` sessions with turn records, most recently used first.

        Turns run without a session come as one entry whose `session` is None.
        """
        if not await self._has_schema():
            return []
        rows = await self._run(
            lambda connection: _db.turn_sessions(connection, self._sql, _limit(limit))
        )
        return [
            SessionTurns(session=session, turns=turns, started=first, updated=last, title=title)
            for session, turns, first, last, title in rows
        ]

    def _op(
        self, effect: WriteMemoryEffect | DeleteMemoryEffect | HistoryAppend
    ) -> _write.Put | Remove | Append:
        """Turn one memory effect into the database operation that carries it out."""
        if isinstance(effect, WriteMemoryEffect):
            return self._put(effect.scope, effect.key, effect.value)
        if isinstance(effect, DeleteMemoryEffect):
            return Remove(scope_key(effect.scope), effect.key)
        if isinstance(effect, HistoryAppend):
            return append_op(effect)
        assert_never(effect)

    @staticmethod
    def _put(scope: Scope, key: str, value: JsonValue) -> _write.Put:
        """Serialize a write now, in the caller's task.

        This snapshots `value` at call time (later mutation by the caller
        cannot leak in) and rejects bad values before the database is touched.
        """
        scope_json = scope_key(scope)
        text, body = encode_value(value, scope=scope_json, key=key)
        body = body[:SEARCHED_CHARACTERS]
        return _write.Put(scope_json, key, text, body, searched_text(key, body))

    async def _run_write(self, ops: builtins.list[_write.Op]) -> builtins.list[int]:
        """Apply `ops` all or none; return each append's new length, each forgetting's count.

        The write runs in a task of its own: a caller cancelled while it runs
        does not cut it short (the transaction commits or rolls back whole),
        and `close` waits for it.
        """
        if self._read_only:
            raise ReadOnlyStoreError(
                self.where,
                f"the store on schema {self._schema!r} was opened read-only",
                "open it without read_only=True to write",
            )
        await self._ensure_ready()
        write = asyncio.ensure_future(self._apply(ops))
        self._writes.add(write)
        write.add_done_callback(self._writes.discard)
        return await asyncio.shield(write)

    async def _apply(self, ops: builtins.list[_write.Op]) -> builtins.list[int]:
        return await self._run(lambda connection: _write.apply(connection, self._sql, ops))

    async def _run(self, work: Callable[[_db.Connection], Awaitable[T]]) -> T:
        """Await `work` on a pooled connection; on one the server dropped, again on another.

        Why: the pool hands connections out unchecked (a check is a round trip
        per operation). After a restart or a failover every pooled connection
        is dropped: each one met is replaced, and the operation, having
        committed nothing (`_db.ConnectionDropped`), runs again, at most once
        per connection the pool may hold, then on a new one.
        """
        for attempt in itertools.count():
            async with self._connection() as connection:
                try:
                    return await work(connection)
                except _db.ConnectionDropped as dropped:
                    if attempt >= self._max_size:
                        raise dropped.error from dropped.error.__cause__
        raise AssertionError("unreachable: the loop returns or raises")

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[_db.Connection]:
        """A connection of the pool, once the schema is ready; a closed store raises StateError."""
        await self._ensure_ready()
        try:
            async with self._pool.connection() as connection:
                yield connection
        except psycopg_pool.PoolClosed as exc:
            raise self._closed_error() from exc
        except psycopg_pool.PoolTimeout as exc:
            raise ConnectFailedError(
                self.where,
                f"no connection was free or could be made within {self._timeout:g}s",
                "check that the server is running and reachable, or raise max_size or timeout",
            ) from exc

    async def _ensure_ready(self) -> None:
        """Connect and create or check the schema, once, before anything else runs."""
        if self._ready:
            return
        if self._closed:
            raise self._closed_error()
        async with self._opening:
            if self._closed:
                raise self._closed_error()
            if not self._ready:
                exists = await _connect.open_schema(
                    self._conninfo,
                    schema=self._schema,
                    connect_timeout=self._connect_timeout,
                    read_only=self._read_only,
                )
                self._absent = not exists
                if exists:
                    await self._pool.open(wait=False)
                self._ready = True

    async def _has_schema(self) -> bool:
        """Whether reads have tables to read: false only for a read-only store on no schema.

        A schema missing when the store opened is looked for again at each read,
        so a long-lived reader (the viewer) sees it once a writer creates it.
        """
        if not self._ready:
            await self._ensure_ready()
        elif self._absent:
            async with self._opening:
                if self._absent and not self._closed:
                    exists = await _connect.open_schema(
                        self._conninfo,
                        schema=self._schema,
                        connect_timeout=self._connect_timeout,
                        read_only=True,
                    )
                    if exists:
                        await self._pool.open(wait=False)
                        self._absent = False
        return not self._absent

    def _closed_error(self) -> StateError:
        return StateError(f"the state store on {self.where} (schema {self._schema!r}) is closed")


def _items(value: JsonValue) -> builtins.list[JsonValue]:
    if not isinstance(value, builtins.list):
        raise SerializationError(f"appended items are not a JSON list: {value!r}")
    return value


def _limit(limit: int) -> int:
    return max(0, min(limit, _MAX_LIMIT))


M = TypeVar("M", TurnRecord, TurnSummary)


def _parsed(model: type[M], text: str, what: str) -> M:
    """Read a stored record or summary; a stored one that does not parse is a StateError."""
    try:
        return model.model_validate_json(text)
    except ValueError as exc:
        raise StateError(f"the stored turn record of {what} does not parse: {exc}") from exc
