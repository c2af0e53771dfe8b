"""A write's transaction in pipeline mode: the round trips it costs, and errors inside it."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
from psycopg import pq

from layer0 import HISTORY_KEY, HistoryAppend, SessionScope, WriteFailed, WriteMemoryEffect
from neuron_state_postgres import PostgresStore
from neuron_state_postgres._write import Put, _lock_key, _Sent

from ._raw import execute, until_waiting_for_locks
from .test_contract_turns import record

SESSION = SessionScope(id="s1")


def turn(number: int) -> HistoryAppend:
    """A chat turn's append: the user's message and the answer."""
    return HistoryAppend(
        session="s1",
        turn_id=f"t{number}",
        messages=[{"role": "user", "content": "ping"}, {"role": "assistant", "content": "pong"}],
    )


@asynccontextmanager
async def round_trips(store: PostgresStore, tmp_path: Path) -> AsyncIterator[list[int]]:
    """Count the round trips (the server's ReadyForQuery) of a one-connection store's block.

    libpq's trace of the connection lists every protocol message; the server
    ends each answer to a sync (or a simple query) with one ReadyForQuery.
    """
    async with store._pool.connection() as connection:
        pgconn = connection.pgconn
    trace = tmp_path / "trace"
    descriptor = os.open(trace, os.O_WRONLY | os.O_CREAT)
    counted: list[int] = []
    try:
        pgconn.trace(descriptor)
        pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        yield counted
    finally:
        pgconn.untrace()
        os.close(descriptor)
    lines = trace.read_text().splitlines()
    counted.append(sum(line.split()[:3] == ["B", "5", "ReadyForQuery"] for line in lines))


async def test_a_turns_append_and_record_cost_two_round_trips(
    conninfo: str, schema: str, tmp_path: Path
) -> None:
    # One statement a round trip, as before pipelining, was nine: the pool's check,
    # BEGIN, the key locks, two to lock the list, two to append, the record, COMMIT.
    # Now: BEGIN and the statements, then COMMIT once the append's answer is checked.
    async with PostgresStore(conninfo, schema=schema, min_size=1, max_size=1) as store:
        await store.append_history(turn(0))
        async with round_trips(store, tmp_path) as counted:
            await store.apply_recorded(
                [turn(1)], record("t1", "s1", "2026-01-01T00:00:01.000+00:00")
            )
        assert counted == [2]
        assert len(await store.read(SESSION, HISTORY_KEY) or []) == 4


async def test_a_batch_without_appends_costs_two_round_trips(
    conninfo: str, schema: str, tmp_path: Path
) -> None:
    async with PostgresStore(conninfo, schema=schema, min_size=1, max_size=1) as store:
        await store.write(SESSION, "warm", 1)
        async with round_trips(store, tmp_path) as counted:
            await store.apply(
                [
                    WriteMemoryEffect(scope=SESSION, key="a", value=1),
                    WriteMemoryEffect(scope=SESSION, key="b", value=2),
                ]
            )
        assert counted == [2]


async def test_a_refused_turn_record_rolls_back_the_turns_append_and_names_the_record(
    store: PostgresStore, conninfo: str
) -> None:
    await store.append_history(turn(0))
    await execute(conninfo, "ALTER TABLE {s}.turns ADD CHECK (turn_id <> 't1')", store.schema)
    with pytest.raises(WriteFailed) as raised:
        await store.apply_recorded([turn(1)], record("t1", "s1", "2026-01-01T00:00:01.000+00:00"))
    message = str(raised.value)
    assert "batch of 2 operations failed at #2 (write of turn record 't1')" in message
    assert "none was applied" in message
    assert isinstance(raised.value.__cause__, psycopg.errors.CheckViolation)
    assert len(await store.read(SESSION, HISTORY_KEY) or []) == 2
    assert await store.turn_record("t1") is None
    # The connection came back out of its failed transaction: the next turn lands.
    await store.apply_recorded([turn(2)], record("t2", "s1", "2026-01-01T00:00:02.000+00:00"))
    assert len(await store.read(SESSION, HISTORY_KEY) or []) == 4


async def test_an_append_refused_by_the_server_names_the_append_not_a_later_op(
    store: PostgresStore, conninfo: str
) -> None:
    await execute(conninfo, "ALTER TABLE {s}.appended ADD CHECK (append_id <> 't1')", store.schema)
    with pytest.raises(WriteFailed, match=r"failed at #1 \(append of key 'messages'"):
        await store.apply_recorded([turn(1)], record("t1", "s1", "2026-01-01T00:00:01.000+00:00"))
    assert await store.read(SESSION, HISTORY_KEY) is None
    assert await store.turn_record("t1") is None


async def test_a_pipelined_batch_the_server_aborts_for_a_deadlock_runs_again_whole(
    conninfo: str, schema: str
) -> None:
    # The store's server process gives up on a deadlock after 50ms; the others'
    # never, so the store's transaction is the one aborted, and must run again.
    impatient = conninfo + "?options=" + quote("-c deadlock_timeout=50ms")
    async with (
        PostgresStore(impatient, schema=schema) as store,
        await psycopg.AsyncConnection.connect(conninfo) as holder,
        await psycopg.AsyncConnection.connect(conninfo) as gate,
    ):
        await store.apply([WriteMemoryEffect(scope=SESSION, key=key, value=0) for key in "ab"])
        table = f'"{schema}".entries'
        for connection, key in ((holder, "b"), (gate, "a")):
            await connection.execute("SET LOCAL deadlock_timeout = '1min'")
            await connection.execute(f"SELECT 1 FROM {table} WHERE key = %s FOR UPDATE", (key,))  # type: ignore[arg-type]

        # The batch locks both keys' ids, then waits for the gate's row `a`...
        batch = asyncio.ensure_future(
            store.apply([WriteMemoryEffect(scope=SESSION, key=key, value=1) for key in "ab"])
        )
        await until_waiting_for_locks(conninfo)
        # ...while the holder of row `b` waits for the batch's lock of key `a`.
        key_a = _lock_key(Put(scope='{"session":"s1"}', key="a", value="", body="", words=""))
        holding = asyncio.ensure_future(
            holder.execute("SELECT pg_advisory_xact_lock(%s)", (key_a,))
        )
        await until_waiting_for_locks(conninfo, 2)
        await gate.rollback()  # the batch goes on to row `b`: a deadlock
        # The holder gets the lock only once the server aborted the batch's transaction,
        await holding
        await holder.rollback()
        await batch  # which ran again, whole, once the holder was done.

        assert [await store.read(SESSION, key) for key in "ab"] == [1, 1]


async def test_a_connection_lost_with_the_commit_on_its_way_says_the_batch_may_be_applied(
    conninfo: str, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = psycopg.AsyncConnection.execute

    async def dropping_at_commit(self: psycopg.AsyncConnection, query: str, *args, **kwargs):  # type: ignore[no-untyped-def]
        if query == "COMMIT":
            # The server goes away as the COMMIT leaves: whether it landed is unknown.
            async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as admin:
                await admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE pid <> pg_backend_pid() AND usename = current_user"
                )
        return await original(self, query, *args, **kwargs)

    async with PostgresStore(conninfo, schema=schema, min_size=1, max_size=1) as store:
        await store.write(SESSION, "ready", 0)  # the schema exists before the COMMIT is lost
        monkeypatch.setattr(psycopg.AsyncConnection, "execute", dropping_at_commit)
        with pytest.raises(WriteFailed, match="may or may not have been applied") as failed:
            await store.append_history(turn(1))
        monkeypatch.undo()
        assert "none was applied" not in str(failed.value)
        assert "safe to apply again" in str(failed.value)
        # Applying it again is what the message says it is: safe, once per turn id.
        await store.append_history(turn(1))
        await store.append_history(turn(1))
        assert len(await store.read(SESSION, HISTORY_KEY) or []) == 2


class _Answered:
    """A queued statement's cursor, answered (`pgresult` set) or not."""

    def __init__(self, answered: bool) -> None:
        self.pgresult = object() if answered else None


def test_an_error_read_while_an_op_is_queued_names_that_op_when_the_ops_before_it_answered() -> (
    None
):
    # psycopg reads the answers that have come while it queues a statement, so an
    # op's first statement may fail while its second is queued, its cursors not yet
    # recorded: the error is that op's, not the last one recorded.
    sent = _Sent(locks=[_Answered(True)], ops=[[_Answered(True)], [_Answered(True)] * 2])  # type: ignore[list-item]
    sent.queuing = 2
    assert sent.failed_at(psycopg.errors.RaiseException("refused")) == 2
    sent.ops.append([_Answered(False)])  # type: ignore[list-item]
    sent.queuing = 3
    assert sent.failed_at(psycopg.errors.RaiseException("refused")) == 2
    sent.queuing = None  # all queued and answered: the COMMIT's error, the batch's last op
    sent.ops[-1] = [_Answered(True)]  # type: ignore[list-item]
    assert sent.failed_at(psycopg.errors.RaiseException("refused")) == 2
