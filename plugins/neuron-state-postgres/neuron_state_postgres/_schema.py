"""The tables of a store, their version, and the migrations that bring a schema up to it.

Everything lives in one Postgres schema (`neuron` unless the caller names
another), so several stores, or other programs, can share a database. The
version is the one row of `schema_version`. A schema is checked before
anything is written to it, and migrated in one transaction under an advisory
lock, so processes opening a new database at once create the tables once.
"""

from __future__ import annotations

from typing import Final, LiteralString

from psycopg import AsyncConnection, sql
from psycopg.rows import TupleRow

from .errors import NotAStateSchemaError, SchemaVersionError

__all__ = ["SCHEMA_VERSION", "ensure"]

# `entries` holds the values as JSON text; `body` is the plain text of their strings
# (for snippets) and `document` its words, stemmed, without stop words so that "and"
# is found as SqliteStore finds it. `appended` holds history appends: one row per
# append, with the list's length after it, so an append costs a few index lookups.
# `turns` holds one record per turn, with its summary beside it for listings.
# Text compared or sorted is COLLATE "C": code point order, as SqliteStore's BINARY.
_V1: Final[tuple[LiteralString, ...]] = (
    "CREATE TABLE {s}.schema_version (version integer NOT NULL)",
    "CREATE TEXT SEARCH DICTIONARY {s}.english_stem"
    " (TEMPLATE = pg_catalog.snowball, LANGUAGE = english)",
    'CREATE TEXT SEARCH CONFIGURATION {s}.words (PARSER = pg_catalog."default")',
    "ALTER TEXT SEARCH CONFIGURATION {s}.words ADD MAPPING FOR asciiword, word, numword"
    " WITH {s}.english_stem",
    "ALTER TEXT SEARCH CONFIGURATION {s}.words ADD MAPPING FOR int, uint WITH pg_catalog.simple",
    """CREATE TABLE {s}.entries (
        scope text COLLATE "C" NOT NULL,
        key text COLLATE "C" NOT NULL,
        value text NOT NULL,
        body text NOT NULL,
        document tsvector NOT NULL,
        PRIMARY KEY (scope, key)
    )""",
    "CREATE INDEX entries_by_document ON {s}.entries USING gin (document)",
    """CREATE TABLE {s}.appended (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        scope text COLLATE "C" NOT NULL,
        key text COLLATE "C" NOT NULL,
        append_id text COLLATE "C" NOT NULL,
        items text NOT NULL,
        length bigint NOT NULL,
        UNIQUE (scope, key, append_id)
    )""",
    "CREATE INDEX appended_by_key ON {s}.appended (scope, key, id)",
    """CREATE TABLE {s}.turns (
        turn_id text COLLATE "C" PRIMARY KEY,
        session text COLLATE "C",
        started text COLLATE "C" NOT NULL,
        summary text NOT NULL,
        record text NOT NULL
    )""",
    "CREATE INDEX turns_by_session ON {s}.turns (session, started)",
    "CREATE INDEX turns_by_start ON {s}.turns (started)",
)

# Index i takes a schema from version i to version i + 1.
_MIGRATIONS: Final = (_V1,)

SCHEMA_VERSION: Final = len(_MIGRATIONS)
"""The schema version this package writes and reads."""

_VERSION: Final = "SELECT max(version) FROM {s}.schema_version"
_STATE: Final = """
SELECT to_regclass(%(table)s) IS NOT NULL,
    EXISTS (SELECT 1 FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
            WHERE n.nspname = %(schema)s)
"""
_LOCK: Final = "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))"


async def ensure(connection: AsyncConnection[TupleRow], schema: str, where: str) -> None:
    """Create or migrate `schema` up to `SCHEMA_VERSION`, or refuse one this version cannot use.

    An up-to-date schema costs one query. `connection` is in autocommit mode.

    Raises:
        SchemaVersionError: the schema was written by a newer version.
        NotAStateSchemaError: the schema holds another program's tables.
        psycopg.Error: the server refused (no privilege, say); the caller names it.
    """
    if await _found(connection, schema, where) == SCHEMA_VERSION:
        return
    async with connection.transaction():
        # Not the server's default: at REPEATABLE READ the check after the lock
        # would read from a snapshot taken before the wait, miss the schema another
        # process made meanwhile, and create it again (which fails).
        await connection.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
        await connection.execute(_LOCK, (f"neuron-state-postgres:{schema}",))
        found = await _found(connection, schema, where)
        if found == SCHEMA_VERSION:
            return
        await connection.execute(_compose("CREATE SCHEMA IF NOT EXISTS {s}", schema))
        for script in _MIGRATIONS[found:]:
            for statement in script:
                await connection.execute(_compose(statement, schema))
        await connection.execute(_compose("DELETE FROM {s}.schema_version", schema))
        insert = _compose("INSERT INTO {s}.schema_version (version) VALUES (%s)", schema)
        await connection.execute(insert, (SCHEMA_VERSION,))


async def version(connection: AsyncConnection[TupleRow], schema: str, where: str) -> int:
    """The version of `schema` (0: it does not exist), checked as `ensure` checks it; no change.

    Raises:
        SchemaVersionError: the schema was written by a newer version.
        NotAStateSchemaError: the schema holds another program's tables.
    """
    return await _found(connection, schema, where)


async def _found(connection: AsyncConnection[TupleRow], schema: str, where: str) -> int:
    """The schema's version: 0 when it does not exist or is empty.

    Raises:
        SchemaVersionError: it is newer than this package.
        NotAStateSchemaError: it holds relations but no version table.
    """
    table = sql.Identifier(schema, "schema_version").as_string(connection)
    cursor = await connection.execute(_STATE, {"table": table, "schema": schema})
    row = await cursor.fetchone()
    assert row is not None
    has_version, has_relations = bool(row[0]), bool(row[1])
    if not has_version:
        if has_relations:
            raise NotAStateSchemaError(
                where,
                f"schema {schema!r} holds tables but no neuron-state-postgres version table "
                "(it belongs to another program)",
                "choose another schema with schema=, or empty that one",
            )
        return 0
    cursor = await connection.execute(_compose(_VERSION, schema))
    row = await cursor.fetchone()
    found = 0 if row is None or row[0] is None else int(str(row[0]))
    if found > SCHEMA_VERSION:
        raise SchemaVersionError(where, schema=schema, found=found, supported=SCHEMA_VERSION)
    return found


def _compose(statement: LiteralString, schema: str) -> sql.Composed:
    return sql.SQL(statement).format(s=sql.Identifier(schema))
