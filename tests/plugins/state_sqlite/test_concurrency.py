from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from layer0 import SessionScope, WriteMemoryEffect
from neuron_state_sqlite import SqliteStore

from ._raw import integrity, raw
from ._writer_process import SCOPE, value_of

SESSION = SessionScope(id="s1")
WRITER = Path(__file__).with_name("_writer_process.py")


async def test_200_concurrent_writes_and_reads_all_land(store: SqliteStore) -> None:
    async def write_then_read(number: int) -> None:
        key = f"k{number:03}"
        await store.write(SESSION, key, {"n": number, "text": f"word{number}"})
        assert await store.read(SESSION, key) == {"n": number, "text": f"word{number}"}

    await asyncio.gather(*(write_then_read(number) for number in range(200)))
    assert await store.list(SESSION, "") == [f"k{number:03}" for number in range(200)]
    assert [r.key for r in await store.search(SESSION, "word123", 5)] == ["k123"]


async def test_mixed_concurrent_operations_keep_the_index_consistent(
    store: SqliteStore, db_path: Path
) -> None:
    async def churn(number: int) -> None:
        key = f"k{number % 20}"
        if number % 3 == 0:
            await store.delete(SESSION, key)
        elif number % 3 == 1:
            await store.apply([WriteMemoryEffect(scope=SESSION, key=key, value=f"v {number}")])
        else:
            await store.search(SESSION, "v", 5)
            await store.list(SESSION, "k")

    await asyncio.gather(*(churn(number) for number in range(300)))
    with raw(db_path) as connection:
        connection.execute("INSERT INTO entries_fts (entries_fts) VALUES ('integrity-check')")
    assert integrity(db_path) == "ok"


async def test_two_stores_on_one_file_share_it_safely(db_path: Path) -> None:
    async with SqliteStore(db_path) as first, SqliteStore(db_path) as second:
        await asyncio.gather(
            *(first.write(SESSION, f"a{number:03}", number) for number in range(100)),
            *(second.write(SESSION, f"b{number:03}", number) for number in range(100)),
        )
        assert len(await first.list(SESSION, "")) == 200
        assert await second.read(SESSION, "a042") == 42


async def test_a_write_waiting_for_a_lock_does_not_block_the_event_loop(
    store: SqliteStore, db_path: Path
) -> None:
    await store.write(SESSION, "k", "old")
    with raw(db_path) as other:
        other.execute("BEGIN IMMEDIATE")
        write = asyncio.create_task(store.write(SESSION, "k", "new"))
        # The write is stuck on the lock in the writer thread, yet the loop
        # still runs this task, and reads still complete.
        assert await store.read(SESSION, "k") == "old"
        assert not write.done()
        other.execute("ROLLBACK")
    await write
    assert await store.read(SESSION, "k") == "new"


@contextmanager
def writer_process(path: Path, prefix: str, count: int) -> Iterator[subprocess.Popen[str]]:
    """Start `_writer_process.py` and wait until its store is open."""
    with subprocess.Popen(
        [sys.executable, str(WRITER), str(path), prefix, str(count)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        try:
            assert next_line(process) == "ready"
            yield process
        finally:
            if process.poll() is None:
                process.kill()


def next_line(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line:
        assert process.stderr is not None
        pytest.fail(f"writer process ended early: {process.wait()}\n{process.stderr.read()}")
    return line.strip()


def go(process: subprocess.Popen[str]) -> None:
    assert process.stdin is not None
    process.stdin.write("go\n")
    process.stdin.flush()


async def test_several_processes_writing_one_file_lose_nothing(db_path: Path) -> None:
    count, prefixes = 150, ["p0", "p1", "p2", "p3"]
    # Create the file in parallel too: every process opens a new file at once.
    with ExitStack() as stack:
        processes = [
            stack.enter_context(writer_process(db_path, prefix, count)) for prefix in prefixes
        ]
        for process in processes:
            go(process)
        for process in processes:
            out, err = process.communicate(timeout=120)
            assert process.returncode == 0, err
            assert out.splitlines()[-1] == "done"

    expected = sorted(f"{prefix}-{number}" for prefix in prefixes for number in range(count))
    assert integrity(db_path) == "ok"
    async with SqliteStore(db_path) as store:
        assert await store.list(SCOPE, "") == expected
        for key in expected[::37]:
            assert await store.read(SCOPE, key) == value_of(key)


async def test_a_killed_writer_loses_no_committed_write_and_leaves_the_file_sound(
    db_path: Path,
) -> None:
    committed: list[str] = []
    with writer_process(db_path, "k", 0) as process:
        go(process)
        while len(committed) < 50:
            committed.append(next_line(process))
        process.kill()
        process.wait()

    assert integrity(db_path) == "ok"
    async with SqliteStore(db_path) as store:
        for key in committed:
            assert await store.read(SCOPE, key) == value_of(key)
        # The writer may have committed more than it printed before the kill.
        assert set(committed) <= set(await store.list(SCOPE, ""))
        assert await store.search(SCOPE, committed[-1], 1) != []
    assert integrity(db_path) == "ok"
