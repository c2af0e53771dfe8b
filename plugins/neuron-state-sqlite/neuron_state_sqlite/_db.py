"""The blocking SQL of each store operation; called only from worker threads.

Every sqlite3 error leaves here as a layer0 error naming the operation, the
scope, the key and the file, with the sqlite3 error chained.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, TypeAlias

from layer0 import HistoryConflict, StateError, WriteFailed
from neuron_turn.plugins.store_ops import Append, Forget, PutTurn, Remove

from ._schema import SCHEMA_VERSION, check, migrate, shadow_missing
from .errors import NotAStateDatabaseError, StateFileAccessError, StateFileError

__all__ = [
    "Append",
    "Forget",
    "Op",
    "Put",
    "PutTurn",
    "Remove",
    "Synchronous",
    "apply",
    "apply_group",
    "list_keys",
    "open_read_only",
    "open_reader",
    "open_writer",
    "read",
    "read_turn",
    "search",
    "turn_sessions",
    "turn_summaries",
]

Synchronous = Literal["full", "normal"]
"""SQLite's `synchronous` setting: `full` also survives power loss, `normal` a crash only."""

# Errors a bound parameter or the engine can raise. A key holding a lone
# surrogate fails to encode to UTF-8 before SQLite ever sees it.
_DB_ERRORS: Final = (sqlite3.Error, UnicodeEncodeError)

_MOVE_ASIDE: Final = "move it aside or choose another file for the state"
_CORRUPT: Final = "restore it from a backup, or move it aside to start with an empty state"
_ACCESS: Final = (
    "make the file and its directory readable and writable by this user, "
    "or choose another file for the state"
)

_UPSERT: Final = """
INSERT INTO entries (scope, key, value, body) VALUES (?, ?, ?, ?)
ON CONFLICT (scope, key) DO UPDATE SET value = excluded.value, body = excluded.body
"""
_DELETE: Final = "DELETE FROM entries WHERE scope = ? AND key = ?"
_DELETE_APPENDED: Final = "DELETE FROM appended WHERE scope = ? AND key = ?"
_DELETE_SCOPE: Final = "DELETE FROM entries WHERE scope = ?"
_DELETE_SCOPE_APPENDED: Final = "DELETE FROM appended WHERE scope = ?"
_DELETE_TURNS: Final = "DELETE FROM turns WHERE session = ?"
# By id, but only a record kept without a session: no id can reach a session's.
_DELETE_SESSIONLESS_TURN: Final = "DELETE FROM turns WHERE turn_id = ? AND session IS NULL"
_READ: Final = "SELECT value FROM entries WHERE scope = ? AND key = ?"
_READ_APPENDED: Final = "SELECT items FROM appended WHERE scope = ? AND key = ? ORDER BY id"
_HAS_APPENDED_TABLE: Final = (
    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'appended'"
)
# The list's length and whether this turn id is in it, in one statement.
_LAST_LENGTH_AND_HAS: Final = """
SELECT length, EXISTS (SELECT 1 FROM appended WHERE scope = ?1 AND key = ?2 AND append_id = ?3)
FROM appended WHERE scope = ?1 AND key = ?2 ORDER BY id DESC LIMIT 1
"""
_INSERT_APPENDED: Final = (
    "INSERT INTO appended (scope, key, append_id, items, length) VALUES (?, ?, ?, ?, ?)"
)
_INSERT_EMPTY: Final = "INSERT INTO entries (scope, key, value, body) VALUES (?, ?, '[]', '')"
# Keys sharing a prefix are contiguous in BINARY (code point) order, so the
# scan starts at the prefix and stops at the first key without it; no LIKE,
# whose `%`, `_` and ASCII case folding would all be wrong here.
_KEYS_FROM: Final = "SELECT key FROM entries WHERE scope = ? AND key >= ? ORDER BY key"
_SEARCH: Final = """
SELECT e.key, -bm25(entries_fts), snippet(entries_fts, 1, '**', '**', '…', 16)
FROM entries_fts JOIN entries AS e ON e.id = entries_fts.rowid
WHERE entries_fts MATCH ? AND e.scope = ?
ORDER BY bm25(entries_fts), e.key
LIMIT ?
"""


