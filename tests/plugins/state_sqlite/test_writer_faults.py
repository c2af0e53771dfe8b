"""The store's threads when SQLite fails to end a transaction: callers hear back, locks go.

SQLite refuses a COMMIT and then the ROLLBACK after it here through an
authorizer (a real engine refusal, raised where a disk or I/O fault would be),
each once, on the writer's own connection.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import pytest

from layer0 import SessionScope, StateError
from neuron_state_sqlite import SqliteStore, _db
from neuron_state_sqlite._codec import scope_key
from neuron_state_sqlite._writer import WriterThread

from ._raw import raw

SCOPE = scope_key(SessionScope(id="s1"))

# Bounds a wait that, on a writer that lost its callers, would be for ever.
_ANSWER_WITHIN = 10.0


@pytest.fixture
async def writer(db_path: Path) -> AsyncIterator[WriterThread]:
    thread = WriterThread(
        partial(_db.open_writer, db_path, busy_timeout=0.0, synchronous="normal"),
        path=db_path,
        name="test-writer",
    )
    await thread.run(lambda connection: None)  # open (and create) the file
    try:
        yield thread
    finally:
        await asyncio.to_thread(thread.close)


def put(key: str) -> list[_db.Op]:
    return [_db.Put(SCOPE, key, "1", "")]


def refuse_once(*statements: str) -> object:
    """An authorizer refusing each of `statements` (COMMIT, ROLLBACK) the first time only."""
    left = set(statements)

    def authorize(action: int, first: str | None, *_: str | None) -> int:
        if action == sqlite3.SQLITE_TRANSACTION and first in left:
            left.discard(first)
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    return authorize


@contextmanager
def held(writer: WriterThread, authorizer: object) -> Iterator[None]:
    """Keep the writer busy until the block ends, then let it run with `authorizer` set."""
    release = threading.Event()

    def hold(connection: sqlite3.Connection) -> None:
        connection.set_authorizer(authorizer)  # type: ignore[arg-type]
        assert release.wait(timeout=_ANSWER_WITHIN)

    writer.run(hold)
    try:
        yield
    finally:
        release.set()


def keys(db_path: Path) -> set[str]:
    with raw(db_path) as connection:
        return {key for (key,) in connection.execute("SELECT key FROM entries")}


def another_process_can_write(db_path: Path) -> bool:
    with raw(db_path) as connection:
        connection.execute("PRAGMA busy_timeout = 0")
        try:
            connection.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:
            return False
        connection.execute("ROLLBACK")
        return True


async def test_a_group_whose_rollback_fails_fails_its_callers_instead_of_hanging_them(
    writer: WriterThread, db_path: Path
) -> None:
    with held(writer, refuse_once("COMMIT", "ROLLBACK")):
        futures = [writer.apply(put(f"k{number}")) for number in range(3)]
    outcomes = await asyncio.wait_for(
        asyncio.gather(*futures, return_exceptions=True), _ANSWER_WITHIN
    )
    assert all(isinstance(outcome, StateError) for outcome in outcomes), outcomes
    assert all("not authorized" in str(outcome) for outcome in outcomes)
    assert keys(db_path) == set()
    # The thread goes on, on a connection without the failed transaction.
    assert await asyncio.wait_for(writer.apply(put("later")), _ANSWER_WITHIN) == []
    assert keys(db_path) == {"later"}
    assert another_process_can_write(db_path)


async def test_a_write_whose_rollback_fails_leaves_no_lock_behind(
    writer: WriterThread, db_path: Path
) -> None:
    with held(writer, refuse_once("COMMIT", "ROLLBACK")):
        failed = writer.apply(put("failed"))
    with pytest.raises(StateError, match="not authorized"):
        await asyncio.wait_for(failed, _ANSWER_WITHIN)
    assert keys(db_path) == set()
    # A transaction left open would hold the file's write lock for good.
    assert another_process_can_write(db_path)
    assert await asyncio.wait_for(writer.apply(put("later")), _ANSWER_WITHIN) == []
    assert keys(db_path) == {"later"}


async def test_a_read_whose_commit_fails_leaves_no_snapshot_behind(db_path: Path) -> None:
    scope = SessionScope(id="s1")
    async with SqliteStore(db_path, readers=1) as store:
        await store.write(scope, "k", "before")
        await store._readers.run(
            lambda connection: connection.set_authorizer(
                refuse_once("COMMIT")  # type: ignore[arg-type]
            )
        )
        with pytest.raises(StateError, match="not authorized"):
            await store.read(scope, "k")
        await store.write(scope, "k", "after")
        # A read transaction left open would answer from its old snapshot, or not at all.
        assert await store.read(scope, "k") == "after"
