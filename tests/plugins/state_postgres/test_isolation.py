"""The store's transactions keep their guarantees whatever isolation level the server gives.

A database may be set to run every transaction at REPEATABLE READ
(`ALTER DATABASE ... SET default_transaction_isolation`); the store's
appends still see every append committed before they took the key's lock,
and a store opening a schema another creates meanwhile still finds it made.
"""

from __future__ import annotations

import asyncio
from urllib.parse import quote

import psycopg
import pytest
from psycopg import sql

from layer0 import HISTORY_KEY, HistoryAppend, HistoryConflict, SessionScope
from neuron_state_postgres import PostgresStore, _schema

SESSION = SessionScope(id="s1")


def at_repeatable_read(conninfo: str) -> str:
    """`conninfo` with every transaction REPEATABLE READ unless it asks for another."""
    return conninfo + "?options=" + quote(r"-c default_transaction_isolation=repeatable\ read")


def turn(turn_id: str, *, expected: int | None = None) -> HistoryAppend:
    return HistoryAppend(
        session="s1", turn_id=turn_id, messages=["q", "a"], expected_length=expected
    )


async def wait_until_a_backend_waits_for_a_lock(connection: psycopg.AsyncConnection) -> None:
    """Return once another backend waits for a lock (the append, behind the held row)."""
    while True:
        cursor = await connection.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
        )
        row = await cursor.fetchone()
        if row is not None and row[0] > 0:
            return


async def test_an_append_waiting_behind_another_sees_it_at_repeatable_read(
    conninfo: str, schema: str
) -> None:
    async with PostgresStore(at_repeatable_read(conninfo), schema=schema) as store:
        assert await store.append_history(turn("first")) == 2
        async with await psycopg.AsyncConnection.connect(conninfo) as other:
            # Another store's append, caught with the key's row locked.
            entries = sql.Identifier(schema, "entries")
            appended = sql.Identifier(schema, "appended")
            await other.execute(
                sql.SQL("SELECT 1 FROM {} WHERE key = %s FOR UPDATE").format(entries),
                (HISTORY_KEY,),
            )
            late = asyncio.ensure_future(store.append_history(turn("late", expected=2)))
            async with await psycopg.AsyncConnection.connect(conninfo) as watcher:
                await watcher.set_autocommit(True)
                await asyncio.wait_for(wait_until_a_backend_waits_for_a_lock(watcher), 30)
            await other.execute(
                sql.SQL(
                    "INSERT INTO {} (scope, key, append_id, items, length)"
                    " VALUES (%s, %s, 'between', '[\"q\",\"a\"]', 4)"
                ).format(appended),
                ('{"session":"s1"}', HISTORY_KEY),
            )
            await other.commit()
        with pytest.raises(HistoryConflict) as raised:
            await late
        assert (raised.value.expected, raised.value.found) == (2, 4)
        assert await store.append_history(turn("after")) == 6
        assert await store.read(SESSION, HISTORY_KEY) == ["q", "a"] * 3


async def test_a_store_opening_while_another_creates_the_schema_finds_it_at_repeatable_read(
    conninfo: str, schema: str
) -> None:
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as other:
        # Another process creating the schema, caught holding its lock.
        lock = f"neuron-state-postgres:{schema}"
        await other.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (lock,))
        store = PostgresStore(at_repeatable_read(conninfo), schema=schema)
        opening = asyncio.ensure_future(store.__aenter__())
        async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as watcher:
            await asyncio.wait_for(wait_until_a_backend_waits_for_a_lock(watcher), 30)
        await _schema.ensure(other, schema, "the other process")
        await other.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (lock,))
    try:
        await opening
        assert await store.append_history(turn("first")) == 2
    finally:
        await store.close()
