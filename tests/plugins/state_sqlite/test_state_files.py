"""Files that are not a usable state database: refused with a class, a message and no write."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from layer0 import StateError
from neuron_state_sqlite import (
    NotAStateDatabaseError,
    SqliteStore,
    StateFileAccessError,
    StateFileError,
)
from neuron_state_sqlite._schema import APPLICATION_ID, SCHEMA_VERSION

from ._raw import raw


def _foreign_tables(path: Path) -> None:
    with raw(path) as connection:
        connection.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total TEXT)")
        connection.execute("INSERT INTO invoices (total) VALUES ('12.50')")


def _foreign_application_id(path: Path) -> None:
    with raw(path) as connection:
        connection.execute("PRAGMA application_id = 1598903374")  # a Fossil repository's
        connection.execute("CREATE TABLE blob (rid INTEGER PRIMARY KEY)")


def _foreign_with_our_version(path: Path) -> None:
    with raw(path) as connection:
        connection.execute("CREATE TABLE settings (name TEXT, value TEXT)")
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


FOREIGN = [_foreign_tables, _foreign_application_id, _foreign_with_our_version]


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {entry.name: entry.read_bytes() for entry in sorted(directory.iterdir())}


@pytest.mark.parametrize("read_only", [False, True], ids=["read-write", "read-only"])
@pytest.mark.parametrize("make", FOREIGN)
async def test_another_programs_database_is_refused_and_left_byte_identical(
    tmp_path: Path, make: object, read_only: bool
) -> None:
    path = tmp_path / "other.db"
    make(path)  # type: ignore[operator]
    before = _snapshot(tmp_path)
    store = SqliteStore(path, read_only=read_only)
    with pytest.raises(NotAStateDatabaseError, match="not a neuron-turn state database") as exc:
        await store.read("global", "k")
    await store.close()
    assert exc.value.path == path and str(path) in str(exc.value)
    assert "move it aside" in str(exc.value)
    # Not switched to WAL, no journal or sidecar files left behind.
    assert _snapshot(tmp_path) == before


async def test_random_bytes_are_refused_as_not_sqlite_and_left_untouched(db_path: Path) -> None:
    db_path.write_bytes(os.urandom(8192))
    before = db_path.read_bytes()
    store = SqliteStore(db_path)
    with pytest.raises(NotAStateDatabaseError, match="is not an SQLite database"):
        await store.write("global", "k", 1)
    await store.close()
    assert db_path.read_bytes() == before


async def test_a_corrupt_page_is_reported_as_corrupt_with_what_to_do(db_path: Path) -> None:
    async with SqliteStore(db_path) as store:
        for index in range(200):
            await store.write("global", f"key-{index:03d}", "text " * 100)
    size = db_path.stat().st_size
    with db_path.open("r+b") as file:  # keep page 1 (the header and schema), ruin the rest
        file.seek(4096)
        file.write(b"\xa5" * (size - 4096))
    store = SqliteStore(db_path)
    with pytest.raises(NotAStateDatabaseError, match="is corrupt") as exc:
        await store.list("global", "key-")
    await store.close()
    assert "restore it from a backup" in str(exc.value)
    assert isinstance(exc.value, StateFileError) and isinstance(exc.value, StateError)


async def test_a_new_file_is_stamped_with_the_application_id(
    store: SqliteStore, db_path: Path
) -> None:
    with raw(db_path) as connection:
        assert connection.execute("PRAGMA application_id").fetchone() == (APPLICATION_ID,)


async def test_a_state_file_from_before_the_application_id_is_still_opened(
    db_path: Path,
) -> None:
    async with SqliteStore(db_path) as store:
        await store.write("global", "k", "kept")
    with raw(db_path) as connection:
        connection.execute("PRAGMA application_id = 0")
    async with SqliteStore(db_path, read_only=True) as store:
        assert await store.read("global", "k") == "kept"
    async with SqliteStore(db_path) as store:
        assert await store.read("global", "k") == "kept"
    with raw(db_path) as connection:
        assert connection.execute("PRAGMA application_id").fetchone() == (APPLICATION_ID,)


async def test_a_read_only_store_reads_without_writing_anything(db_path: Path) -> None:
    async with SqliteStore(db_path) as store:
        await store.write("global", "notes/a", {"text": "alpha beta"})
    with raw(db_path) as connection:  # a rollback-journal file shows any mode switch
        connection.execute("PRAGMA journal_mode = DELETE")
    before = _snapshot(db_path.parent)
    async with SqliteStore(db_path, read_only=True) as store:
        assert await store.read("global", "notes/a") == {"text": "alpha beta"}
        assert await store.list("global", "notes/") == ["notes/a"]
        assert [hit.key for hit in await store.search("global", "beta", 5)] == ["notes/a"]
        with pytest.raises(StateFileAccessError, match="opened read-only"):
            await store.write("global", "notes/b", 1)
    assert _snapshot(db_path.parent) == before


async def test_a_read_only_store_on_a_missing_file_reads_empty_and_creates_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "absent" / "state.db"
    async with SqliteStore(path, read_only=True) as store:
        assert await store.read("global", "k") is None
        assert await store.list("global", "") == []
        assert await store.search("global", "anything", 3) == []
    assert not (tmp_path / "absent").exists()


async def test_a_read_only_store_on_a_directory_says_it_is_a_directory(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path, read_only=True)
    with pytest.raises(NotAStateDatabaseError, match="is a directory"):
        await store.read("global", "k")
    await store.close()


def test_the_error_classes_carry_the_file(tmp_path: Path) -> None:
    error = StateFileAccessError(tmp_path / "s.db", "is read-only", "make it writable")
    assert error.path == tmp_path / "s.db"
    assert str(error) == f"state database {str(tmp_path / 's.db')!r} is read-only; make it writable"


async def test_a_read_only_store_reads_a_file_of_an_older_version_without_migrating_it(
    db_path: Path,
) -> None:
    async with SqliteStore(db_path) as store:
        await store.write("global", "k", ["kept"])
    with raw(db_path) as connection:  # back to version 1: no `appended` table yet
        connection.execute("DROP TABLE appended")
        connection.execute("PRAGMA user_version = 1")
        connection.execute("PRAGMA journal_mode = DELETE")
    before = _snapshot(db_path.parent)
    async with SqliteStore(db_path, read_only=True) as store:
        assert await store.read("global", "k") == ["kept"]
        assert await store.list("global", "") == ["k"]
    assert _snapshot(db_path.parent) == before
