from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from layer0 import (
    DeleteMemoryEffect,
    SessionScope,
    WriteFailed,
    WriteMemoryEffect,
)
from neuron_state_sqlite import SqliteStore

from ._raw import refuse_writes_of

SESSION = SessionScope(id="s1")


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
