"""`SqliteStore.forget_sessions` in the file itself: one transaction, the other rows untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from layer0 import SessionScope, WriteFailed
from neuron_state_sqlite import SqliteStore

from ..state_postgres.test_contract_forget import ALICE_INDEX, keep_a_session
from ._raw import raw

# Every row of every table that may hold something of a session, in a fixed order.
_TABLES = (
    "SELECT id, scope, key, value, body FROM entries ORDER BY id",
    "SELECT id, scope, key, append_id, items, length FROM appended ORDER BY id",
    "SELECT turn_id, session, started, summary, record FROM turns ORDER BY turn_id",
)


async def test_the_other_sessions_rows_are_byte_for_byte_as_they_were(
    store: SqliteStore, db_path: Path
) -> None:
    await keep_a_session(store, "alice", "banana")
    await keep_a_session(store, "bob", "cherry")
    before = _bob_rows(db_path)

    await store.forget_sessions(["alice"], [ALICE_INDEX])

    assert _bob_rows(db_path) == before
    assert not any("alice" in str(row) for row in _all_rows(db_path))


async def test_a_failure_part_way_rolls_the_whole_forgetting_back(
    store: SqliteStore, db_path: Path
) -> None:
    await keep_a_session(store, "alice", "banana")
    before = _all_rows(db_path)
    with raw(db_path) as connection:
        # The turn records go after the keys, in the same transaction.
        connection.execute(
            "CREATE TRIGGER keep_turns BEFORE DELETE ON turns "
            "BEGIN SELECT RAISE(ABORT, 'refused by test'); END"
        )

    with pytest.raises(WriteFailed, match=r"forgetting of session\(s\) 'alice' failed.*refused"):
        await store.forget_sessions(["alice"], [ALICE_INDEX])

    assert _all_rows(db_path) == before
    assert await store.list(SessionScope(id="alice"), "") != []


async def test_the_search_index_holds_no_word_of_a_forgotten_session(
    store: SqliteStore, db_path: Path
) -> None:
    await keep_a_session(store, "alice", "banana")
    await keep_a_session(store, "bob", "cherry")

    await store.forget_sessions(["alice"], [ALICE_INDEX])

    with raw(db_path) as connection:
        connection.execute(
            "CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, entries_fts, row)"
        )
        words = {term for (term,) in connection.execute("SELECT term FROM temp.vocab")}
        # Raises when the index and the rows it indexes disagree.
        connection.execute("INSERT INTO entries_fts (entries_fts) VALUES ('integrity-check')")
    assert "banana" not in words and "cherri" in words  # stemmed, as FTS5 keeps them


def _all_rows(path: Path) -> list[tuple[object, ...]]:
    with raw(path) as connection:
        return [row for query in _TABLES for row in connection.execute(query).fetchall()]


def _bob_rows(path: Path) -> list[tuple[object, ...]]:
    return [row for row in _all_rows(path) if any("bob" in str(cell) for cell in row)]
