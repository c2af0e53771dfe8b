"""What every state store does alike (SqliteStore and PostgresStore): values, keys, batches."""

from __future__ import annotations

import math
import re

import pytest
from pydantic import JsonValue

from layer0 import (
    AgentScope,
    CustomScope,
    DeleteMemoryEffect,
    HistoryStore,
    Scope,
    SerializationError,
    SessionScope,
    StateError,
    StateStore,
    TurnRecordStore,
    WorkflowScope,
    WriteMemoryEffect,
)

from .conftest import AnyStore

SESSION = SessionScope(id="s1")
WORKFLOW = WorkflowScope(id="w1")

JSON_VALUES: list[JsonValue] = [
    None,
    True,
    False,
    0,
    -17,
    2**80,
    -(2**200) + 1,
    1.5,
    -2.25e-300,
    1.7976931348623157e308,
    5e-324,
    0.1,
    "",
    "plain",
    'héllo wörld ✓ 🎉 中文\n\ttabs "quotes" \\ backslash \u0000 nul',
    "\u0000",
    "\x01\x1f\x7f\u2028\ufeff",
    [],
    {},
    [1, "two", 3.0, None, False, [[]], {"x": []}],
    {"z": 1, "a": {"nested": [{"deep": ["er", {"deepest": None}]}]}, "m": "ü"},
    {"nul\u0000key": "a key holding NUL inside a value"},
]


async def test_the_store_satisfies_every_layer0_store_protocol(any_store: AnyStore) -> None:
    assert isinstance(any_store, StateStore)
    assert isinstance(any_store, HistoryStore)
    assert isinstance(any_store, TurnRecordStore)


@pytest.mark.parametrize("value", JSON_VALUES, ids=repr)
async def test_every_json_value_reads_back_equal(any_store: AnyStore, value: JsonValue) -> None:
    await any_store.write(SESSION, "k", value)
    read = await any_store.read(SESSION, "k")
    assert read == value
    assert type(read) is type(value)


async def test_object_keys_read_back_in_sorted_order(any_store: AnyStore) -> None:
    await any_store.write(SESSION, "k", {"b": 1, "a": 2, "aa": 3, "B": 4})
    read = await any_store.read(SESSION, "k")
    assert isinstance(read, dict)
    assert list(read) == ["B", "a", "aa", "b"]


async def test_a_huge_value_reads_back_whole(any_store: AnyStore) -> None:
    value = {"text": "word " * 1_000_000, "items": list(range(100_000))}
    await any_store.write(SESSION, "huge", value)
    assert await any_store.read(SESSION, "huge") == value


@pytest.mark.parametrize(
    "key",
    ["", " ", "a/b/c", "%_", "'; DROP TABLE entries; --", "ключ", "🎉", "tab\tnew\nline", "\\"],
    ids=repr,
)
async def test_keys_with_odd_characters_are_kept_apart_and_listed(
    any_store: AnyStore, key: str
) -> None:
    await any_store.write(SESSION, key, key)
    await any_store.write(SESSION, key + "x", "other")
    assert await any_store.read(SESSION, key) == key
    assert await any_store.list(SESSION, key) == [key, key + "x"]


async def test_read_of_a_missing_key_is_none(any_store: AnyStore) -> None:
    assert await any_store.read(SESSION, "missing") is None


async def test_write_replaces_the_previous_value(any_store: AnyStore) -> None:
    await any_store.write(SESSION, "k", {"v": 1})
    await any_store.write(SESSION, "k", [2])
    assert await any_store.read(SESSION, "k") == [2]
    assert await any_store.list(SESSION, "") == ["k"]


async def test_the_same_key_in_different_scopes_never_collides(any_store: AnyStore) -> None:
    scopes: list[Scope] = [
        "global",
        SessionScope(id="a"),
        WorkflowScope(id="a"),
        CustomScope(name="a"),
        AgentScope(workflow="a", agent="a"),
        CustomScope(name="global"),
        CustomScope(name='{"session":"a"}'),
    ]
    for index, scope in enumerate(scopes):
        await any_store.write(scope, "k", index)
    for index, scope in enumerate(scopes):
        assert await any_store.read(scope, "k") == index
        assert await any_store.list(scope, "") == ["k"]
    await any_store.delete(SessionScope(id="a"), "k")
    assert await any_store.read(SessionScope(id="a"), "k") is None
    assert await any_store.read(WorkflowScope(id="a"), "k") == 2


async def test_delete_removes_the_key_and_a_missing_one_is_a_no_op(any_store: AnyStore) -> None:
    await any_store.write(SESSION, "k", "v")
    await any_store.delete(SESSION, "k")
    await any_store.delete(SESSION, "k")
    assert await any_store.read(SESSION, "k") is None
    assert await any_store.list(SESSION, "") == []


