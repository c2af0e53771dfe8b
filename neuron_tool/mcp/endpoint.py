"""Where an MCP server is: a command to start over stdio, or a Streamable HTTP endpoint."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, TypeAlias
from urllib.parse import urlsplit, urlunsplit

# Commands that run the server named by their arguments.
_LAUNCHERS: Final = ("python", "node", "npx", "uvx", "bun", "deno", "pipx")


@dataclass(frozen=True, slots=True)
class StdioCommand:
    """A command that starts an MCP server speaking MCP on its stdin and stdout.

    The child gets a minimal safe environment (`PATH`, `HOME`, ...) with `env`
    on top, not the whole environment of this process, as the MCP SDK does.
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

    def describe(self) -> str:
        """The command line, shell-quoted, for messages."""
        return shlex.join((self.command, *self.args))


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
