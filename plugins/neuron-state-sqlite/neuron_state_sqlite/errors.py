"""Errors of the SQLite state store.

    layer0.StateError
    └── SchemaVersionError   the file was written by a newer neuron-state-sqlite

Everything else surfaces as the layer0 classes: `WriteFailed` for writes,
deletes and batches, `SerializationError` for values that are not JSON and
`StateError` for reads, with the sqlite3 error chained as the cause.
"""

from __future__ import annotations

from pathlib import Path

from layer0 import StateError

__all__ = ["SchemaVersionError"]


class SchemaVersionError(StateError):
    """The database file has a schema this version cannot read; upgrade the package."""

    def __init__(self, path: Path, *, found: int, supported: int) -> None:
        super().__init__(
            f"state database {str(path)!r} has schema version {found}, but this "
            f"neuron-state-sqlite supports up to version {supported}; upgrade "
            "neuron-state-sqlite to open it"
        )
        self.path = path
        self.found = found
        self.supported = supported
