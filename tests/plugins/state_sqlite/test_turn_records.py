"""Turn records in the SQLite store: kept, listed, migrated into older files, read read-only."""

from __future__ import annotations

from pathlib import Path

import pytest

from layer0 import (
    HISTORY_KEY,
    SessionScope,
    StateError,
    TurnInput,
    TurnMetadata,
    TurnOutput,
    TurnRecord,
    TurnRecordStore,
    usd,
)
from neuron_state_sqlite import SqliteStore, StateFileAccessError

from ._raw import raw


def record(turn_id: str, session: str | None, started: str, text: str = "hi") -> TurnRecord:
    metadata = TurnMetadata(
        tokens_in=10, tokens_out=2, cost=usd("0.001"), turns_used=1, tools_called=[], duration=50
    )
    return TurnRecord(
        turn_id=turn_id,
        session=session,
        agent="main",
        workflow_id="w",
        started=started,
        input=TurnInput(message=text, trigger="user", session=session),
        output=TurnOutput(message="ok", exit_reason="complete", metadata=metadata),
        status="executed",
    )


def snapshot(directory: Path) -> dict[str, bytes]:
    return {entry.name: entry.read_bytes() for entry in sorted(directory.iterdir())}


async def test_the_store_is_a_turn_record_store_and_reads_back_what_it_kept(
    store: SqliteStore,
) -> None:
    assert isinstance(store, TurnRecordStore)
    kept = record("t1", "s", "2026-01-01T00:00:01.000+00:00")
    await store.record_turn(kept)
    assert await store.turn_record("t1") == kept
    assert await store.turn_record("missing") is None


async def test_a_version_2_file_gains_the_table_and_keeps_its_history(db_path: Path) -> None:
    async with SqliteStore(db_path) as store:
        await store.write(SessionScope(id="s"), HISTORY_KEY, [{"role": "user", "content": "old"}])
    with raw(db_path) as connection:  # back to version 2: no `turns` table yet
        connection.execute("DROP TABLE turns")
        connection.execute("PRAGMA user_version = 2")
    async with SqliteStore(db_path) as store:
        history = await store.read(SessionScope(id="s"), HISTORY_KEY)
        await store.record_turn(record("t1", "s", "2026-01-01T00:00:01.000+00:00"))
        assert [s.turn_id for s in await store.turn_summaries()] == ["t1"]
    assert history == [{"role": "user", "content": "old"}]
    with raw(db_path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (3,)


async def test_a_version_2_file_opened_read_only_lists_no_turns_and_is_left_untouched(
    db_path: Path,
) -> None:
    async with SqliteStore(db_path) as store:
        await store.write("global", "k", 1)
    with raw(db_path) as connection:
        connection.execute("DROP TABLE turns")
        connection.execute("PRAGMA user_version = 2")
        connection.execute("PRAGMA journal_mode = DELETE")
    before = snapshot(db_path.parent)
    async with SqliteStore(db_path, read_only=True) as store:
        assert await store.turn_summaries() == []
        assert await store.turn_sessions() == []
        assert await store.turn_record("t1") is None
    assert snapshot(db_path.parent) == before


async def test_a_read_only_store_refuses_to_record_a_turn(db_path: Path) -> None:
    async with SqliteStore(db_path) as store:
        await store.write("global", "k", 1)
    async with SqliteStore(db_path, read_only=True) as store:
        with pytest.raises(StateFileAccessError, match="read-only"):
            await store.record_turn(record("t1", "s", "2026-01-01T00:00:01.000+00:00"))


async def test_a_stored_record_that_does_not_parse_is_a_state_error_naming_the_turn(
    store: SqliteStore, db_path: Path
) -> None:
    await store.record_turn(record("t1", "s", "2026-01-01T00:00:01.000+00:00"))
    with raw(db_path) as connection:
        connection.execute("UPDATE turns SET record = '{\"turn_id\": 5}'")
    with pytest.raises(StateError, match="turn record of 't1' does not parse"):
        await store.turn_record("t1")
