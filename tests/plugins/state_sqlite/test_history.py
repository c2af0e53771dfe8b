"""Session history appends: atomic, once per turn id, optimistic, cheap, readable as one list."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import JsonValue

from layer0 import (
    HISTORY_KEY,
    HistoryAppend,
    HistoryConflict,
    HistoryStore,
    SessionScope,
    WriteFailed,
    WriteMemoryEffect,
)
from neuron_state_sqlite import SqliteStore
from neuron_state_sqlite._schema import _V1, APPLICATION_ID

from ._raw import raw

SCOPE = SessionScope(id="s1")


def exchange(turn: str, size: int = 2) -> HistoryAppend:
    messages: list[JsonValue] = [{"role": "user", "content": f"{turn}.0"}]
    messages += [{"role": "assistant", "content": f"{turn}.{i}"} for i in range(1, size)]
    return HistoryAppend(session="s1", turn_id=turn, messages=messages)


async def test_the_store_is_a_history_store_and_appends_read_as_one_list(
    store: SqliteStore,
) -> None:
    assert isinstance(store, HistoryStore)
    assert await store.append_history(exchange("a")) == 2
    assert await store.append_history(exchange("b", 3)) == 5
    history = await store.read(SCOPE, HISTORY_KEY)
    assert [m["content"] for m in history] == ["a.0", "a.1", "b.0", "b.1", "b.2"]  # type: ignore[index,union-attr]
    assert await store.list(SCOPE, "") == [HISTORY_KEY]


async def test_the_same_turn_id_is_appended_once(store: SqliteStore) -> None:
    await store.append_history(exchange("a"))
    assert await store.append_history(exchange("a")) == 2
    await store.apply([exchange("a")])
    assert len(await store.read(SCOPE, HISTORY_KEY)) == 2  # type: ignore[arg-type]


async def test_an_append_expecting_another_length_fails_and_changes_nothing(
    store: SqliteStore,
) -> None:
    await store.append_history(exchange("a"))
    stale = exchange("b").model_copy(update={"expected_length": 0})
    with pytest.raises(HistoryConflict, match=r"read 0 message.* now holds 2") as raised:
        await store.append_history(stale)
    assert (raised.value.expected, raised.value.found) == (0, 2)
    fresh = exchange("c").model_copy(update={"expected_length": 2})
    assert await store.append_history(fresh) == 4


async def test_a_conflict_in_a_batch_rolls_the_whole_batch_back(store: SqliteStore) -> None:
    await store.append_history(exchange("a"))
    write = WriteMemoryEffect(scope="global", key="k", value=1)
    with pytest.raises(HistoryConflict):
        await store.apply([write, exchange("b").model_copy(update={"expected_length": 5})])
    assert await store.read("global", "k") is None
    assert len(await store.read(SCOPE, HISTORY_KEY)) == 2  # type: ignore[arg-type]


async def test_a_whole_write_replaces_the_appended_list_and_a_delete_removes_it(
    store: SqliteStore,
) -> None:
    await store.append_history(exchange("a"))
    await store.write(SCOPE, HISTORY_KEY, [{"role": "user", "content": "reset"}])
    assert await store.read(SCOPE, HISTORY_KEY) == [{"role": "user", "content": "reset"}]
    assert await store.append_history(exchange("b")) == 3
    await store.delete(SCOPE, HISTORY_KEY)
    assert await store.read(SCOPE, HISTORY_KEY) is None
    assert await store.append_history(exchange("c")) == 2


async def test_appending_to_a_value_that_is_not_a_list_fails_clearly(store: SqliteStore) -> None:
    await store.write(SCOPE, HISTORY_KEY, {"not": "a list"})
    with pytest.raises(WriteFailed, match="not a list"):
        await store.append_history(exchange("a"))
    assert await store.read(SCOPE, HISTORY_KEY) == {"not": "a list"}


def version_1_file(path: Path) -> None:
    """A file as version 1 wrote it, holding one session's history whole."""
    with raw(path) as connection:
        connection.executescript(_V1)
        connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        connection.execute("PRAGMA user_version = 1")
        connection.execute(
            "INSERT INTO entries (scope, key, value, body) VALUES (?, ?, ?, '')",
            ('{"session":"s1"}', HISTORY_KEY, '[{"content":"old","role":"user"}]'),
        )


async def test_a_version_1_file_opened_read_only_reads_its_history(db_path: Path) -> None:
    version_1_file(db_path)
    async with SqliteStore(db_path, read_only=True) as store:
        assert await store.read(SCOPE, HISTORY_KEY) == [{"content": "old", "role": "user"}]


async def test_a_version_1_file_keeps_its_history_and_appends_after_it(db_path: Path) -> None:
    version_1_file(db_path)
    async with SqliteStore(db_path) as store:
        assert await store.read(SCOPE, HISTORY_KEY) == [{"content": "old", "role": "user"}]
        assert await store.append_history(exchange("a")) == 3
        history = await store.read(SCOPE, HISTORY_KEY)
    assert [m["content"] for m in history] == ["old", "a.0", "a.1"]  # type: ignore[index,union-attr]


async def test_concurrent_appends_from_two_stores_on_one_file_keep_every_exchange_whole(
    db_path: Path,
) -> None:
    async with SqliteStore(db_path) as one, SqliteStore(db_path) as two:
        await asyncio.gather(
            *(
                (one if number % 2 else two).append_history(exchange(f"t{number}", 3))
                for number in range(40)
            )
        )
        history = await one.read(SCOPE, HISTORY_KEY)
    assert isinstance(history, list) and len(history) == 120
    contents = [m["content"] for m in history]  # type: ignore[index,call-overload]
    turns = [contents[i : i + 3] for i in range(0, 120, 3)]
    assert all(t == [f"{t[0][:-2]}.0", f"{t[0][:-2]}.1", f"{t[0][:-2]}.2"] for t in turns)
    assert sorted(t[0] for t in turns) == sorted(f"t{n}.0" for n in range(40))
