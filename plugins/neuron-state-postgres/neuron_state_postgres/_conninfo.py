"""The connection string: parsed once, shown without its password, its password cut from text.

libpq and psycopg quote the connection string in some of their messages (a
malformed one, for instance), and the password may be in it; every message
this store builds from theirs goes through `Conninfo.scrub` first.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import quote, unquote

from psycopg import ProgrammingError
from psycopg.conninfo import conninfo_to_dict

__all__ = ["Conninfo", "is_url", "redact"]

_URL_SCHEMES: Final = ("postgresql://", "postgres://")
_HIDDEN: Final = "***"
# What a password looks like in a string even libpq cannot parse.
_URL_PASSWORD: Final = re.compile(r"^[a-z]+://[^:/@?#]*:(?P<secret>[^@/?#]*)@", re.IGNORECASE)
_KEYWORD_PASSWORD: Final = re.compile(
    r"\bpassword\s*=\s*(?P<secret>'(?:[^'\\]|\\.)*'?|[^\s]+)", re.IGNORECASE
)


def is_url(text: str) -> bool:
    """Whether `text` is a `postgresql://` or `postgres://` URL."""
    return text.lower().startswith(_URL_SCHEMES)


def redact(text: str) -> str:
    """Return `text` with every password in it, as URL or as `password=`, replaced by `***`."""
    text = _URL_PASSWORD.sub(lambda m: m[0].replace(f":{m['secret']}@", f":{_HIDDEN}@"), text)
    return _KEYWORD_PASSWORD.sub(f"password={_HIDDEN}", text)


@dataclass(frozen=True)
class Conninfo:
    """A connection string with what may be shown of it and the secrets it must never show."""

    text: str = field(repr=False)
    shown: str
    """Where it connects (user, host, port, database), with no password."""
    secrets: tuple[str, ...] = field(repr=False)
    parse_error: str | None = None
    """Why libpq cannot parse it (already scrubbed), or None."""

    @classmethod
    def parse(cls, text: str) -> Conninfo:
        """Read `text`; a string libpq refuses is kept, with why, for the first connection."""
        secrets = _secrets_in(text)
        try:
            params = conninfo_to_dict(text)
        except ProgrammingError as exc:
            problem = " ".join(_scrub(str(exc), secrets).split())
            return cls(text, redact(text), secrets, problem)
        password = params.get("password")
        if password is not None:
            secrets = _with(secrets, str(password))
        return cls(text, _shown(params), secrets)

    def scrub(self, message: str) -> str:
        """Return `message` with every secret of this string (and `$PGPASSWORD`) cut out."""
        # $PGPASSWORD is read again: libpq reads it at each connection, not at parse time.
        return _scrub(message, _with(self.secrets, os.environ.get("PGPASSWORD", "")))


def _shown(params: Mapping[str, object]) -> str:
    """`user@host:port/dbname`, each part only when the string names it."""
    user = f"{params['user']}@" if params.get("user") else ""
    host = str(params.get("host") or params.get("hostaddr") or "the default host")
    port = f":{params['port']}" if params.get("port") else ""
    database = f"/{params['dbname']}" if params.get("dbname") else ""
    return f"{user}{host}{port}{database}"


def _secrets_in(text: str) -> tuple[str, ...]:
    """Every string that may be a password: in `text` by its shape, and `$PGPASSWORD`."""
    found: tuple[str, ...] = ()
    for match in (*_URL_PASSWORD.finditer(text), *_KEYWORD_PASSWORD.finditer(text)):
        found = _with(found, match["secret"].strip("'"))
    return _with(found, os.environ.get("PGPASSWORD", ""))


def _with(secrets: tuple[str, ...], secret: str) -> tuple[str, ...]:
    """`secrets` with `secret` and its URL-encoded and decoded forms (none empty)."""
    forms = {secret, unquote(secret), quote(secret, safe="")}
    return tuple(sorted({*secrets, *(form for form in forms if form)}, key=len, reverse=True))


def _scrub(message: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        message = message.replace(secret, _HIDDEN)
    return redact(message)
