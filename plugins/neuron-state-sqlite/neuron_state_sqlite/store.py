"""`SqliteStore`: a `layer0.StateStore` in one SQLite file."""

from __future__ import annotations

import asyncio
import builtins
import os
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Final, TypeVar, assert_never

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

from . import _db
from ._codec import decode_value, encode_value, match_expression, scope_key
from ._threads import ConnectionThreads, ThreadsClosed
from ._writer import WriterThread
from .errors import StateFileAccessError
from .paths import default_path

__all__ = ["SqliteStore"]

T = TypeVar("T")

_DEFAULT_READERS: Final = 4
_MAX_LIMIT: Final = 2**63 - 1  # SQLite integers are 64-bit


class SqliteStore:
    """A `layer0.StateStore` in one SQLite file, safe for many tasks and processes.

    Every blocking call runs on the store's own threads, never on the event
    loop: one writer thread (one connection, so writes queue instead of
    fighting over SQLite's lock) and up to `readers` reader threads, which WAL
    lets read while a write is in progress. Each write, delete or `apply`
    batch is all or none, in a `BEGIN IMMEDIATE` transaction; writes that
    queue while a commit runs share the next one (each in a savepoint, so one
    that fails fails alone), and each call returns only once the commit
    holding its write has. Other processes may use the same file; they wait
    up to `busy_timeout` seconds for each other's locks.

    Values are stored as canonical JSON (sorted keys, UTF-8) and their strings
    are indexed with FTS5 for `search`. A session's history grows by
    `append_history` (a `layer0.HistoryStore`): one row per turn, atomic and
    once per turn id, at a cost that does not grow with the session's length;
    `read` returns the whole list. Appended items are not searched.
    Cancelling a caller never stops an operation half-way: one not yet
    started is dropped, one started finishes.

    Use it as `async with SqliteStore(path) as store:`, or call `close()`.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        busy_timeout: float = 5.0,
        readers: int = _DEFAULT_READERS,
        synchronous: _db.Synchronous = "full",
        read_only: bool = False,
    ) -> None:
        """Prepare a store on `path`; the file is opened (and created) on first use.

        Args:
            path: the database file; default `default_path()`, which honours
                `$NEURON_STATE_PATH`. Its parent directories are created.
            busy_timeout: seconds to wait for another process's lock before a
                write fails with `WriteFailed`.
            readers: how many threads (each with a connection) serve reads.
            synchronous: `"full"` (default) makes every returned write survive
                power loss; `"normal"` only a crash of the process, but writes
                several times faster.
            read_only: open the file for reading only (`mode=ro`): it is
                checked but never written, not even switched to WAL, so
                read access to it is enough; a missing file reads as empty
                and is not created. Writes raise `StateFileAccessError`.
        """
        if readers < 1:
            raise ValueError(f"readers must be at least 1, not {readers}")
        if busy_timeout < 0:
            raise ValueError(f"busy_timeout must not be negative, not {busy_timeout}")
        if path is not None and os.fspath(path) in ("", ":memory:"):
            # Each connection would get a database of its own.
            raise ValueError(f"SqliteStore needs a file path, not {os.fspath(path)!r}")
        self._path = Path(path).expanduser() if path is not None else default_path()
        self._writer = WriterThread(
            partial(
                _db.open_writer, self._path, busy_timeout=busy_timeout, synchronous=synchronous
            ),
            path=self._path,
            name="neuron-state-sqlite-writer",
        )
        self._read_only = read_only
        open_reader = _db.open_read_only if read_only else _db.open_reader
        self._readers = ConnectionThreads(
            partial(open_reader, self._path, busy_timeout=busy_timeout),
            threads=readers,
            name="neuron-state-sqlite-reader",
        )
        self._ready = False
        self._closed = False

    @property
    def path(self) -> Path:
        """The database file."""
        return self._path

    def __repr__(self) -> str:
        return f"SqliteStore({str(self._path)!r})"

    async def __aenter__(self) -> SqliteStore:
        """Open the file now, so a bad path or schema fails here rather than later."""
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
        """Finish the operations already started, then close every connection.

        Later operations raise `StateError`. Closing twice is a no-op.
        """
        if self._closed:
            return
        self._closed = True
        self._writer.close_soon()
        self._readers.close_soon()
        await asyncio.to_thread(self._close_threads)

    async def read(self, scope: Scope, key: str) -> JsonValue | None:
        """Return the value under `key` in `scope`, or None when there is none."""
        scope_json = scope_key(scope)

        def read(connection: sqlite3.Connection) -> JsonValue | None:
            found = _db.read(connection, scope_json, key, path=self._path)
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

        return await self._run_read(read)

    async def list(self, scope: Scope, prefix: str) -> builtins.list[str]:
        """Return the keys in `scope` that start with `prefix`, sorted.

        `prefix` is plain text: `%` and `_` match only themselves.
        """
        scope_json = scope_key(scope)
        return await self._run_read(
            partial(_db.list_keys, scope=scope_json, prefix=prefix, path=self._path)
        )

    async def search(self, scope: Scope, query: str, limit: int) -> builtins.list[SearchResult]:
        """Return up to `limit` keys whose values match any word of `query`, best first.

        Scores are BM25 (higher is better); words are stemmed, so "colours"
        finds "colour". `query` is plain words: FTS5 syntax in it is not
        interpreted. Snippets mark matches with `**`.
        """
        scope_json = scope_key(scope)
        expression = match_expression(query)
        if expression is None or limit <= 0:
            return []
        rows = await self._run_read(
            partial(
                _db.search,
                scope=scope_json,
                expression=expression,
                limit=min(limit, _MAX_LIMIT),
                path=self._path,
            )
        )
        return [SearchResult(key=key, score=score, snippet=snippet) for key, score, snippet in rows]

    async def write(self, scope: Scope, key: str, value: JsonValue) -> None:
        """Store `value` under `key` in `scope`, replacing any previous value.

        Raises:
            SerializationError: `value` is not JSON; nothing was written.
            WriteFailed: the database refused the write; nothing was written.
            StateFileError: the file cannot be written as it is (read-only,
                corrupt, not a state database); nothing was written.
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

        Returns the history's length afterwards. The cost is a few index
        lookups and one row, however long the session is.

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
        ops: builtins.list[_db.Op] = [self._op(effect) for effect in effects]
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
        memory, anything else), its turn records and their search index entries
        go, with `keys` and the sessionless turn records `turns` names (one
        kept with a session stays); or, on any error, nothing. Returns how many entries
        went (keys and turn records). Deleting what is not there is no error.

        Raises:
            WriteFailed: the database refused; nothing was deleted.
            StateFileError: the file cannot be written as it is; nothing was deleted.
        """
        (gone,) = await self._run_write([forget_op(sessions, keys, turns)])
        return gone

    async def record_turn(self, record: TurnRecord) -> None:
        """Store a turn's record (a `layer0.TurnRecordStore`), replacing one with its id.

        Raises:
            WriteFailed: the database refused; nothing was written.
            StateFileError: the file cannot be written as it is; nothing was written.
        """
        await self._run_write([turn_op(record)])

    async def turn_record(self, turn_id: str) -> TurnRecord | None:
        """Return the record of `turn_id`, or None when there is none.

        Raises:
            StateError: the stored record does not parse (the message names the turn).
        """
        text = await self._run_read(partial(_db.read_turn, turn_id=turn_id, path=self._path))
        return None if text is None else _parsed(TurnRecord, text, repr(turn_id))

    async def turn_summaries(
        self, *, session: str | None = None, limit: int = 100
    ) -> builtins.list[TurnSummary]:
        """Return up to `limit` turns, newest first; only `session`'s when it is given."""
        texts = await self._run_read(
            partial(
                _db.turn_summaries,
                session=session,
                everything=session is None,
                limit=_limit(limit),
                path=self._path,
            )
        )
        return [_parsed(TurnSummary, text, "a listed turn") for text in texts]

    async def turn_sessions(self, *, limit: int = 100) -> builtins.list[SessionTurns]:
        """Return up to `limit` sessions with turn records, most recently used first.

        Turns run without a session come as one entry whose `session` is None.
        """
        rows = await self._run_read(
            partial(_db.turn_sessions, limit=_limit(limit), path=self._path)
        )
        return [
            SessionTurns(session=session, turns=turns, started=first, updated=last, title=title)
            for session, turns, first, last, title in rows
        ]

    def _op(
        self, effect: WriteMemoryEffect | DeleteMemoryEffect | HistoryAppend
    ) -> _db.Put | Remove | Append:
        """Turn one memory effect into the database operation that carries it out."""
        if isinstance(effect, WriteMemoryEffect):
            return self._put(effect.scope, effect.key, effect.value)
        if isinstance(effect, DeleteMemoryEffect):
            return Remove(scope_key(effect.scope), effect.key)
        if isinstance(effect, HistoryAppend):
            return append_op(effect)
        assert_never(effect)

    @staticmethod
    def _put(scope: Scope, key: str, value: JsonValue) -> _db.Put:
        """Serialize a write now, in the caller's thread.

        This snapshots `value` at call time (later mutation by the caller
        cannot leak in) and rejects bad values before the database is touched.
        """
        scope_json = scope_key(scope)
        text, body = encode_value(value, scope=scope_json, key=key)
        return _db.Put(scope_json, key, text, body)

    async def _run_write(self, ops: builtins.list[_db.Op]) -> builtins.list[int]:
        """Apply `ops` all or none on the writer thread; return appends' lengths, forgets' counts.

        Writes that queue while a commit runs are committed together
        (`neuron_state_sqlite._writer`); each still succeeds or fails alone.
        """
        if self._read_only:
            raise self._read_only_error()
        await self._ensure_ready()
        if self._closed:
            raise self._closed_error()
        try:
            return await self._writer.apply(ops)
        except ThreadsClosed as exc:
            raise self._closed_error() from exc

    def _read_only_error(self) -> StateFileAccessError:
        return StateFileAccessError(
            self._path, "was opened read-only", "open it without read_only=True to write"
        )

    async def _run_read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Return `fn(connection)` from a reader thread."""
        await self._ensure_ready()
        return await self._run(self._readers, fn)

    async def _ensure_ready(self) -> None:
        """Open the writer (which migrates the schema) before anything else runs.

        A read-only store opens one reader instead, which checks the file.
        """
        if not self._ready:
            await self._run(self._readers if self._read_only else self._writer, _nothing)
            self._ready = True

    async def _run(
        self, threads: ConnectionThreads | WriterThread, fn: Callable[[sqlite3.Connection], T]
    ) -> T:
        """Run `fn` on `threads`, reporting a closed store as a StateError."""
        if self._closed:
            raise self._closed_error()
        try:
            return await threads.run(fn)
        except ThreadsClosed as exc:
            raise self._closed_error() from exc

    def _closed_error(self) -> StateError:
        return StateError(f"the state store on {str(self._path)!r} is closed")

    def _close_threads(self) -> None:
        """Stop the readers, then the writer, closing their connections (blocking)."""
        self._readers.close()
        self._writer.close()


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


def _nothing(connection: sqlite3.Connection) -> None:
    """Do nothing; running it makes the thread open its connection."""
