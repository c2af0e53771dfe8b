"""The database schema, its version and the migrations that bring a file up to it.

The version lives in `PRAGMA user_version` and the owner in `PRAGMA
application_id` (fields of the file header), so both are read without any
table existing, and change atomically with the migration that sets them.
`check` only reads: a file is judged before anything (WAL mode included) is
written to it, so a refused file is left byte for byte as it was.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Final

from .errors import NotAStateDatabaseError, SchemaVersionError

__all__ = ["APPLICATION_ID", "SCHEMA_VERSION", "check", "migrate", "shadow_missing"]

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

# `appended` holds list appends (a session's history grows this way): one
# row per append, in `id` order, each with the list's length after it, so an
# append costs a few index lookups however long the list is. The list under
# (scope, key) reads as the `entries` value (a JSON list; `[]` when the first
# append created it) followed by every appended row's items. A whole-value
# write or a delete of the key removes its rows. `append_id` makes an append
# idempotent. Files of version 1 need nothing moved: their lists are entries.
_V2: Final = """
CREATE TABLE appended (
    id INTEGER PRIMARY KEY,
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    append_id TEXT NOT NULL,
    items TEXT NOT NULL,
    length INTEGER NOT NULL,
    UNIQUE (scope, key, append_id)
);
CREATE INDEX appended_by_key ON appended (scope, key, id);
"""

# `turns` holds one record per turn (`layer0.TurnRecord`) as JSON, with the
# summary listings show beside it, so a listing never parses whole records.
# Files of older versions gain the empty table; nothing of theirs changes.
_V3: Final = """
CREATE TABLE turns (
    turn_id TEXT PRIMARY KEY,
    session TEXT,
    started TEXT NOT NULL,
    summary TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX turns_by_session ON turns (session, started);
CREATE INDEX turns_by_start ON turns (started);
"""

# Index i takes a file from version i to version i + 1.
_MIGRATIONS: Final = (_V1, _V2, _V3)

SCHEMA_VERSION: Final = len(_MIGRATIONS)
"""The schema version this package writes and reads."""

APPLICATION_ID: Final = 0x4E54524E
"""`PRAGMA application_id` of a state database ("NTRN"); files from before it have 0."""

_MOVE_ASIDE: Final = "move it aside or choose another file for the state"


def check(conn: sqlite3.Connection, path: Path) -> int:
    """Return the file's schema version (0 for a new file) if it is a state database we can use.

    Only reads the header and the schema, so it is safe on any file.

    Raises:
        SchemaVersionError: the file was written by a newer version.
        NotAStateDatabaseError: the file is some other application's database.
    """
    owner, found, has_objects, has_entries = _header(conn)
    if owner not in (0, APPLICATION_ID):
        raise NotAStateDatabaseError(
            path,
            "is not a neuron-turn state database (it belongs to another program: "
            f"SQLite application_id {owner:#x})",
            _MOVE_ASIDE,
        )
    if found > SCHEMA_VERSION:
        raise SchemaVersionError(path, found=found, supported=SCHEMA_VERSION)
    foreign = has_objects if found == 0 else owner == 0 and not has_entries
    if foreign:
        raise NotAStateDatabaseError(
            path,
            "is not a neuron-turn state database (an SQLite database of another program)",
            _MOVE_ASIDE,
        )
    return found


def migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Bring the database up to `SCHEMA_VERSION`, or refuse a file it cannot read.

    An up-to-date file costs two reads. Otherwise the check and the migrations
    run in one `BEGIN IMMEDIATE` transaction, so processes opening a new file
    at the same time create the schema exactly once.

    Raises:
        SchemaVersionError: the file was written by a newer version.
        NotAStateDatabaseError: the file is some other application's database.
    """
    if check(conn, path) == SCHEMA_VERSION and _owner(conn) == APPLICATION_ID:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        found = check(conn, path)
        for script in _MIGRATIONS[found:]:
            _run_script(conn, script)
        # PRAGMA takes no parameters; the values are our own integers.
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION:d}")
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID:d}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def shadow_missing(conn: sqlite3.Connection, found: int) -> None:
    """Create what the migrations after version `found` add, empty, in the TEMP schema.

    A read-only connection cannot migrate an older file; with these it reads
    it as this version would (same names, found in TEMP), writing nothing to it.
    """
    for script in _MIGRATIONS[found:]:
        for statement in _statements(script):
            conn.execute(_in_temp(statement))


def _in_temp(statement: str) -> str:
    """Return `statement` creating its object in the TEMP schema (indexes follow their table)."""
    for created, temporary in (
        ("CREATE TABLE ", "CREATE TEMP TABLE "),
        ("CREATE VIRTUAL TABLE ", "CREATE VIRTUAL TABLE temp."),
        ("CREATE TRIGGER ", "CREATE TEMP TRIGGER "),
    ):
        if statement.startswith(created):
            return temporary + statement.removeprefix(created)
    return statement


# One statement, so one snapshot: read one by one, a process opening a new file could
# see version 0 from before another's migration and its tables from after, and take
# the file for another program's.
_HEADER: Final = """
SELECT (SELECT application_id FROM pragma_application_id),
    (SELECT user_version FROM pragma_user_version),
    EXISTS (SELECT 1 FROM sqlite_master),
    EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'entries')
"""


def _header(conn: sqlite3.Connection) -> tuple[int, int, bool, bool]:
    """Return the owner, the schema version, whether any object and `entries` exist."""
    owner, version, has_objects, has_entries = conn.execute(_HEADER).fetchone()
    return int(owner), int(version), bool(has_objects), bool(has_entries)


def _owner(conn: sqlite3.Connection) -> int:
    """Return the file's application id (0 for a new file or one from before it was set)."""
    (owner,) = conn.execute("PRAGMA application_id").fetchone()
    return int(owner)


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
