from __future__ import annotations

from pathlib import Path

import pytest

from layer0 import StateError
from neuron_state_sqlite import SchemaVersionError, SqliteStore
from neuron_state_sqlite._schema import SCHEMA_VERSION

from ._raw import raw


async def test_a_new_file_gets_the_current_schema_version(
    store: SqliteStore, db_path: Path
) -> None:
    with raw(db_path) as connection:
        (version,) = connection.execute("PRAGMA user_version").fetchone()
    assert version == SCHEMA_VERSION


async def test_a_file_from_a_newer_version_raises_a_clear_error(db_path: Path) -> None:
    async with SqliteStore(db_path) as store:
        await store.write("global", "k", 1)
    with raw(db_path) as connection:
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")

    with pytest.raises(SchemaVersionError) as raised:
        async with SqliteStore(db_path):
            pass
    error = raised.value
    assert isinstance(error, StateError)
    assert (error.path, error.found, error.supported) == (
        db_path,
        SCHEMA_VERSION + 1,
        SCHEMA_VERSION,
    )
    message = str(error)
    assert str(db_path) in message
    assert f"schema version {SCHEMA_VERSION + 1}" in message
    assert f"supports up to version {SCHEMA_VERSION}" in message


async def test_every_operation_on_a_newer_file_raises_schema_version_error(
    db_path: Path,
) -> None:
    with raw(db_path) as connection:
        connection.execute("PRAGMA user_version = 99")
    store = SqliteStore(db_path)
    with pytest.raises(SchemaVersionError):
        await store.read("global", "k")
    with pytest.raises(SchemaVersionError):
        await store.write("global", "k", 1)
    await store.close()
    with raw(db_path) as connection:
        assert connection.execute("SELECT name FROM sqlite_master").fetchall() == []


async def test_another_applications_database_is_refused(db_path: Path) -> None:
    with raw(db_path) as connection:
        connection.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    store = SqliteStore(db_path)
    with pytest.raises(StateError, match="not a neuron-turn state database"):
        await store.read("global", "k")
    await store.close()


async def test_reopening_an_up_to_date_file_takes_no_write_lock(db_path: Path) -> None:
    async with SqliteStore(db_path) as store:
        await store.write("global", "k", 1)
    with raw(db_path) as other:
        other.execute("BEGIN IMMEDIATE")
        async with SqliteStore(db_path, busy_timeout=0) as store:
            assert await store.read("global", "k") == 1
        other.execute("ROLLBACK")
