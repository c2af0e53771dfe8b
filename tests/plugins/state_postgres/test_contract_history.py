"""Session history appends on every store: atomic, once per turn id, optimistic, one list."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import JsonValue

from layer0 import (
    HISTORY_KEY,
    HistoryAppend,
    HistoryConflict,
    SessionScope,
    WriteFailed,
    WriteMemoryEffect,
)

from .conftest import AnyStore

SCOPE = SessionScope(id="s1")


def exchange(turn: str, size: int = 2) -> HistoryAppend:
    messages: list[JsonValue] = [{"role": "user", "content": f"{turn}.0"}]
    messages += [{"role": "assistant", "content": f"{turn}.{i}"} for i in range(1, size)]
    return HistoryAppend(session="s1", turn_id=turn, messages=messages)


def contents(history: JsonValue) -> list[str]:
    assert isinstance(history, list)
    return [str(message["content"]) for message in history]  # type: ignore[call-overload,index]


async def test_appends_read_back_as_one_list(any_store: AnyStore) -> None:
    assert await any_store.append_history(exchange("a")) == 2
    assert await any_store.append_history(exchange("b", 3)) == 5
    history = await any_store.read(SCOPE, HISTORY_KEY)
    assert contents(history) == ["a.0", "a.1", "b.0", "b.1", "b.2"]
    assert await any_store.list(SCOPE, "") == [HISTORY_KEY]


async def test_the_same_turn_id_is_appended_once(any_store: AnyStore) -> None:
    await any_store.append_history(exchange("a"))
    assert await any_store.append_history(exchange("a")) == 2
    await any_store.apply([exchange("a")])
    assert len(await any_store.read(SCOPE, HISTORY_KEY)) == 2  # type: ignore[arg-type]


async def test_an_append_expecting_another_length_fails_and_changes_nothing(
    any_store: AnyStore,
) -> None:
    await any_store.append_history(exchange("a"))
    stale = exchange("b").model_copy(update={"expected_length": 0})
    with pytest.raises(HistoryConflict, match=r"read 0 message.* now holds 2") as raised:
        await any_store.append_history(stale)
    assert (raised.value.expected, raised.value.found) == (0, 2)
    fresh = exchange("c").model_copy(update={"expected_length": 2})
    assert await any_store.append_history(fresh) == 4


async def test_a_repeated_turn_id_returns_the_length_even_with_a_stale_expectation(
    any_store: AnyStore,
) -> None:
    await any_store.append_history(exchange("a"))
    await any_store.append_history(exchange("b"))
    again = exchange("a").model_copy(update={"expected_length": 0})
    assert await any_store.append_history(again) == 4


async def test_a_conflict_in_a_batch_rolls_the_whole_batch_back(any_store: AnyStore) -> None:
    await any_store.append_history(exchange("a"))
    write = WriteMemoryEffect(scope="global", key="k", value=1)
    with pytest.raises(HistoryConflict):
        await any_store.apply([write, exchange("b").model_copy(update={"expected_length": 5})])
    assert await any_store.read("global", "k") is None
    assert len(await any_store.read(SCOPE, HISTORY_KEY)) == 2  # type: ignore[arg-type]


async def test_a_whole_write_replaces_the_appended_list_and_a_delete_removes_it(
    any_store: AnyStore,
) -> None:
    await any_store.append_history(exchange("a"))
    await any_store.write(SCOPE, HISTORY_KEY, [{"role": "user", "content": "reset"}])
    assert await any_store.read(SCOPE, HISTORY_KEY) == [{"role": "user", "content": "reset"}]
    assert await any_store.append_history(exchange("b")) == 3
    await any_store.delete(SCOPE, HISTORY_KEY)
    assert await any_store.read(SCOPE, HISTORY_KEY) is None
    assert await any_store.append_history(exchange("c")) == 2


async def test_appending_to_a_value_that_is_not_a_list_fails_clearly(any_store: AnyStore) -> None:
    await any_store.write(SCOPE, HISTORY_KEY, {"not": "a list"})
    with pytest.raises(WriteFailed, match="not a list"):
        await any_store.append_history(exchange("a"))
    assert await any_store.read(SCOPE, HISTORY_KEY) == {"not": "a list"}


async def test_messages_holding_nul_and_huge_text_append_and_read_back(
    any_store: AnyStore,
) -> None:
    messages: list[JsonValue] = [
        {"role": "user", "content": "before\u0000after"},
        {"role": "assistant", "content": "x" * 2_000_000},
    ]
    await any_store.append_history(HistoryAppend(session="s1", turn_id="t", messages=messages))
    assert await any_store.read(SCOPE, HISTORY_KEY) == messages


async def test_concurrent_appends_to_one_session_keep_every_exchange_whole(
    any_store: AnyStore,
) -> None:
    await asyncio.gather(*(any_store.append_history(exchange(f"t{n}", 3)) for n in range(40)))
    got = contents(await any_store.read(SCOPE, HISTORY_KEY))
    assert len(got) == 120
    turns = [got[i : i + 3] for i in range(0, 120, 3)]
    assert all(t == [f"{t[0][:-2]}.0", f"{t[0][:-2]}.1", f"{t[0][:-2]}.2"] for t in turns)
    assert sorted(t[0] for t in turns) == sorted(f"t{n}.0" for n in range(40))
