"""Session history appends: atomic, once per turn id, optimistic, cheap, readable as one list."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import JsonValue

from layer0 import (
    HISTORY_KEY,
    HistoryAppend,
    HistoryStore,
    SessionScope,
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
