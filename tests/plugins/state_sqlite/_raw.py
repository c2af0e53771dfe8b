"""Direct sqlite3 access to a store's file, to check or sabotage it behind its back."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path


@contextmanager
def raw(path: Path) -> Iterator[sqlite3.Connection]:
    """A plain sqlite3 connection to `path`, in autocommit mode, closed afterwards."""
    with closing(sqlite3.connect(path, isolation_level=None)) as connection:
        yield connection


def integrity(path: Path) -> str:
    with raw(path) as connection:
        (result,) = connection.execute("PRAGMA integrity_check").fetchone()
    return str(result)


def refuse_writes_of(path: Path, key: str) -> None:
    """Make SQLite itself refuse any insert or update of `key`: a real engine error."""
    with raw(path) as connection:
        for event in ("INSERT", "UPDATE"):
            connection.execute(
                f"CREATE TRIGGER refuse_{event.lower()} BEFORE {event} ON entries "
                f"WHEN new.key = '{key}' BEGIN SELECT RAISE(ABORT, 'refused by test'); END"
            )
