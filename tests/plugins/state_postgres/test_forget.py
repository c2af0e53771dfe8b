"""`PostgresStore.forget_sessions` in the database itself: one transaction, other rows untouched."""

from __future__ import annotations

import psycopg
import pytest
from psycopg import sql

from layer0 import SessionScope, WriteFailed
from neuron_state_postgres import PostgresStore

from ._raw import refuse_turn_deletes
from .test_contract_forget import ALICE_INDEX, keep_a_session

# Every row of every table that may hold something of a session, search words included.
_TABLES = (
    "SELECT scope, key, value, body, document::text FROM {s}.entries ORDER BY scope, key",
    "SELECT id, scope, key, append_id, items, length FROM {s}.appended ORDER BY id",
    "SELECT turn_id, session, started, summary, record FROM {s}.turns ORDER BY turn_id",
)


async def all_rows(conninfo: str, schema: str) -> list[tuple[object, ...]]:
    """Every row of the store's tables, read behind its back."""
    found: list[tuple[object, ...]] = []
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as connection:
        for query in _TABLES:
            statement = sql.SQL(query).format(s=sql.Identifier(schema))  # type: ignore[arg-type]
            cursor = await connection.execute(statement)
            found.extend(await cursor.fetchall())
    return found


async def test_the_other_sessions_rows_are_byte_for_byte_as_they_were(
    store: PostgresStore, conninfo: str, schema: str
) -> None:
    await keep_a_session(store, "alice", "banana")
    await keep_a_session(store, "bob", "cherry")
    before = [row for row in await all_rows(conninfo, schema) if "bob" in str(row)]

    await store.forget_sessions(["alice"], [ALICE_INDEX])

    after = await all_rows(conninfo, schema)
    assert [row for row in after if "bob" in str(row)] == before
    assert not any("alice" in str(row) or "banana" in str(row) for row in after)


async def test_a_failure_part_way_rolls_the_whole_forgetting_back(
    store: PostgresStore, conninfo: str, schema: str
) -> None:
    await keep_a_session(store, "alice", "banana")
    before = await all_rows(conninfo, schema)
    # The turn records go after the keys, in the same transaction.
    await refuse_turn_deletes(conninfo, schema)

    with pytest.raises(WriteFailed, match=r"forgetting of session\(s\) 'alice' failed.*refused"):
        await store.forget_sessions(["alice"], [ALICE_INDEX])

    assert await all_rows(conninfo, schema) == before
    assert await store.list(SessionScope(id="alice"), "") != []
