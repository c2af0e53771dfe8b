"""Errors of the PostgreSQL state store.

    layer0.StateError
    └── PostgresStoreError          the store cannot be used as it is configured
        ├── ConninfoError               the connection string does not parse
        ├── ConnectFailedError          the server cannot be reached (or timed out)
        │   └── AuthenticationError     the server refused the user or password
        ├── SchemaAccessError           the user may not create or use the schema
        ├── NotAStateSchemaError        the schema holds another program's tables
        └── SchemaVersionError          the schema was written by a newer neuron-state-postgres

Everything else surfaces as the layer0 classes, as `SqliteStore` raises them:
`WriteFailed` (and `HistoryConflict`) for writes, deletes and batches,
`SerializationError` for values that are not JSON, `StateError` for reads.

No message names the password: the connection string is shown without it, and
the password (from the string or `$PGPASSWORD`) is cut out of any message of
the driver's that is quoted.
"""

from __future__ import annotations

from layer0 import StateError

__all__ = [
    "AuthenticationError",
    "ConnectFailedError",
    "ConninfoError",
    "NotAStateSchemaError",
    "PostgresStoreError",
    "SchemaAccessError",
    "SchemaVersionError",
]


class PostgresStoreError(StateError):
    """The store cannot be used as configured: the same call fails until that changes.

    The message names the server (never the password), what is wrong and what to do.
    """

    def __init__(self, where: str, problem: str, remedy: str) -> None:
        super().__init__(f"PostgreSQL state store {where}: {problem}; {remedy}")
        self.where = where
        self.problem = problem
        self.remedy = remedy


class ConninfoError(PostgresStoreError):
    """The connection string is not a libpq connection string or URL."""


class ConnectFailedError(PostgresStoreError):
    """No connection could be made: the host is unknown, unreachable, or did not answer in time."""


class AuthenticationError(ConnectFailedError):
    """The server refused the user: a wrong or missing password, or no entry in pg_hba.conf."""


class SchemaAccessError(PostgresStoreError):
    """The user may not create the schema or its tables, or may not read or write them."""


class NotAStateSchemaError(PostgresStoreError):
    """The schema holds tables but no neuron-state-postgres version table: another program's."""


class ReadOnlyStoreError(PostgresStoreError):
    """A store opened with `read_only=True` was asked to write, or to migrate its schema."""


class SchemaVersionError(PostgresStoreError):
    """The schema was written by a newer neuron-state-postgres; upgrade the package to use it."""

    def __init__(self, where: str, *, schema: str, found: int, supported: int) -> None:
        super().__init__(
            where,
            f"schema {schema!r} has version {found}, but this neuron-state-postgres supports "
            f"up to version {supported}",
            "upgrade neuron-state-postgres to use it, or choose another schema",
        )
        self.schema = schema
        self.found = found
        self.supported = supported
