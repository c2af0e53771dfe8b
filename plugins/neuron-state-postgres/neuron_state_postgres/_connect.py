"""Opening a store: the first connection, with each way it can fail named, then the pool.

Why a connection of its own before the pool: the pool retries failed
connections in the background and ends with a timeout that says nothing of
why; one connection made here fails at once with the server's reason, which
becomes an error of this store's (the password cut out of it).
"""

from __future__ import annotations

import math
import os
import re
from typing import Any, Final

import psycopg
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from layer0 import StateError

from . import _schema
from ._conninfo import Conninfo
from ._db import Connection
from .errors import (
    AuthenticationError,
    ConnectFailedError,
    ConninfoError,
    ReadOnlyStoreError,
    SchemaAccessError,
)

__all__ = ["Pool", "connection_options", "open_schema", "pool"]

Pool = AsyncConnectionPool[Connection]

_PASSWORD_HELP: Final = (
    "check the user and the password (given in the connection string, $PGPASSWORD or ~/.pgpass)"
)
# libpq's messages for an option it cannot take ("invalid sslmode value", "invalid
# integer value ... for connection option").
_INVALID_OPTION: Final = re.compile(r"invalid [\w ]*value|connection option|URI")
# libpq's messages for a refused login; the SQLSTATE is not set on a failed connection.
_AUTH_SIGNS: Final = (
    "password authentication failed",
    "no password supplied",
    "authentication failed",
    "pg_hba.conf",
    "role ",
)


def connection_options(
    connect_timeout: float, *, read_only: bool = False, conninfo: str = ""
) -> dict[str, Any]:
    """The options every connection is made with: autocommit, and the timeout to connect.

    `read_only`: the server itself refuses the connection's writes. The
    setting is added to the server options `conninfo` (else `$PGOPTIONS`)
    already gives, which libpq would otherwise drop for it (a `search_path`
    or `statement_timeout` the caller set).
    """
    # libpq takes whole seconds, and treats anything under 2 as 2.
    options: dict[str, Any] = {
        "autocommit": True,
        "connect_timeout": max(2, math.ceil(connect_timeout)),
    }
    if read_only:
        given = _server_options(conninfo)
        options["options"] = f"{given} -c default_transaction_read_only=on".lstrip()
    return options


def _server_options(conninfo: str) -> str:
    """The `options` of `conninfo`, else of `$PGOPTIONS`, as libpq would read them."""
    try:
        given = psycopg.conninfo.conninfo_to_dict(conninfo).get("options")
    except psycopg.ProgrammingError:
        given = None  # the connection itself reports the string that does not parse
    if given is None:
        given = os.environ.get("PGOPTIONS", "")
    return str(given).strip()


async def open_schema(
    conninfo: Conninfo, *, schema: str, connect_timeout: float, read_only: bool = False
) -> bool:
    """Connect once, then create or check the schema; raise this store's error for each fault.

    `read_only`: check only, creating nothing; returns whether the schema
    exists (a store that is not read-only always has it after this).

    Raises:
        ConninfoError: the connection string does not parse.
        AuthenticationError: the server refused the user or password.
        ConnectFailedError: the server could not be reached in time.
        SchemaAccessError: the user may not create or use the schema.
        NotAStateSchemaError, SchemaVersionError: the schema cannot be used.
        ReadOnlyStoreError: read-only, and the schema needs migrating by a writer first.
    """
    if conninfo.parse_error is not None:
        raise ConninfoError(
            conninfo.shown,
            f"the connection string does not parse ({conninfo.parse_error})",
            "write it as postgresql://USER@HOST:PORT/DATABASE or as libpq key=value pairs",
        )
    try:
        connection: Connection = await AsyncConnection.connect(
            conninfo.text,
            **connection_options(connect_timeout, read_only=read_only, conninfo=conninfo.text),
        )
    except psycopg.Error as exc:
        raise _connect_error(conninfo, exc, connect_timeout) from None
    async with connection:
        try:
            if read_only:
                return await _checked_only(connection, schema, conninfo.shown)
            await _schema.ensure(connection, schema, conninfo.shown)
            return True
        except psycopg.errors.InsufficientPrivilege as exc:
            raise SchemaAccessError(
                conninfo.shown,
                f"the user may not create or use schema {schema!r} ({conninfo.scrub(str(exc))})",
                "grant it CREATE on the database (or on the schema), or choose another schema",
            ) from None
        except psycopg.Error as exc:
            raise StateError(
                f"PostgreSQL state store {conninfo.shown}: creating or checking schema "
                f"{schema!r} failed: {conninfo.scrub(str(exc))}"
            ) from None


async def _checked_only(connection: Connection, schema: str, where: str) -> bool:
    found = await _schema.version(connection, schema, where)
    if 0 < found < _schema.SCHEMA_VERSION:
        raise ReadOnlyStoreError(
            where,
            f"schema {schema!r} is at version {found} and needs migrating to "
            f"{_schema.SCHEMA_VERSION}, which a read-only store does not do",
            "open it once without read_only=True (a user who may change it)",
        )
    return found > 0


def pool(
    conninfo: Conninfo,
    *,
    min_size: int,
    max_size: int,
    connect_timeout: float,
    timeout: float,
    read_only: bool = False,
) -> Pool:
    """A pool of connections as `open_schema` makes them, not yet opened."""
    return AsyncConnectionPool(
        conninfo.text,
        kwargs=connection_options(connect_timeout, read_only=read_only, conninfo=conninfo.text),
        min_size=min_size,
        max_size=max_size,
        timeout=timeout,
        name="neuron-state-postgres",
        open=False,
        # No check before handing a connection out: it would cost a round trip per
        # operation. An operation meeting a connection the server dropped (a
        # restart, a failover, an idle timeout) runs again on another instead
        # (`_db.ConnectionDropped`), and the pool replaces the dropped one.
    )


def _connect_error(conninfo: Conninfo, exc: psycopg.Error, connect_timeout: float) -> StateError:
    """This store's error for a failed first connection, with no secret in it."""
    message = " ".join(conninfo.scrub(str(exc)).split())  # libpq's lines, on one
    where = conninfo.shown
    if isinstance(exc, psycopg.ProgrammingError) or _INVALID_OPTION.search(message):
        return ConninfoError(
            where,
            f"the connection string is refused ({message})",
            "write it as postgresql://USER@HOST:PORT/DATABASE or as libpq key=value pairs",
        )
    if any(sign in message for sign in _AUTH_SIGNS):
        return AuthenticationError(
            where, f"the server refused the login ({message})", _PASSWORD_HELP
        )
    if "timeout expired" in message:
        return ConnectFailedError(
            where,
            f"the server did not answer within {connect_timeout:g}s ({message})",
            "check the host and port, and that the server is running and reachable",
        )
    return ConnectFailedError(
        where,
        f"cannot connect ({message})",
        "check the host, port and database, and that the server is running and reachable",
    )