_PUT_TURN: Final = """
INSERT INTO turns (turn_id, session, started, summary, record) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (turn_id) DO UPDATE SET session = excluded.session, started = excluded.started,
    summary = excluded.summary, record = excluded.record
"""
_READ_TURN: Final = "SELECT record FROM turns WHERE turn_id = ?"
_SUMMARIES: Final = "SELECT summary FROM turns ORDER BY started DESC, turn_id LIMIT ?"
_SESSION_SUMMARIES: Final = (
    "SELECT summary FROM turns WHERE session IS ? ORDER BY started DESC, turn_id LIMIT ?"
)
# The title is the first turn's; `IS` so that turns without a session form one group.
_SESSIONS: Final = """
SELECT t.session, COUNT(*), MIN(t.started), MAX(t.started),
    (SELECT json_extract(f.summary, '$.title') FROM turns AS f
     WHERE f.session IS t.session ORDER BY f.started LIMIT 1)
FROM turns AS t GROUP BY t.session ORDER BY MAX(t.started) DESC LIMIT ?
"""


@dataclass(frozen=True, slots=True)
class Put:
    """Store `value` (JSON text) under `key`, with `body` as its searchable text."""

    scope: str
    key: str
    value: str
    body: str


Op: TypeAlias = Put | Remove | Append | PutTurn | Forget
"""One operation of an `apply` batch."""


def open_writer(path: Path, *, busy_timeout: float, synchronous: Synchronous) -> sqlite3.Connection:
    """Open the connection that does all of this store's writing, creating the file.

    The file is checked before anything is written to it, then switched to
    WAL and migrated, so once a writer is open, readers may be opened too.

    Raises:
        StateFileError: the file is not a state database, is from a newer
            version, or this process may not open or write it.
        StateError: the file cannot be opened for another reason.
    """
    _refuse_directory(path)
    with _opening(path):
        path.parent.mkdir(parents=True, exist_ok=True)
    connection = _connect(path, busy_timeout=busy_timeout)
    with _opening(path), _closing_on_error(connection):
        check(connection, path)
        # WAL lets readers in every process go on while one process writes.
        (mode,) = connection.execute("PRAGMA journal_mode = WAL").fetchone()
        if str(mode).lower() != "wal":
            raise StateError(f"cannot use WAL mode for state database {str(path)!r} ({mode})")
        connection.execute(f"PRAGMA synchronous = {synchronous.upper()}")
        migrate(connection, path)
    return connection


def open_reader(path: Path, *, busy_timeout: float) -> sqlite3.Connection:
    """Open a connection that cannot write, to a state database a writer has opened."""
    connection = _connect(path, busy_timeout=busy_timeout)
    with _opening(path), _closing_on_error(connection):
        connection.execute("PRAGMA query_only = ON")
    return connection


def open_read_only(path: Path, *, busy_timeout: float) -> sqlite3.Connection:
    """Open an existing state database read-only, checked but never written, not even its mode.

    Needs only read access to the file. A file that does not exist reads as an
    empty store (an in-memory database with the schema), and is not created.

    Raises:
        StateFileError: the file is not a state database we can read, or cannot be opened.
    """
    _refuse_directory(path)
    if not path.exists():
        connection = _connect_uri("file::memory:", path, busy_timeout=busy_timeout)
        with _opening(path), _closing_on_error(connection):
            migrate(connection, path)
            connection.execute("PRAGMA query_only = ON")
        return connection
    uri = f"{path.absolute().as_uri()}?mode=ro"
    try:
        return _checked(_connect_uri(uri, path, busy_timeout=busy_timeout), path)
    except StateFileAccessError as exc:
        cause = exc.__cause__
        if not (
            isinstance(cause, sqlite3.Error)
            and cause.sqlite_errorcode == sqlite3.SQLITE_READONLY_DIRECTORY
            and not Path(f"{path}-wal").exists()
        ):
            raise
    # A WAL file needs its -shm beside it, which a read-only directory cannot
    # hold. With no -wal there either, no process can write the file (a
    # writer must create one), so reading it as immutable is exact.
    immutable = _connect_uri(f"{uri}&immutable=1", path, busy_timeout=busy_timeout)
    return _checked(immutable, path)


