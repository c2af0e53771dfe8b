"""Where an MCP server is: a command to start over stdio, or a Streamable HTTP endpoint."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, TypeAlias
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

# Commands that run the server named by their arguments.
_LAUNCHERS: Final = ("python", "node", "npx", "uvx", "bun", "deno", "pipx")
# Names of options and settings whose values are taken for secrets in messages.
_SECRET_NAME: Final = re.compile(r"token|key|secret|passw|auth|credential|bearer", re.IGNORECASE)
_HIDDEN: Final = "***"


@dataclass(frozen=True, slots=True, repr=False)
class StdioCommand:
    """A command that starts an MCP server speaking MCP on its stdin and stdout.

    The child gets a minimal safe environment (`PATH`, `HOME`, ...) with `env`
    on top, not the whole environment of this process, as the MCP SDK does. Its
    `repr` and messages show the command line as `describe` does.
    """

    command: str
    """The executable, found on `PATH` if it has no directory part."""
    args: tuple[str, ...] = ()
    """Its arguments."""
    env: Mapping[str, str] | None = field(default=None, repr=False)
    """Extra environment variables; kept out of `repr` as they often hold secrets."""
    cwd: str | Path | None = None
    """The working directory of the server, or this process's if `None`."""

    @property
    def default_name(self) -> str:
        """The name used in messages when none is given.

        That is the executable's file name, or for a launcher such as `python`
        or `npx`, the module after `-m` or the first argument that is not an option.
        """
        executable = Path(self.command).name
        if not executable.startswith(_LAUNCHERS):
            return executable
        args = self.args
        if "-m" in args[:-1]:
            return args[args.index("-m") + 1]
        first = next((arg for arg in args if not arg.startswith("-")), None)
        return Path(first).name if first else executable

    def __repr__(self) -> str:
        return f"StdioCommand({self.describe()!r})"

    def describe(self) -> str:
        """The command line, shell-quoted, for messages; what looks like a secret as `***`.

        Why: errors name the server, and a model and traces read them, so a token
        given as an argument (`--api-key sk-...`, `--token=...`, `API_KEY=...`, a URL
        with a password or a `?token=`) must not go with them; `env` is the place
        for secrets, and is never shown.
        """
        return shlex.join((self.command, *_shown(self.args)))


@dataclass(frozen=True, slots=True, repr=False)
class HttpEndpoint:
    """The URL of an MCP server speaking Streamable HTTP, and headers to send it.

    Its `repr` and messages show the URL as `describe` does, and never the headers.
    """

    url: str
    """The MCP endpoint, e.g. `http://127.0.0.1:8000/mcp`."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Headers for every request, e.g. `Authorization`."""

    def __repr__(self) -> str:
        return f"HttpEndpoint({self.describe()!r})"

    @property
    def default_name(self) -> str:
        """The name used in messages when none is given: the URL as `describe` shows it."""
        return self.describe()

    def describe(self) -> str:
        """The URL without credentials, query or fragment, for messages; headers are never shown."""
        parts = urlsplit(self.url)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        netloc = f"{host}:{parts.port}" if parts.port is not None else host
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


Endpoint: TypeAlias = StdioCommand | HttpEndpoint
"""Where an MCP server is."""


def _shown(args: Sequence[str]) -> list[str]:
    """`args` as messages show them: the values of secret-named options and settings hidden."""
    shown: list[str] = []
    hide_next = False
    for arg in args:
        if hide_next:
            shown.append(_HIDDEN)
            hide_next = False
            continue
        name, equals, value = arg.partition("=")
        if "://" in name:
            shown.append(_url_shown(arg))
        elif equals and _SECRET_NAME.search(name):
            shown.append(f"{name}={_HIDDEN}")
        elif equals and "://" in value:
            shown.append(f"{name}={_url_shown(value)}")
        elif arg.startswith("-") and _SECRET_NAME.search(arg):
            shown.append(arg)
            hide_next = True  # `--token VALUE`: the next argument is the value
        else:
            shown.append(arg)
    return shown


def _url_shown(arg: str) -> str:
    """URL `arg` with its user, password and secret-named query values hidden."""
    try:
        parts = urlsplit(arg)
        port = parts.port
    except ValueError:
        return arg
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    if parts.password is not None or parts.username is not None:
        host = f"{_HIDDEN}@{host}"
    netloc = host if port is None else f"{host}:{port}"
    query = urlencode(
        [
            (key, _HIDDEN if _SECRET_NAME.search(key) else value)
            for key, value in parse_qsl(parts.query, keep_blank_values=True)
        ],
        safe="*",
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
