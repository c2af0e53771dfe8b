"""Direct SQL on a store's schema, to check or sabotage it behind the store's back."""

from __future__ import annotations

import psycopg
from psycopg import sql


async def execute(conninfo: str, statement: str, schema: str) -> None:
    """Run `statement` with `{s}` standing for the quoted schema, in autocommit mode."""
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as connection:
        await connection.execute(sql.SQL(statement).format(s=sql.Identifier(schema)))  # type: ignore[arg-type]


async def refuse_writes_of(conninfo: str, schema: str, key: str) -> None:
    """Make Postgres itself refuse any insert or update of `key`: a real server error."""
    await execute(
        conninfo,
        "CREATE FUNCTION {s}.refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        f"IF new.key = '{key}' THEN RAISE EXCEPTION 'refused by test'; END IF; RETURN new; "
        "END $$",
        schema,
    )
    await execute(
        conninfo,
        "CREATE TRIGGER refuse BEFORE INSERT OR UPDATE ON {s}.entries "
        "FOR EACH ROW EXECUTE FUNCTION {s}.refuse()",
        schema,
    )


async def refuse_turn_deletes(conninfo: str, schema: str, *, when: str = "") -> None:
    """Make Postgres itself refuse deleting a turn record (`when`: a condition on `old`)."""
    await execute(
        conninfo,
        "CREATE FUNCTION {s}.keep() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "RAISE EXCEPTION 'refused by test'; END $$",
        schema,
    )
    condition = f"WHEN ({when}) " if when else ""
    await execute(
        conninfo,
        "CREATE TRIGGER keep_turns BEFORE DELETE ON {s}.turns "
        f"FOR EACH ROW {condition}EXECUTE FUNCTION {{s}}.keep()",
        schema,
    )


async def until_waiting_for_locks(conninfo: str, count: int = 1) -> None:
    """Return once `count` other connections of the server wait for a lock (polls, no sleep)."""
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as watcher:
        while True:
            cursor = await watcher.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            )
            row = await cursor.fetchone()
            if row is not None and row[0] >= count:
                return