def _checked(connection: sqlite3.Connection, path: Path) -> sqlite3.Connection:
    """Return `connection` once `check` accepts its file; close it otherwise.

    An older file is read as it is, with what later versions add shadowed empty.
    """
    with _opening(path), _closing_on_error(connection):
        found = check(connection, path)
        if found < SCHEMA_VERSION:
            shadow_missing(connection, found)
    return connection


def apply(connection: sqlite3.Connection, ops: Sequence[Op], *, path: Path) -> list[int]:
    """Apply `ops` in order in one transaction: all of them or, on any error, none.

    Returns the length of the list under each `Append`'s key after it, and the
    count of entries each `Forget` deleted, in order.

    Raises:
        WriteFailed: nothing was changed; the message names the failing operation.
        HistoryConflict: an `Append` found another length than it expected;
            nothing was changed.
    """
    try:
        with _transaction(connection):
            return _apply_ops(connection, ops, path=path)
    except _DB_ERRORS as exc:
        raise _failure(ops, None, path, exc) from exc


def apply_group(
    connection: sqlite3.Connection, writes: Sequence[Sequence[Op]], *, path: Path
) -> list[list[int] | Exception]:
    """Apply several callers' writes in one transaction; return each one's outcome, in order.

    Why: one commit (and, with `synchronous=full`, one fsync) for every write
    that queued while the previous commit ran. Each write is all or nothing on
    its own, inside a savepoint: one that fails is rolled back alone, and its
    outcome is its error (as `apply` would raise it); the others still commit,
    each seeing the ones before it. If the transaction itself cannot be
    completed (its commit fails, or the engine rolled it back), nothing of it
    is kept and every write is applied again in a transaction of its own, so
    each outcome is that write's own; unless SQLite refuses to roll it back,
    when each write fails with that error and the connection is left in the
    transaction for its owner to close (`_threads.drop_if_in_transaction`).
    """
    try:
        connection.execute("BEGIN IMMEDIATE")
    except _DB_ERRORS as exc:
        # Waiting for the lock failed once for all of them: none was applied.
        return [_failure(ops, None, path, exc) for ops in writes]
    try:
        outcomes = [_in_savepoint(connection, ops, path=path) for ops in writes]
        connection.execute("COMMIT")
    except Exception:
        if connection.in_transaction:
            try:
                connection.execute("ROLLBACK")
            except _DB_ERRORS as exc:
                # The transaction stays open on this connection, holding the file's
                # lock: none of the writes can run alone on it. Each fails; the
                # writer then drops the connection, whose closing undoes them.
                return [_caused(_failure(ops, None, path, exc), exc) for ops in writes]
        return [_alone(connection, ops, path=path) for ops in writes]
    return outcomes


def _caused(error: StateError, cause: BaseException) -> StateError:
    """`error` with `cause` chained, as `raise error from cause` would leave it."""
    error.__cause__ = cause
    return error


def _in_savepoint(
    connection: sqlite3.Connection, ops: Sequence[Op], *, path: Path
) -> list[int] | Exception:
    """Apply one write of a group: its lengths, or its error with its changes undone."""
    connection.execute("SAVEPOINT neuron_write")
    try:
        lengths = _apply_ops(connection, ops, path=path)
    except StateError as exc:
        if not connection.in_transaction:
            # The engine rolled back the whole group (a full disk, say): start over.
            raise
        connection.execute("ROLLBACK TO neuron_write")
        connection.execute("RELEASE neuron_write")
        return exc
    connection.execute("RELEASE neuron_write")
    return lengths