async def test_list_returns_keys_with_the_prefix_in_code_point_order(any_store: AnyStore) -> None:
    keys = [
        "notes/b",
        "notes/a",
        "other",
        "notes",
        "note",
        "notes/a/1",
        "é",
        "Notes/x",
        "\U0010ffff",
    ]
    for key in keys:
        await any_store.write(SESSION, key, 1)
    await any_store.write("global", "notes/global", 1)
    assert await any_store.list(SESSION, "notes/") == ["notes/a", "notes/a/1", "notes/b"]
    assert await any_store.list(SESSION, "notes") == ["notes", "notes/a", "notes/a/1", "notes/b"]
    assert await any_store.list(SESSION, "") == sorted(keys)
    assert await any_store.list(SESSION, "é") == ["é"]
    assert await any_store.list(SESSION, "\U0010ffff") == ["\U0010ffff"]
    assert await any_store.list(SESSION, "zzz") == []


async def test_list_treats_percent_and_underscore_in_the_prefix_literally(
    any_store: AnyStore,
) -> None:
    for key in ["a%b", "a%", "axb", "a_c", "abc", "ABC", "a\\_x", "a\\x"]:
        await any_store.write(SESSION, key, 1)
    assert await any_store.list(SESSION, "a%") == ["a%", "a%b"]
    assert await any_store.list(SESSION, "a_") == ["a_c"]
    assert await any_store.list(SESSION, "a\\_") == ["a\\_x"]
    assert await any_store.list(SESSION, "ab") == ["abc"]
    assert await any_store.list(SESSION, "%") == []


@pytest.mark.parametrize(
    "value",
    [
        object(),
        {1, 2},
        (1, 2),
        b"bytes",
        math.nan,
        math.inf,
        {1: "int key"},
        {"nested": [{"ok": 1}, {"bad": object()}]},
        "lone surrogate \ud800",
    ],
    # Without an object's address: each xdist worker must collect the same ids.
    ids=lambda value: re.sub(r" at 0x[0-9a-f]+", "", repr(value)),
)
async def test_a_value_that_is_not_json_raises_naming_it_and_writes_nothing(
    any_store: AnyStore, value: object
) -> None:
    await any_store.write(SESSION, "k", "before")
    with pytest.raises(SerializationError) as raised:
        await any_store.write(SESSION, "k", value)  # type: ignore[arg-type]
    assert "'k'" in str(raised.value)
    assert '{"session":"s1"}' in str(raised.value)
    assert await any_store.read(SESSION, "k") == "before"


async def test_a_circular_value_raises_serialization_error(any_store: AnyStore) -> None:
    value: list[object] = []
    value.append(value)
    with pytest.raises(SerializationError):
        await any_store.write(SESSION, "k", value)  # type: ignore[arg-type]
    assert await any_store.read(SESSION, "k") is None


async def test_a_scope_that_is_not_a_scope_raises_state_error(any_store: AnyStore) -> None:
    with pytest.raises(StateError, match="not a layer0 Scope"):
        await any_store.read("local", "k")  # type: ignore[arg-type]


async def test_apply_runs_writes_and_deletes_in_order(any_store: AnyStore) -> None:
    await any_store.write(SESSION, "gone", "soon")
    await any_store.apply(
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
    assert await any_store.list(SESSION, "") == ["a", "c"]
    assert await any_store.read(SESSION, "a") == 1
    assert await any_store.read(WORKFLOW, "a") == {"w": True}
    assert await any_store.read(SESSION, "c") == "last wins"


async def test_apply_of_nothing_is_a_no_op(any_store: AnyStore) -> None:
    await any_store.apply([])
    await any_store.apply(iter(()))
    assert await any_store.list(SESSION, "") == []


async def test_a_batch_whose_third_value_is_not_json_applies_none(any_store: AnyStore) -> None:
    await any_store.write(SESSION, "existing", "untouched")
    with pytest.raises(SerializationError, match="'third'"):
        await any_store.apply(
            [
                WriteMemoryEffect(scope=SESSION, key="first", value=1),
                DeleteMemoryEffect(scope=SESSION, key="existing"),
                WriteMemoryEffect(scope=SESSION, key="third", value=math.nan),
            ]
        )
    assert await any_store.list(SESSION, "") == ["existing"]


async def test_a_closed_store_refuses_operations(any_store: AnyStore) -> None:
    await any_store.write("global", "k", 1)
    await any_store.close()
    await any_store.close()
    with pytest.raises(StateError, match="closed"):
        await any_store.read("global", "k")
    with pytest.raises(StateError, match="closed"):
        await any_store.write("global", "k", 2)
