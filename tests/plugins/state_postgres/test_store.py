"""PostgresStore alone: what only a server shows (its errors, names Postgres refuses, restarts)."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

from layer0 import (
    DeleteMemoryEffect,
    HistoryAppend,
    SerializationError,
    SessionScope,
    StateError,
    WriteFailed,
    WriteMemoryEffect,
)
from neuron_state_postgres import PostgresStore, ReadOnlyStoreError

from ._raw import execute, refuse_writes_of, until_waiting_for_locks
from .test_contract_turns import record

SESSION = SessionScope(id="s1")


async def test_a_key_holding_nul_is_refused_naming_it_and_nothing_is_written(
    store: PostgresStore,
) -> None:
    with pytest.raises(WriteFailed, match=r"key 'a\\x00b' holds a NUL character") as raised:
        await store.apply(
            [
                WriteMemoryEffect(scope=SESSION, key="fine", value=1),
                WriteMemoryEffect(scope=SESSION, key="a\0b", value=1),
            ]
        )
    assert "none was applied" in str(raised.value)
    assert await store.list(SESSION, "") == []
    assert await store.read(SESSION, "a\0b") is None
    assert await store.list(SESSION, "a\0") == []
    await store.delete(SESSION, "a\0b")  # no such key can exist: nothing to delete
    assert await store.turn_record("t\0") is None


async def test_a_turn_id_holding_nul_is_refused_naming_it(store: PostgresStore) -> None:
    with pytest.raises(WriteFailed, match=r"turn id 't\\x00' holds a NUL character"):
        await store.record_turn(record("t\0", "s", "2026-01-01T00:00:01.000+00:00"))


async def test_a_key_holding_a_lone_surrogate_is_write_failed_and_reads_as_state_error(
    store: PostgresStore,
) -> None:
    with pytest.raises(WriteFailed, match="write of key"):
        await store.write(SESSION, "bad \ud800", 1)
    with pytest.raises(StateError, match="read of key"):
        await store.read(SESSION, "bad \ud800")


async def test_a_server_error_on_write_is_write_failed_naming_key_and_scope(
    store: PostgresStore, conninfo: str
) -> None:
    await refuse_writes_of(conninfo, store.schema, "bad")
    with pytest.raises(WriteFailed) as raised:
        await store.write(SESSION, "bad", 1)
    message = str(raised.value)
    assert "write of key 'bad'" in message
    assert '{"session":"s1"}' in message
    assert "refused by test" in message
    assert isinstance(raised.value.__cause__, psycopg.Error)
    assert await store.read(SESSION, "bad") is None


async def test_a_batch_whose_third_op_fails_in_the_database_applies_none(
    store: PostgresStore, conninfo: str
) -> None:
    await store.write(SESSION, "existing", "untouched")
    await refuse_writes_of(conninfo, store.schema, "third")
    with pytest.raises(WriteFailed) as raised:
        await store.apply(
            [
                WriteMemoryEffect(scope=SESSION, key="first", value=1),
                DeleteMemoryEffect(scope=SESSION, key="existing"),
                WriteMemoryEffect(scope=SESSION, key="third", value=3),
                WriteMemoryEffect(scope=SESSION, key="fourth", value=4),
            ]
        )
    message = str(raised.value)
    assert "batch of 4 operations failed at #3 (write of key 'third'" in message
    assert "none was applied" in message
    assert await store.list(SESSION, "") == ["existing"]
    assert await store.search(SESSION, "untouched", 5) != []
    await store.apply([WriteMemoryEffect(scope=SESSION, key="first", value=1)])
    assert await store.list(SESSION, "") == ["existing", "first"]


async def test_a_server_error_on_read_is_state_error_with_the_cause(
    store: PostgresStore, conninfo: str
) -> None:
    await store.write(SESSION, "k", 1)
    await execute(conninfo, "DROP TABLE {s}.appended", store.schema)
    with pytest.raises(StateError, match="read of key 'k'") as raised:
        await store.read(SESSION, "k")
    assert isinstance(raised.value.__cause__, psycopg.Error)


async def test_a_stored_value_that_is_not_json_raises_serialization_error_on_read(
    store: PostgresStore, conninfo: str
) -> None:
    await store.write(SESSION, "k", "v")
    await execute(conninfo, "UPDATE {s}.entries SET value = '{{not json'", store.schema)
    with pytest.raises(SerializationError, match="'k'"):
        await store.read(SESSION, "k")


async def test_a_stored_record_that_does_not_parse_is_a_state_error_naming_the_turn(
    store: PostgresStore, conninfo: str
) -> None:
    await store.record_turn(record("t1", "s", "2026-01-01T00:00:01.000+00:00"))
    await execute(conninfo, "UPDATE {s}.turns SET record = '{{\"turn_id\": 5}}'", store.schema)
    with pytest.raises(StateError, match="turn record of 't1' does not parse"):
        await store.turn_record("t1")


async def test_data_survives_closing_and_opening_a_new_store(conninfo: str, schema: str) -> None:
    async with PostgresStore(conninfo, schema=schema) as store:
        await store.write(SESSION, "k", {"kept": True})
        await store.record_turn(record("t1", "s", "2026-01-01T00:00:01.000+00:00"))
    async with PostgresStore(conninfo, schema=schema) as store:
        assert await store.read(SESSION, "k") == {"kept": True}
        assert [s.turn_id for s in await store.turn_summaries()] == ["t1"]


async def test_a_write_whose_caller_is_cancelled_still_lands_whole(
    store: PostgresStore, conninfo: str
) -> None:
    await store.write(SESSION, "k", "old")
    async with await psycopg.AsyncConnection.connect(conninfo) as blocker:
        table = f'"{store.schema}".entries'
        await blocker.execute(f"SELECT 1 FROM {table} FOR UPDATE")  # type: ignore[arg-type]
        write = asyncio.ensure_future(
            store.apply(
                [
                    WriteMemoryEffect(scope=SESSION, key="new", value=1),
                    WriteMemoryEffect(scope=SESSION, key="k", value="new"),
                ]
            )
        )
        await until_waiting_for_locks(conninfo)
        write.cancel()
        with pytest.raises(asyncio.CancelledError):
            await write
        await blocker.rollback()
    await store.close()
    async with PostgresStore(conninfo, schema=store.schema) as reopened:
        assert await reopened.read(SESSION, "k") == "new"
        assert await reopened.read(SESSION, "new") == 1


async def test_two_schemas_in_one_database_are_separate_stores(conninfo: str, schema: str) -> None:
    async with (
        PostgresStore(conninfo, schema=schema) as one,
        PostgresStore(conninfo, schema=schema + "_other") as two,
    ):
        await one.write(SESSION, "k", "one")
        await two.write(SESSION, "k", "two")
        assert await one.read(SESSION, "k") == "one"
        assert await two.read(SESSION, "k") == "two"
        assert await one.search(SESSION, "two", 5) == []


async def test_a_schema_name_needing_quotes_works(conninfo: str, schema: str) -> None:
    odd = f'{schema[:30]} "Odd"; DROP'
    async with PostgresStore(conninfo, schema=odd) as store:
        await store.write(SESSION, "k", "colours")
        assert [r.key for r in await store.search(SESSION, "colour", 5)] == ["k"]
        assert store.schema == odd


async def test_batches_locking_keys_in_opposite_orders_all_succeed(store: PostgresStore) -> None:
    def batch(first: str, second: str, n: int) -> list[WriteMemoryEffect]:
        return [
            WriteMemoryEffect(scope=SESSION, key=first, value=n),
            WriteMemoryEffect(scope=SESSION, key=second, value=n),
        ]

    await asyncio.gather(
        *(store.apply(batch("a", "b", n) if n % 2 else batch("b", "a", n)) for n in range(60))
    )
    assert await store.list(SESSION, "") == ["a", "b"]


def test_bad_options_are_rejected_at_construction(conninfo: str) -> None:
    for options, named in [
        ({"schema": ""}, "schema"),
        ({"schema": "x" * 64}, "schema"),
        ({"min_size": 3, "max_size": 2}, "max_size"),
        ({"max_size": 0}, "max_size"),
        ({"connect_timeout": 0}, "timeouts"),
    ]:
        with pytest.raises(ValueError, match=named):
            PostgresStore(conninfo, **options)  # type: ignore[arg-type]


async def test_a_store_that_fails_to_open_in_async_with_is_closed(
    postgres_server_port: int,
) -> None:
    store = PostgresStore(f"postgresql://nobody:pw@127.0.0.1:{postgres_server_port}/postgres")
    with pytest.raises(StateError):
        async with store:
            pass
    with pytest.raises(StateError, match="closed"):
        await store.read("global", "k")


async def test_connections_the_server_dropped_are_replaced_and_no_operation_fails(
    conninfo: str, schema: str
) -> None:
    # As after a server restart or a failover: every pooled connection is gone.
    async with PostgresStore(conninfo, schema=schema, min_size=3, max_size=3) as store:
        await asyncio.gather(*(store.write(SESSION, f"before{n}", n) for n in range(3)))
        await _drop_every_connection(conninfo)
        await store.append_history(HistoryAppend(session="s1", turn_id="t", messages=[1]))
        await _drop_every_connection(conninfo)
        assert await store.read(SESSION, "before1") == 1
        await _drop_every_connection(conninfo)
        await store.write(SESSION, "after", 2)
        assert await store.list(SESSION, "") == [
            "after",
            "before0",
            "before1",
            "before2",
            "messages",
        ]
        assert await store.read(SESSION, "messages") == [1]


async def _drop_every_connection(conninfo: str) -> None:
    """End every other connection of the server, as a restart would."""
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as admin:
        dropped = await admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE pid <> pg_backend_pid() AND usename = current_user"
        )
        assert await dropped.fetchall()


async def test_a_read_only_store_on_no_schema_reads_empty_and_creates_nothing(
    conninfo: str, schema: str
) -> None:
    async with PostgresStore(conninfo, schema=schema, read_only=True) as reader:
        assert await reader.read(SESSION, "k") is None
        assert await reader.list(SESSION, "") == []
        assert await reader.search(SESSION, "anything", 5) == []
        assert await reader.turn_summaries() == [] and await reader.turn_sessions() == []
        async with await psycopg.AsyncConnection.connect(conninfo) as admin:
            found = await admin.execute(
                "SELECT count(*) FROM pg_namespace WHERE nspname = %s", (schema,)
            )
            assert await found.fetchone() == (0,)
        # A writer creates it later: the same reader sees what it wrote.
        async with PostgresStore(conninfo, schema=schema) as writer:
            await writer.write(SESSION, "k", "v")
        assert await reader.read(SESSION, "k") == "v"


async def test_a_read_only_store_refuses_writes_and_so_does_the_server(
    conninfo: str, schema: str
) -> None:
    async with PostgresStore(conninfo, schema=schema) as writer:
        await writer.write(SESSION, "k", "v")
    async with PostgresStore(conninfo, schema=schema, read_only=True) as reader:
        with pytest.raises(ReadOnlyStoreError, match="opened read-only"):
            await reader.write(SESSION, "k", "other")
        with pytest.raises(ReadOnlyStoreError):
            await reader.apply([DeleteMemoryEffect(scope=SESSION, key="k")])
        # Below the store's own check, its connections cannot write either.
        async with reader._pool.connection() as connection:
            with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
                await connection.execute(f'DELETE FROM "{schema}".entries')
        assert await reader.read(SESSION, "k") == "v"


async def test_a_read_only_store_keeps_the_server_options_its_connection_string_gives(
    conninfo: str, schema: str
) -> None:
    # libpq takes one `options`: the read-only setting once replaced the caller's.
    given = f"{conninfo}?options=-c%20statement_timeout%3D4321"
    async with PostgresStore(given, schema=schema) as writer:
        await writer.write(SESSION, "k", "v")
    async with PostgresStore(given, schema=schema, read_only=True) as reader:
        assert await reader.read(SESSION, "k") == "v"
        async with reader._pool.connection() as connection:
            shown = await connection.execute("SHOW statement_timeout")
            assert await shown.fetchone() == ("4321ms",)
            with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
                await connection.execute(f'DELETE FROM "{schema}".entries')


async def test_a_read_only_store_keeps_the_server_options_of_pgoptions(
    conninfo: str, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with PostgresStore(conninfo, schema=schema):
        pass  # the schema made: a read-only store on none opens no connections
    monkeypatch.setenv("PGOPTIONS", "-c statement_timeout=4321")
    async with PostgresStore(conninfo, schema=schema, read_only=True) as reader:
        async with reader._pool.connection() as connection:
            shown = await connection.execute("SHOW statement_timeout")
            assert await shown.fetchone() == ("4321ms",)
            read_only = await connection.execute("SHOW default_transaction_read_only")
            assert await read_only.fetchone() == ("on",)