def _alone(
    connection: sqlite3.Connection, ops: Sequence[Op], *, path: Path
) -> list[int] | Exception:
    """Apply one write in a transaction of its own; return its lengths or its error.

    Any error, not only the expected ones: it belongs to this write's caller alone.
    """
    try:
        return apply(connection, ops, path=path)
    except Exception as exc:
        return exc


def _apply_ops(connection: sqlite3.Connection, ops: Sequence[Op], *, path: Path) -> list[int]:
    """Apply `ops` inside the open transaction; return each `Append`'s length, `Forget`'s count.

    Raises:
        WriteFailed: the message names the failing operation.
        HistoryConflict: an `Append` found another length than it expected.
    """
    lengths: list[int] = []
    failed_at = 0
    try:
        for index, op in enumerate(ops):
            failed_at = index
            if isinstance(op, Append):
                lengths.append(_append(connection, op))
            elif isinstance(op, Put):
                connection.execute(_UPSERT, (op.scope, op.key, op.value, op.body))
                connection.execute(_DELETE_APPENDED, (op.scope, op.key))
            elif isinstance(op, PutTurn):
                row = (op.turn_id, op.session, op.started, op.summary, op.record)
                connection.execute(_PUT_TURN, row)
            elif isinstance(op, Forget):
                lengths.append(_forget(connection, op))
            else:
                connection.execute(_DELETE, (op.scope, op.key))
                connection.execute(_DELETE_APPENDED, (op.scope, op.key))
    except _DB_ERRORS as exc:
        raise _failure(ops, failed_at, path, exc) from exc
    return lengths


def _forget(connection: sqlite3.Connection, op: Forget) -> int:
    """Delete what `op` names inside the open transaction; return how many entries went.

    The search index follows `entries` by its triggers, in the same transaction.
    """
    gone = 0
    for scope in op.scopes:
        gone += connection.execute(_DELETE_SCOPE, (scope,)).rowcount
        connection.execute(_DELETE_SCOPE_APPENDED, (scope,))
    for session in op.sessions:
        gone += connection.execute(_DELETE_TURNS, (session,)).rowcount
    for turn_id in op.turns:
        gone += connection.execute(_DELETE_SESSIONLESS_TURN, (turn_id,)).rowcount
    for scope, key in op.keys:
        gone += connection.execute(_DELETE, (scope, key)).rowcount
        connection.execute(_DELETE_APPENDED, (scope, key))
    return gone


def _failure(ops: Sequence[Op], failed_at: int | None, path: Path, exc: Exception) -> StateError:
    """The error a failed write raises: a fault of the file, else `WriteFailed` naming the op."""
    return _file_error(exc, path) or WriteFailed(_apply_failure(ops, failed_at, path, exc))


def read(
    connection: sqlite3.Connection, scope: str, key: str, *, path: Path
) -> tuple[str, list[str]] | None:
    """Return the JSON text stored under `key` and the item arrays appended to it, or None.

    Both come from one read transaction, so an append in between cannot split them.
    """
    with _failing_as(StateError, f"read of key {key!r} in scope {scope}", path):
        connection.execute("BEGIN")
        try:
            row = connection.execute(_READ, (scope, key)).fetchone()
            appended = [] if row is None else _appended(connection, scope, key)
        finally:
            connection.execute("COMMIT")
    return None if row is None else (str(row[0]), appended)


def _appended(connection: sqlite3.Connection, scope: str, key: str) -> list[str]:
    try:
        cursor = connection.execute(_READ_APPENDED, (scope, key))
    except sqlite3.OperationalError:
        # A version-1 file opened read-only (never migrated) has no appends yet.
        if connection.execute(_HAS_APPENDED_TABLE).fetchone() is None:
            return []
        raise
    with closing(cursor):
        return [str(items) for (items,) in cursor]


