"""Values of many MiB (a tool's whole log, an image) are written and read back whole, in time."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

from layer0 import HISTORY_KEY, HistoryAppend, SessionScope, WriteFailed, WriteMemoryEffect
from neuron_state_postgres import PostgresStore

from ._raw import execute

# Bounds a write that, sent pipelined, waited for ever: the server for the rest
# of the statement, the client for its answer.
_WRITTEN_WITHIN = 60.0
_BIG = "x" * (16 * 1024 * 1024)


async def test_a_history_append_of_a_16_mib_tool_result_is_kept_not_hung(
    store: PostgresStore,
) -> None:
    message = {"role": "user", "content": [{"type": "tool_result", "content": _BIG}]}
    append = HistoryAppend(session="s1", turn_id="t1", messages=[message])
    assert await asyncio.wait_for(store.append_history(append), _WRITTEN_WITHIN) == 1
    assert await store.read(SessionScope(id="s1"), HISTORY_KEY) == [message]


async def test_a_16_mib_value_is_written_and_read_back_whole(store: PostgresStore) -> None:
    scope = SessionScope(id="s1")
    await asyncio.wait_for(store.write(scope, "log", {"text": _BIG}), _WRITTEN_WITHIN)
    assert await store.read(scope, "log") == {"text": _BIG}


async def test_a_big_batch_refused_by_the_server_names_the_op_and_keeps_nothing(
    store: PostgresStore, conninfo: str
) -> None:
    await execute(conninfo, "ALTER TABLE {s}.entries ADD CHECK (key <> 'bad')", store.schema)
    scope = SessionScope(id="s1")
    big = WriteMemoryEffect(scope=scope, key="log", value=_BIG)
    bad = WriteMemoryEffect(scope=scope, key="bad", value=1)
    with pytest.raises(WriteFailed, match=r"failed at #2 \(write of key 'bad'") as raised:
        await asyncio.wait_for(store.apply([big, bad]), _WRITTEN_WITHIN)
    assert isinstance(raised.value.__cause__, psycopg.errors.CheckViolation)
    assert await store.read(scope, "log") is None
    # The connection came back out of its failed transaction.
    await asyncio.wait_for(store.apply([big]), _WRITTEN_WITHIN)
    assert await store.read(scope, "log") == _BIG
