"""The writing thread: writes that wait behind a commit share the next one, each failing alone."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import pytest

from layer0 import HistoryAppend, HistoryConflict, SessionScope, WriteFailed
from neuron_state_sqlite import SqliteStore, _db
from neuron_state_sqlite._codec import scope_key
from neuron_state_sqlite._writer import WriterThread

from ._raw import raw, refuse_writes_of

SCOPE = scope_key(SessionScope(id="s1"))


@pytest.fixture
async def writer(db_path: Path) -> AsyncIterator[WriterThread]:
    thread = WriterThread(
        partial(_db.open_writer, db_path, busy_timeout=5.0, synchronous="normal"),
        path=db_path,
        name="test-writer",
    )
    await thread.run(lambda connection: None)  # open (and create) the file
    try:
        yield thread
    finally:
        await asyncio.to_thread(thread.close)


def put(key: str, value: int = 1) -> list[_db.Op]:
    return [_db.Put(SCOPE, key, str(value), "")]


def append(turn: str, *, expected: int | None = None) -> list[_db.Op]:
    return [_db.Append(SCOPE, "messages", turn, '["q","a"]', 2, expected, "s1")]


@contextmanager
def held(writer: WriterThread) -> Iterator[list[str]]:
    """Keep the writer thread busy until the block ends; yield the SQL it runs meanwhile.

    Everything submitted inside the block waits in the queue, so it is taken together.
    """
    release = threading.Event()
    statements: list[str] = []

    def hold(connection: sqlite3.Connection) -> None:
        connection.set_trace_callback(statements.append)
        # Bounded, so a broken writer fails the test instead of hanging it.
        assert release.wait(timeout=30)

    writer.run(hold)
    try:
        yield statements
    finally:
        release.set()


def values(db_path: Path) -> dict[str, str]:
    with raw(db_path) as connection:
        return dict(connection.execute("SELECT key, value FROM entries").fetchall())


async def settled(futures: list[asyncio.Future[list[int]]]) -> list[list[int] | BaseException]:
    return await asyncio.gather(*futures, return_exceptions=True)


async def test_writes_waiting_behind_a_busy_writer_share_one_commit(
    writer: WriterThread, db_path: Path
) -> None:
    with held(writer) as statements:
        futures = [writer.apply(put(f"k{number}", number)) for number in range(5)]
    assert await settled(futures) == [[]] * 5
    assert values(db_path) == {f"k{number}": str(number) for number in range(5)}
    assert statements.count("BEGIN IMMEDIATE") == 1
    assert statements.count("COMMIT") == 1
    assert statements.count("SAVEPOINT neuron_write") == 5


async def test_a_write_failing_in_a_group_fails_only_its_own_caller(
    writer: WriterThread, db_path: Path
) -> None:
    refuse_writes_of(db_path, "bad")
    with held(writer) as statements:
        futures = [
            writer.apply(put("first")),
            writer.apply([*put("also-rolled-back"), *put("bad")]),
            writer.apply(put("last")),
        ]
    first, bad, last = await settled(futures)
    assert first == last == []
    assert isinstance(bad, WriteFailed)
    assert "batch of 2 operations failed at #2 (write of key 'bad'" in str(bad)
    assert isinstance(bad.__cause__, sqlite3.Error)
    assert values(db_path) == {"first": "1", "last": "1"}
    assert statements.count("COMMIT") == 1


async def test_appends_in_a_group_see_the_ones_before_them(writer: WriterThread) -> None:
    with held(writer):
        futures = [
            writer.apply(append("t1", expected=0)),
            writer.apply(append("t2", expected=0)),  # stale: t1 is before it
            writer.apply(append("t3", expected=2)),
            writer.apply(append("t1")),  # the same turn again: nothing changes
        ]
    first, stale, third, again = await settled(futures)
    assert (first, third, again) == ([2], [4], [4])
    assert isinstance(stale, HistoryConflict)
    assert (stale.expected, stale.found) == (0, 2)


async def test_a_group_whose_commit_fails_is_applied_again_one_write_at_a_time(
    writer: WriterThread, db_path: Path
) -> None:
    # A deferred foreign key is only checked at COMMIT: a write of "late"
    # leaves a dangling reference, so the group's commit fails, and then the
    # commit of "late" alone.
    with raw(db_path) as connection:
        connection.executescript(
            """
            CREATE TABLE parent (id INTEGER PRIMARY KEY);
            CREATE TABLE child (
                parent INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED
            );
            CREATE TRIGGER dangle AFTER INSERT ON entries WHEN new.key = 'late'
            BEGIN INSERT INTO child VALUES (42); END;
            """
        )
    await writer.run(lambda connection: connection.execute("PRAGMA foreign_keys = ON"))
    with held(writer) as statements:
        futures = [
            writer.apply(put("before")),
            writer.apply(put("late")),
            writer.apply(put("after")),
        ]
    before, late, after = await settled(futures)
    assert before == after == []
    assert isinstance(late, WriteFailed)
    assert "write of key 'late'" in str(late)
    assert "FOREIGN KEY" in str(late)
    assert values(db_path) == {"before": "1", "after": "1"}
    # The group's commit, then each write's own (the failed one's too).
    assert statements.count("COMMIT") == 4


async def test_a_write_cancelled_before_the_thread_takes_it_never_runs(
    writer: WriterThread, db_path: Path
) -> None:
    with held(writer):
        kept = writer.apply(put("kept"))
        dropped = writer.apply(put("dropped"))
        dropped.cancel()
    assert await kept == []
    assert values(db_path) == {"kept": "1"}


async def test_a_closed_writer_refuses_new_work(writer: WriterThread) -> None:
    writer.close_soon()
    with pytest.raises(RuntimeError, match="closed"):
        writer.apply(put("k"))


async def test_200_concurrent_appends_to_one_session_all_land_in_order(db_path: Path) -> None:
    scope = SessionScope(id="s1")
    async with SqliteStore(db_path) as store:

        def turn(number: int) -> HistoryAppend:
            return HistoryAppend(session="s1", turn_id=f"t{number}", messages=[number, -number])

        lengths = await asyncio.gather(*(store.append_history(turn(n)) for n in range(200)))
        history = await store.read(scope, "messages")
    assert lengths == [2 * (number + 1) for number in range(200)]
    assert history == [item for number in range(200) for item in (number, -number)]