def _append(connection: sqlite3.Connection, op: Append) -> int:
    """Append inside the open transaction: a few index lookups, whatever the list's length.

    Returns the list's length afterwards (unchanged when `op` was appended before).
    """
    last = connection.execute(_LAST_LENGTH_AND_HAS, (op.scope, op.key, op.append_id)).fetchone()
    if last is None:
        length = _base_length(connection, op)  # nothing appended yet, this turn included
    elif last[1]:
        return int(last[0])
    else:
        length = int(last[0])
    if op.expected_length is not None and op.expected_length != length:
        raise HistoryConflict(op.session, expected=op.expected_length, found=length)
    connection.execute(
        _INSERT_APPENDED, (op.scope, op.key, op.append_id, op.items, length + op.count)
    )
    return length + op.count


def _base_length(connection: sqlite3.Connection, op: Append) -> int:
    """The length of the list stored whole under the key (created empty when missing)."""
    row = connection.execute(_READ, (op.scope, op.key)).fetchone()
    if row is None:
        connection.execute(_INSERT_EMPTY, (op.scope, op.key))
        return 0
    try:
        base = json.loads(row[0])
    except ValueError:
        base = None
    if not isinstance(base, list):
        raise _NotAList(f"the value of key {op.key!r} in scope {op.scope} is not a list")
    return len(base)


class _NotAList(sqlite3.Error):
    """An append to a key whose value is not a JSON list (reported as WriteFailed)."""


def read_turn(connection: sqlite3.Connection, turn_id: str, *, path: Path) -> str | None:
    """Return the JSON text of the record of `turn_id`, or None."""
    with _failing_as(StateError, f"read of turn record {turn_id!r}", path):
        row = connection.execute(_READ_TURN, (turn_id,)).fetchone()
    return None if row is None else str(row[0])


def turn_summaries(
    connection: sqlite3.Connection, session: str | None, everything: bool, limit: int, *, path: Path
) -> list[str]:
    """Return the JSON texts of up to `limit` turn summaries, newest first.

    Every turn's when `everything`, else those of `session` (None: turns without one).
    """
    with _failing_as(StateError, "list of turn records", path):
        if everything:
            rows = connection.execute(_SUMMARIES, (limit,)).fetchall()
        else:
            rows = connection.execute(_SESSION_SUMMARIES, (session, limit)).fetchall()
    return [str(summary) for (summary,) in rows]


def turn_sessions(
    connection: sqlite3.Connection, limit: int, *, path: Path
) -> list[tuple[str | None, int, str, str, str]]:
    """Return `(session, turns, first start, last start, first title)`, most recent first."""
    with _failing_as(StateError, "list of sessions with turn records", path):
        rows = connection.execute(_SESSIONS, (limit,)).fetchall()
    return [
        (session, int(turns), str(first), str(last), str(title or ""))
        for session, turns, first, last, title in rows
    ]


def list_keys(connection: sqlite3.Connection, scope: str, prefix: str, *, path: Path) -> list[str]:
    """Return the keys of `scope` starting with `prefix`, sorted."""
    keys: list[str] = []
    with (
        _failing_as(StateError, f"list of prefix {prefix!r} in scope {scope}", path),
        closing(connection.execute(_KEYS_FROM, (scope, prefix))) as cursor,
    ):
        for (key,) in cursor:
            if not key.startswith(prefix):
                break
            keys.append(key)
    return keys


def search(
    connection: sqlite3.Connection, scope: str, expression: str, limit: int, *, path: Path
) -> list[tuple[str, float, str | None]]:
    """Return `(key, score, snippet)` of the best `limit` matches of an FTS5 `expression`."""
    with _failing_as(StateError, f"search in scope {scope}", path):
        rows = connection.execute(_SEARCH, (expression, scope, limit)).fetchall()
    return [(str(key), float(score), snippet or None) for key, score, snippet in rows]


def _connect(path: Path, *, busy_timeout: float) -> sqlite3.Connection:
    """Open `path` in autocommit mode, so transactions are exactly the ones we BEGIN."""
    with _opening(path):
        # `timeout` is SQLite's busy timeout: how long to wait for another
        # process's lock before giving up with "database is locked".
        # check_same_thread is off only so that close() can run on another
        # thread once the owning thread has stopped.
        return sqlite3.connect(
            path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
        )


