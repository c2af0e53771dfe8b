"""The database schema, its version and the migrations that bring a file up to it.

The version lives in `PRAGMA user_version` (a field of the file header), so it
is read without any table existing and changes atomically with the migration
that sets it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Final

from layer0 import StateError

from .errors import SchemaVersionError

__all__ = ["SCHEMA_VERSION", "migrate"]

# `entries` holds the values; `body` is the plain text of a value's strings,
# which `entries_fts` indexes as an external-content FTS5 table (so the text
# is stored once). Triggers keep the index in step with every change, in the
# same transaction, whoever writes.
_V1: Final = """
CREATE TABLE entries (
    id INTEGER PRIMARY KEY,
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    body TEXT NOT NULL,
    UNIQUE (scope, key)
);
CREATE VIRTUAL TABLE entries_fts USING fts5(
    key, body,
    content = 'entries', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER entries_ai AFTER INSERT ON entries BEGIN
    INSERT INTO entries_fts (rowid, key, body) VALUES (new.id, new.key, new.body);
END;
CREATE TRIGGER entries_ad AFTER DELETE ON entries BEGIN
    INSERT INTO entries_fts (entries_fts, rowid, key, body)
        VALUES ('delete', old.id, old.key, old.body);
END;
CREATE TRIGGER entries_au AFTER UPDATE ON entries
    WHEN old.body IS NOT new.body OR old.key IS NOT new.key
BEGIN
    INSERT INTO entries_fts (entries_fts, rowid, key, body)
        VALUES ('delete', old.id, old.key, old.body);
    INSERT INTO entries_fts (rowid, key, body) VALUES (new.id, new.key, new.body);
END;
"""

# Index i takes a file from version i to version i + 1.
_MIGRATIONS: Final = (_V1,)

SCHEMA_VERSION: Final = len(_MIGRATIONS)
"""The schema version this package writes and reads."""


def migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Bring the database up to `SCHEMA_VERSION`, or refuse a file it cannot read.

    An up-to-date file costs one read. Otherwise the check and the migrations
    run in one `BEGIN IMMEDIATE` transaction, so processes opening a new file
    at the same time create the schema exactly once.

    Raises:
        SchemaVersionError: the file was written by a newer version.
        StateError: the file is some other application's database.
    """
    if _checked_version(conn, path) == SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        found = _checked_version(conn, path)
        for script in _MIGRATIONS[found:]:
            _run_script(conn, script)
        # PRAGMA takes no parameters; the value is our own integer.
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION:d}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _checked_version(conn: sqlite3.Connection, path: Path) -> int:
    """Return the file's schema version (0 for a new file) if this package can use it."""
    found = _version(conn)
    if found > SCHEMA_VERSION:
        raise SchemaVersionError(path, found=found, supported=SCHEMA_VERSION)
    if found == 0 and _has_objects(conn):
        raise StateError(
            f"{str(path)!r} is an SQLite database but not a neuron-turn state database"
        )
    return found


def _version(conn: sqlite3.Connection) -> int:
    """Return the file's schema version (0 for a new file)."""
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    return int(version)


def _has_objects(conn: sqlite3.Connection) -> bool:
    """Return whether the file already holds tables, indexes or views."""
    return conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is not None


def _run_script(conn: sqlite3.Connection, script: str) -> None:
    """Run each statement of `script` inside the open transaction.

    `executescript` would COMMIT first, breaking the one-transaction rule.
    """
    for statement in _statements(script):
        conn.execute(statement)


def _statements(script: str) -> list[str]:
    """Split `script` into complete statements (trigger bodies hold semicolons)."""
    statements: list[str] = []
    current = ""
    for line in script.splitlines(keepends=True):
        current += line
        if sqlite3.complete_statement(current):
            statements.append(current.strip())
            current = ""
    return statements
