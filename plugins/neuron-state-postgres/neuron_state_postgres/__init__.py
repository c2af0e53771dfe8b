"""neuron-state-postgres: a `layer0.StateStore` in a PostgreSQL database.

One store shared by processes on many machines (Temporal workers, several
`LocalOrchestrator` processes), with `SqliteStore`'s contract: atomic batches,
history appends once per turn, full-text search, turn records. Registered with
neuron-turn as the state store `"postgres"`.
"""

from ._conninfo import redact
from ._schema import SCHEMA_VERSION
from .errors import (
    AuthenticationError,
    ConnectFailedError,
    ConninfoError,
    NotAStateSchemaError,
    PostgresStoreError,
    ReadOnlyStoreError,
    SchemaAccessError,
    SchemaVersionError,
)
from .store import PostgresStore

__all__ = [
    "SCHEMA_VERSION",
    "AuthenticationError",
    "ConnectFailedError",
    "ConninfoError",
    "NotAStateSchemaError",
    "PostgresStore",
    "PostgresStoreError",
    "ReadOnlyStoreError",
    "SchemaAccessError",
    "SchemaVersionError",
    "redact",
]
