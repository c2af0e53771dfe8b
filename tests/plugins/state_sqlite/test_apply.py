from __future__ import annotations

import math
import sqlite3
from pathlib import Path

import pytest

from layer0 import (
    DeleteMemoryEffect,
    SerializationError,
    SessionScope,
    WorkflowScope,
    WriteFailed,
    WriteMemoryEffect,
)
from neuron_state_sqlite import SqliteStore

from ._raw import refuse_writes_of

SESSION = SessionScope(id="s1")
WORKFLOW = WorkflowScope(id="w1")


async def test_apply_runs_writes_and_deletes_in_order(store: SqliteStore) -> None:
    await store.write(SESSION, "gone", "soon")
    await store.apply(
        [
            WriteMemoryEffect(scope=SESSION, key="a", value=1),
            WriteMemoryEffect(scope=WORKFLOW, key="a", value={"w": True}),
            DeleteMemoryEffect(scope=SESSION, key="gone"),
            WriteMemoryEffect(scope=SESSION, key="b", value="first"),
            DeleteMemoryEffect(scope=SESSION, key="b"),
            WriteMemoryEffect(scope=SESSION, key="c", value="x"),
            WriteMemoryEffect(scope=SESSION, key="c", value="last wins"),
            DeleteMemoryEffect(scope=SESSION, key="never-there"),
        ]
    )
    assert await store.list(SESSION, "") == ["a", "c"]
    assert await store.read(SESSION, "a") == 1
    assert await store.read(WORKFLOW, "a") == {"w": True}
    assert await store.read(SESSION, "c") == "last wins"


async def test_apply_of_nothing_is_a_no_op(store: SqliteStore) -> None:
    await store.apply([])
    await store.apply(iter(()))
    assert await store.list(SESSION, "") == []


async def test_a_batch_whose_third_op_fails_in_the_database_applies_none(
    store: SqliteStore, db_path: Path
) -> None:
    await store.write(SESSION, "existing", "untouched")
    refuse_writes_of(db_path, "third")
    with pytest.raises(WriteFailed) as raised:
        await store.apply(
            [
                WriteMemoryEffect(scope=SESSION, key="first", value=1),
                DeleteMemoryEffect(scope=SESSION, key="existing"),
                WriteMemoryEffect(scope=SESSION, key="third", value=3),
                WriteMemoryEffect(scope=SESSION, key="fourth", value=4),
            ]
        )
    message = str(raised.value)
    assert "batch of 4 operations failed at #3 (write of key 'third'" in message
    assert "none was applied" in message
    assert isinstance(raised.value.__cause__, sqlite3.Error)
    assert await store.list(SESSION, "") == ["existing"]
    assert await store.read(SESSION, "existing") == "untouched"
    assert await store.search(SESSION, "untouched", 5) != []


async def test_a_batch_whose_third_value_is_not_json_applies_none(store: SqliteStore) -> None:
    await store.write(SESSION, "existing", "untouched")
    with pytest.raises(SerializationError, match="'third'"):
        await store.apply(
            [
                WriteMemoryEffect(scope=SESSION, key="first", value=1),
                DeleteMemoryEffect(scope=SESSION, key="existing"),
                WriteMemoryEffect(scope=SESSION, key="third", value=math.nan),
            ]
        )
    assert await store.list(SESSION, "") == ["existing"]


async def test_the_store_keeps_working_after_a_failed_batch(
    store: SqliteStore, db_path: Path
) -> None:
    refuse_writes_of(db_path, "bad")
    with pytest.raises(WriteFailed):
        await store.apply(
            [
                WriteMemoryEffect(scope=SESSION, key="good", value=1),
                WriteMemoryEffect(scope=SESSION, key="bad", value=2),
            ]
        )
    await store.apply([WriteMemoryEffect(scope=SESSION, key="good", value=1)])
    assert await store.list(SESSION, "") == ["good"]
