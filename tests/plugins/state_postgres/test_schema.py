"""The schema: created once on first use, versioned, refused when newer or another program's."""

from __future__ import annotations

import asyncio
import secrets

import psycopg
import pytest

from neuron_state_postgres import (
    SCHEMA_VERSION,
    NotAStateSchemaError,
    PostgresStore,
    SchemaAccessError,
    SchemaVersionError,
)

from ._raw import execute
from ._server import Server


async def version_of(conninfo: str, schema: str) -> list[tuple[int]]:
    async with await psycopg.AsyncConnection.connect(conninfo) as connection:
        cursor = await connection.execute(f'SELECT version FROM "{schema}".schema_version')  # type: ignore[arg-type]
        return await cursor.fetchall()


async def test_first_use_creates_the_schema_with_its_version(conninfo: str, schema: str) -> None:
    async with PostgresStore(conninfo, schema=schema) as store:
        await store.write("global", "k", 1)
    assert await version_of(conninfo, schema) == [(SCHEMA_VERSION,)]


async def test_many_stores_opening_a_new_schema_at_once_create_it_once(
    conninfo: str, schema: str
) -> None:
    stores = [PostgresStore(conninfo, schema=schema) for _ in range(8)]
    try:
        await asyncio.gather(*(store.write("global", f"k{n}", n) for n, store in enumerate(stores)))
        assert await stores[0].list("global", "") == [f"k{n}" for n in range(8)]
    finally:
        await asyncio.gather(*(store.close() for store in stores))
    assert await version_of(conninfo, schema) == [(SCHEMA_VERSION,)]


async def test_a_schema_of_a_newer_version_is_refused_naming_both_versions(
    conninfo: str, schema: str
) -> None:
    async with PostgresStore(conninfo, schema=schema):
        pass
    await execute(conninfo, "UPDATE {s}.schema_version SET version = 99", schema)
    store = PostgresStore(conninfo, schema=schema)
    with pytest.raises(SchemaVersionError) as raised:
        await store.read("global", "k")
    message = str(raised.value)
    assert f"schema {schema!r} has version 99" in message
    assert f"supports up to version {SCHEMA_VERSION}" in message
    assert "upgrade neuron-state-postgres" in message
    assert (raised.value.found, raised.value.supported) == (99, SCHEMA_VERSION)
    await store.close()


async def test_a_schema_holding_another_programs_tables_is_refused_and_left_alone(
    conninfo: str, schema: str
) -> None:
    await execute(conninfo, "CREATE SCHEMA {s}", schema)
    await execute(conninfo, "CREATE TABLE {s}.entries (theirs integer)", schema)
    store = PostgresStore(conninfo, schema=schema)
    with pytest.raises(NotAStateSchemaError, match="belongs to another program"):
        await store.write("global", "k", 1)
    await store.close()
    async with await psycopg.AsyncConnection.connect(conninfo) as connection:
        cursor = await connection.execute(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s",
            (schema,),
        )
        assert await cursor.fetchone() == (1,)


async def test_an_empty_existing_schema_is_taken_into_use(conninfo: str, schema: str) -> None:
    await execute(conninfo, "CREATE SCHEMA {s}", schema)
    async with PostgresStore(conninfo, schema=schema) as store:
        await store.write("global", "k", 1)
        assert await store.read("global", "k") == 1


async def test_a_user_who_may_not_create_the_schema_gets_schema_access_error(
    postgres_server: Server, conninfo: str, schema: str
) -> None:
    role, password = f"r_{schema}", secrets.token_urlsafe(16)
    await execute(conninfo, f"CREATE ROLE {role} LOGIN PASSWORD '{password}'", schema)
    limited = postgres_server.conninfo(password=password).replace("neuron:", f"{role}:", 1)
    store = PostgresStore(limited, schema=schema)
    with pytest.raises(SchemaAccessError, match="may not create or use schema") as raised:
        await store.write("global", "k", 1)
    assert "grant it CREATE" in str(raised.value)
    assert password not in str(raised.value)
    await store.close()