def _connect_uri(uri: str, path: Path, *, busy_timeout: float) -> sqlite3.Connection:
    """Open the SQLite `uri` standing for `path`, as `_connect` does."""
    with _opening(path):
        return sqlite3.connect(
            uri, timeout=busy_timeout, isolation_level=None, check_same_thread=False, uri=True
        )


def _refuse_directory(path: Path) -> None:
    """Refuse a directory before SQLite's vaguer "unable to open database file"."""
    if path.is_dir():
        raise NotAStateDatabaseError(
            path, "is a directory", "give the path of a file (it is created if missing)"
        )


@contextmanager
def _transaction(connection: sqlite3.Connection) -> Iterator[None]:
    """Run the block in a `BEGIN IMMEDIATE` transaction, rolled back on any error.

    IMMEDIATE takes the write lock up front, so waiting for another process
    happens in BEGIN (under the busy timeout) and never half-way through.
    """
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise


@contextmanager
def _failing_as(error: type[StateError], what: str, path: Path) -> Iterator[None]:
    """Translate sqlite3 errors in the block into `error`, naming `what` failed.

    A fault of the file itself (corrupt, read-only) is a `StateFileError` instead.
    """
    try:
        yield
    except _DB_ERRORS as exc:
        raise _file_error(exc, path) or error(f"{what} failed ({path}): {exc}") from exc


@contextmanager
def _opening(path: Path) -> Iterator[None]:
    """Translate errors while opening `path` into a StateError naming the file."""
    try:
        yield
    except (OSError, sqlite3.Error) as exc:
        raise _file_error(exc, path) or StateError(
            f"cannot open state database {str(path)!r}: {exc}"
        ) from exc


def _file_error(exc: BaseException, path: Path) -> StateFileError | None:
    """Return the `StateFileError` for an error that only a change to the file can fix."""
    if isinstance(exc, PermissionError):
        return StateFileAccessError(path, f"cannot be created ({exc.strerror})", _ACCESS)
    code = getattr(exc, "sqlite_errorcode", None)
    if not isinstance(exc, sqlite3.Error) or code is None:
        return None
    primary = code & 0xFF
    if primary == sqlite3.SQLITE_NOTADB:
        problem = f"is not an SQLite database ({exc}): corrupt, or another kind of file"
        return NotAStateDatabaseError(path, problem, _MOVE_ASIDE)
    if primary == sqlite3.SQLITE_CORRUPT:
        return NotAStateDatabaseError(path, f"is corrupt ({exc})", _CORRUPT)
    if primary == sqlite3.SQLITE_READONLY:
        return StateFileAccessError(path, f"is read-only for this process ({exc})", _ACCESS)
    if primary in (sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM, sqlite3.SQLITE_AUTH):
        return StateFileAccessError(path, f"cannot be opened ({exc})", _ACCESS)
    return None


@contextmanager
def _closing_on_error(connection: sqlite3.Connection) -> Iterator[None]:
    """Close `connection` if the block raises, so a failed open leaks nothing."""
    try:
        yield
    except BaseException:
        connection.close()
        raise


def _apply_failure(ops: Sequence[Op], failed_at: int | None, path: Path, exc: Exception) -> str:
    """Describe a failed `apply`: which operation failed, and that none was applied."""
    if len(ops) == 1:
        return f"{_describe(ops[0])} failed ({path}): {exc}"
    where = "" if failed_at is None else f" at #{failed_at + 1} ({_describe(ops[failed_at])})"
    return f"batch of {len(ops)} operations failed{where}; none was applied ({path}): {exc}"


def _describe(op: Op) -> str:
    """Name one operation: its kind, key and scope (a turn record: its id)."""
    if isinstance(op, PutTurn):
        return f"write of turn record {op.turn_id!r}"
    if isinstance(op, Forget):
        return f"forgetting of session(s) {', '.join(map(repr, op.sessions))}"
    verb = "write" if isinstance(op, Put) else "delete" if isinstance(op, Remove) else "append"
    return f"{verb} of key {op.key!r} in scope {op.scope}"
