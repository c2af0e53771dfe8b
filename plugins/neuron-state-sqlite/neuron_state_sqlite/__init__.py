"""neuron-state-sqlite: a `layer0.StateStore` in one SQLite file.

WAL, one transaction per write, FTS5 search, and safe for many tasks and
several processes sharing the file. Registered with neuron-turn as the
state store `"sqlite"`.
"""

from .errors import (
    NotAStateDatabaseError,
    SchemaVersionError,
    StateFileAccessError,
    StateFileError,
)
from .paths import ENV_VAR, default_path
from .store import SqliteStore

__all__ = [
    "ENV_VAR",
    "NotAStateDatabaseError",
    "SchemaVersionError",
    "SqliteStore",
    "StateFileAccessError",
    "StateFileError",
    "default_path",
]
