"""Errors of the SQLite state store.

    layer0.StateError
    └── StateFileError            the file cannot be used as it is; retrying will not help
        ├── NotAStateDatabaseError    corrupt, not SQLite, another program's, a directory
        ├── StateFileAccessError      this process may not read or write the file
        └── SchemaVersionError        the file was written by a newer neuron-state-sqlite

Everything else surfaces as the layer0 classes: `WriteFailed` for writes,
deletes and batches, `SerializationError` for values that are not JSON and
`StateError` for reads, with the sqlite3 error chained as the cause.
"""

from __future__ import annotations

from pathlib import Path

from layer0 import StateError

__all__ = [
    "NotAStateDatabaseError",
    "SchemaVersionError",
    "StateFileAccessError",
    "StateFileError",
]


class StateFileError(StateError):
    """The state file cannot be used as it is: the same call fails until the file changes.

    The message names the file, what is wrong with it and what to do; a
    caller should never advise a retry for it.
    """

    def __init__(self, path: Path, problem: str, remedy: str) -> None:
        super().__init__(f"state database {str(path)!r} {problem}; {remedy}")
        self.path = path
        self.problem = problem
        self.remedy = remedy


class NotAStateDatabaseError(StateFileError):
    """The path holds something other than a state database: corrupt, foreign or a directory."""


class StateFileAccessError(StateFileError):
    """This process may not open, read or write the file or its directory (e.g. read-only)."""


class SchemaVersionError(StateFileError):
    """The database file has a schema this version cannot read; upgrade the package."""

    def __init__(self, path: Path, *, found: int, supported: int) -> None:
        super().__init__(
            path,
            f"has schema version {found}, but this neuron-state-sqlite supports up to "
            f"version {supported}",
            "upgrade neuron-state-sqlite to open it",
        )
        self.found = found
        self.supported = supported
