from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from pydantic import JsonValue

from layer0 import (
    SerializationError,
    SessionScope,
    StateError,
    StateReader,
    StateStore,
    WriteFailed,
)
from neuron_state_sqlite import NotAStateDatabaseError, SqliteStore

from ._raw import raw, refuse_writes_of

SESSION = SessionScope(id="s1")

JSON_VALUES: list[JsonValue] = [
    None,
    True,
    False,
    0,
    -17,
    2**80,
    1.5,
    -2.25e-300,
    "",
    "plain",
    'héllo wörld ✓ 🎉 中文\n\ttabs "quotes" \\ backslash \u0000 nul',
    [],
    {},
    [1, "two", 3.0, None, False, [[]], {"x": []}],
    {"z": 1, "a": {"nested": [{"deep": ["er", {"deepest": None}]}]}, "m": "ü"},
]


async def test_store_satisfies_the_layer0_state_store_protocols(store: SqliteStore) -> None:
    assert isinstance(store, StateStore)
    assert isinstance(store, StateReader)


@pytest.mark.parametrize("value", JSON_VALUES, ids=repr)
async def test_every_json_type_round_trips(store: SqliteStore, value: JsonValue) -> None:
    await store.write(SESSION, "k", value)
    assert await store.read(SESSION, "k") == value


async def test_values_are_stored_as_canonical_json(store: SqliteStore, db_path: Path) -> None:
    await store.write("global", "k", {"b": "ü", "a": [1, 2]})
    with raw(db_path) as connection:
        (text,) = connection.execute("SELECT value FROM entries").fetchone()
    assert text == '{"a":[1,2],"b":"ü"}'


async def test_delete_removes_the_key(store: SqliteStore) -> None:
    await store.write(SESSION, "k", "v")
    await store.delete(SESSION, "k")
    assert await store.read(SESSION, "k") is None
    assert await store.list(SESSION, "") == []


async def test_delete_of_a_missing_key_is_a_no_op(store: SqliteStore) -> None:
    await store.delete(SESSION, "missing")
    await store.delete(SESSION, "missing")
    assert await store.list(SESSION, "") == []


async def test_list_returns_keys_with_the_prefix_sorted(store: SqliteStore) -> None:
    for key in ["notes/b", "notes/a", "other", "notes", "note", "notes/a/1", "é", "Notes/x"]:
        await store.write(SESSION, key, 1)
    await store.write("global", "notes/global", 1)
    assert await store.list(SESSION, "notes/") == ["notes/a", "notes/a/1", "notes/b"]
    assert await store.list(SESSION, "notes") == ["notes", "notes/a", "notes/a/1", "notes/b"]
    assert await store.list(SESSION, "") == sorted(
        ["notes/b", "notes/a", "other", "notes", "note", "notes/a/1", "é", "Notes/x"]
    )
    assert await store.list(SESSION, "é") == ["é"]
    assert await store.list(SESSION, "zzz") == []


async def test_a_stored_value_that_is_not_json_raises_on_read(
    store: SqliteStore, db_path: Path
) -> None:
    await store.write(SESSION, "k", "v")
    with raw(db_path) as connection:
        connection.execute("UPDATE entries SET value = '{not json'")
    with pytest.raises(SerializationError, match="'k'"):
        await store.read(SESSION, "k")


async def test_an_sqlite_error_on_write_is_write_failed_naming_key_and_scope(
    store: SqliteStore, db_path: Path
) -> None:
    refuse_writes_of(db_path, "bad")
    with pytest.raises(WriteFailed) as raised:
        await store.write(SESSION, "bad", 1)
    message = str(raised.value)
    assert "write of key 'bad'" in message
    assert '{"session":"s1"}' in message
    assert "refused by test" in message
    assert isinstance(raised.value.__cause__, sqlite3.Error)
    assert await store.read(SESSION, "bad") is None


async def test_an_sqlite_error_on_read_is_state_error_with_the_cause(
    store: SqliteStore, db_path: Path
) -> None:
    await store.write(SESSION, "k", 1)
    with raw(db_path) as connection:
        connection.execute("DROP TABLE entries")
    with pytest.raises(StateError, match="read of key 'k'") as raised:
        await store.read(SESSION, "k")
    assert isinstance(raised.value.__cause__, sqlite3.Error)


async def test_a_write_waiting_too_long_for_another_process_lock_fails(db_path: Path) -> None:
    async with SqliteStore(db_path, busy_timeout=0.05) as store:
        await store.write(SESSION, "k", "old")
        with raw(db_path) as other:
            other.execute("BEGIN IMMEDIATE")
            with pytest.raises(WriteFailed, match="database is locked"):
                await store.write(SESSION, "k", "new")
            # WAL: readers are not blocked by another writer.
            assert await store.read(SESSION, "k") == "old"
            other.execute("ROLLBACK")
        await store.write(SESSION, "k", "new")
        assert await store.read(SESSION, "k") == "new"


async def test_data_survives_reopening(db_path: Path) -> None:
    async with SqliteStore(db_path) as store:
        await store.write(SESSION, "k", {"kept": True})
    async with SqliteStore(db_path) as store:
        assert await store.read(SESSION, "k") == {"kept": True}


async def test_parent_directories_are_created(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "state.db"
    async with SqliteStore(path) as store:
        await store.write("global", "k", 1)
    assert path.is_file()


async def test_the_file_is_in_wal_mode(store: SqliteStore, db_path: Path) -> None:
    with raw(db_path) as connection:
        (mode,) = connection.execute("PRAGMA journal_mode").fetchone()
    assert mode == "wal"


async def test_closing_an_unused_store_creates_no_file(db_path: Path) -> None:
    await SqliteStore(db_path).close()
    assert not db_path.exists()


async def test_a_file_that_is_not_a_database_raises_state_error_naming_it(
    db_path: Path,
) -> None:
    db_path.write_bytes(b"this is not an sqlite database, not even close" * 100)
    store = SqliteStore(db_path)
    with pytest.raises(NotAStateDatabaseError, match="is not an SQLite database") as raised:
        await store.read("global", "k")
    assert str(db_path) in str(raised.value)
    assert "move it aside" in str(raised.value)
    await store.close()


async def test_a_directory_in_place_of_the_file_raises_state_error(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)
    with pytest.raises(NotAStateDatabaseError, match="is a directory"):
        await store.write("global", "k", 1)
    await store.close()


def test_bad_options_are_rejected_at_construction(db_path: Path) -> None:
    with pytest.raises(ValueError, match="readers"):
        SqliteStore(db_path, readers=0)
    with pytest.raises(ValueError, match="busy_timeout"):
        SqliteStore(db_path, busy_timeout=-1)
    with pytest.raises(ValueError, match="needs a file path"):
        SqliteStore(":memory:")


async def test_a_store_that_fails_to_open_in_async_with_is_closed(db_path: Path) -> None:
    db_path.write_bytes(b"not a database" * 100)
    store = SqliteStore(db_path)
    with pytest.raises(NotAStateDatabaseError, match="not an SQLite database"):
        async with store:
            pass
    with pytest.raises(StateError, match="closed"):
        await store.read("global", "k")


async def test_repr_and_path_name_the_file(db_path: Path) -> None:
    store = SqliteStore(str(db_path))
    assert store.path == db_path
    assert repr(store) == f"SqliteStore({str(db_path)!r})"
    await store.close()
