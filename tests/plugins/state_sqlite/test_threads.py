"""The reader threads: a queue of jobs, the most recently idle thread taking the next one."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from neuron_state_sqlite._threads import ConnectionThreads, ThreadsClosed


@pytest.fixture
async def threads(tmp_path: Path) -> AsyncIterator[ConnectionThreads]:
    pool = ConnectionThreads(
        lambda: sqlite3.connect(tmp_path / "t.db", check_same_thread=False),
        threads=3,
        name="test-reader",
    )
    try:
        yield pool
    finally:
        await asyncio.to_thread(pool.close)


def ident(connection: sqlite3.Connection) -> int:
    return threading.get_ident()


def blocker(
    release: threading.Event, started: threading.Event | None = None
) -> Callable[[sqlite3.Connection], int]:
    def block(connection: sqlite3.Connection) -> int:
        if started is not None:
            started.set()
        # Bounded, so a broken pool fails the test instead of hanging it.
        assert release.wait(timeout=30)
        return threading.get_ident()

    return block


async def test_one_caller_after_another_keeps_to_one_warm_thread(
    threads: ConnectionThreads,
) -> None:
    idents = {await threads.run(ident) for _ in range(20)}
    assert len(idents) == 1


async def test_jobs_beyond_the_threads_wait_and_all_run_on_at_most_that_many(
    threads: ConnectionThreads,
) -> None:
    release = threading.Event()
    held = [threads.run(blocker(release)) for _ in range(3)]
    queued = [threads.run(lambda connection, n=n: (n, threading.get_ident())) for n in range(10)]
    release.set()
    results = await asyncio.gather(*queued)
    assert [number for number, _ in results] == list(range(10))
    assert len(set(await asyncio.gather(*held)) | {i for _, i in results}) <= 3


async def test_a_job_cancelled_before_a_thread_takes_it_never_runs(tmp_path: Path) -> None:
    pool = ConnectionThreads(
        lambda: sqlite3.connect(tmp_path / "t.db", check_same_thread=False),
        threads=1,
        name="test-reader",
    )
    ran: list[str] = []
    release = threading.Event()
    try:
        held = pool.run(blocker(release))
        dropped = pool.run(lambda connection: ran.append("dropped"))
        dropped.cancel()
        kept = pool.run(lambda connection: ran.append("kept"))
        release.set()
        await held
        await kept
    finally:
        await asyncio.to_thread(pool.close)
    assert ran == ["kept"]


async def test_an_error_reaches_its_caller_and_the_thread_goes_on(
    threads: ConnectionThreads,
) -> None:
    def fail(connection: sqlite3.Connection) -> None:
        connection.execute("SELECT * FROM no_such_table")

    with pytest.raises(sqlite3.OperationalError, match="no_such_table"):
        await threads.run(fail)
    assert await threads.run(lambda connection: connection.execute("SELECT 7").fetchone()) == (7,)


async def test_close_finishes_the_queued_jobs_then_refuses_new_ones(tmp_path: Path) -> None:
    pool = ConnectionThreads(
        lambda: sqlite3.connect(tmp_path / "t.db", check_same_thread=False),
        threads=1,
        name="test-reader",
    )
    release, started = threading.Event(), threading.Event()
    held = pool.run(blocker(release, started))
    queued = pool.run(lambda connection: "ran")
    pool.close_soon()
    with pytest.raises(ThreadsClosed):
        pool.run(ident)
    assert await asyncio.to_thread(started.wait, 30)
    release.set()
    await asyncio.to_thread(pool.close)
    assert isinstance(await held, int)
    assert await queued == "ran"
