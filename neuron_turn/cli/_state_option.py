"""Where the commands keep state: the `--state PATH|URL` option, and opening that store.

A path is the SQLite state file (plugin `state-sqlite`); a `postgresql://` or
`postgres://` URL is a PostgreSQL database (plugin `state-postgres`). With no
`--state`, `$NEURON_STATE_URL` names the database, else the SQLite file is
`$NEURON_STATE_PATH` or the user data directory's.
"""

from __future__ import annotations

import argparse
import os
import re
from typing import Any, Final

from ..plugins import PluginManager, get_plugin_manager
from ..plugins.errors import UnknownStateStoreError
from ._errors import UsageError

__all__ = [
    "STATE_URL_VAR",
    "PostgresPluginMissingError",
    "add_state_argument",
    "is_postgres_url",
    "open_state_store",
    "shown_state",
]

STATE_URL_VAR: Final = "NEURON_STATE_URL"
"""The environment variable naming the PostgreSQL state database when `--state` is not given."""

_URL_SCHEMES: Final = ("postgresql://", "postgres://")
# The password of a URL (`scheme://user:PASSWORD@`), and of a `password=` parameter.
_URL_PASSWORD: Final = re.compile(r"^(?P<head>[a-z]+://[^:/@?#]*:)[^@/?#]*@", re.IGNORECASE)
_QUERY_PASSWORD: Final = re.compile(r"(?P<head>[?&]password=)[^&#]*", re.IGNORECASE)


class PostgresPluginMissingError(UnknownStateStoreError):
    """`--state` names a PostgreSQL database but neuron-state-postgres is not installed."""

    def _message(self) -> str:
        return (
            f"the state is a PostgreSQL database ({self.name}), but no plugin registered the "
            "state store 'postgres': install neuron-state-postgres "
            "(pip install -e plugins/neuron-state-postgres), or give --state a file path"
        )


def add_state_argument(parser: argparse.ArgumentParser) -> None:
    """Add `--state PATH|URL`, the SQLite state file or a PostgreSQL URL, to `parser`."""
    parser.add_argument(
        "--state",
        metavar="PATH|URL",
        help="the SQLite state file, or a postgresql:// URL of a PostgreSQL database "
        "(plugin neuron-state-postgres) (default: $NEURON_STATE_URL, else "
        "$NEURON_STATE_PATH, else the user data directory)",
    )


def is_postgres_url(state: str) -> bool:
    """Whether `state` names a PostgreSQL database rather than a file."""
    return state.lower().startswith(_URL_SCHEMES)


def shown_state(state: str | None) -> str:
    """`state` as it may be printed: a URL (of any scheme) without its password, a path as is."""
    if state is None:
        state = os.environ.get(STATE_URL_VAR) or None
    if state is None or "://" not in state:
        return state or ""
    hidden = _URL_PASSWORD.sub(r"\g<head>***@", state)
    return _QUERY_PASSWORD.sub(r"\g<head>***", hidden)


def open_state_store(
    path: str | None, *, read_only: bool = False, manager: PluginManager | None = None
) -> Any:
    """Open the state `--state` names (None: `$NEURON_STATE_URL`, else the default file).

    `read_only`: the state is neither written nor created (a file, a database
    schema), so read access is enough.
    Typed by the caller: a `StateStore`, or a `StateReader` when read-only.

    Raises:
        PostgresPluginMissingError: a URL was given but neuron-state-postgres is missing.
        UsageError: `$NEURON_STATE_URL` is set to something other than a PostgreSQL URL.
    """
    manager = manager or get_plugin_manager()
    url = path if path is not None else _url_from_environment()
    options: dict[str, Any] = {"read_only": True} if read_only else {}
    if url is not None and is_postgres_url(url):
        try:
            return manager.get_state_store("postgres", conninfo=url, **options)
        except UnknownStateStoreError as exc:
            missing = PostgresPluginMissingError(
                shown_state(url), available=exc.available, failures=exc.failures
            )
            raise missing from None
    if path is not None:
        options["path"] = path
    return manager.get_state_store("sqlite", **options)


def _url_from_environment() -> str | None:
    url = os.environ.get(STATE_URL_VAR) or None
    if url is not None and not is_postgres_url(url):
        raise UsageError(
            f"${STATE_URL_VAR} must be a postgresql:// or postgres:// URL, not "
            f"{shown_state(url)!r}; unset it to use the SQLite file ($NEURON_STATE_PATH)"
        )
    return url
