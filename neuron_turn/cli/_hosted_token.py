"""`--hosted-tool '{"name": "mcp", ..., "authorization_env": "VAR"}'`: a remote MCP server's token.

A token is a secret: it is never written as JSON nor put on a command line,
where other users' `ps` would show it. The command line names the environment
variable that holds it instead, read when the option is parsed (a variable
not set is a usage error naming it, before any call), and the command it
prints to resume a paused run names the variable again, never the token.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass, fields
from typing import Final

from pydantic import JsonValue

from ..loop.hosted_tools import HostedMCP, HostedTool, hosted_tool_json

__all__ = ["ENV_KEY", "EnvTokenMCP", "hosted_tool_text", "with_env_token"]

ENV_KEY: Final = "authorization_env"
"""The `--hosted-tool` JSON field naming the environment variable that holds the token."""


@dataclass(frozen=True, slots=True)
class EnvTokenMCP(HostedMCP):
    """A `HostedMCP` whose token was read from the environment variable `authorization_env`."""

    authorization_env: str = ""


def with_env_token(tool: HostedTool, variable: JsonValue) -> EnvTokenMCP:
    """`tool` (a remote MCP server) with its token read from the environment variable `variable`.

    Raises:
        argparse.ArgumentTypeError: `tool` is no remote MCP server, `variable` is no
            variable's name, or it is not set (the message names it, never a value).
    """
    if not isinstance(tool, HostedMCP):
        raise argparse.ArgumentTypeError(
            f"{ENV_KEY} is for a remote MCP server's token (name mcp), not {tool.name}"
        )
    if not isinstance(variable, str) or not variable or "=" in variable:
        raise argparse.ArgumentTypeError(
            f"{ENV_KEY} is the name of an environment variable; got {variable!r}"
        )
    token = os.environ.get(variable, "")
    if not token.strip():
        raise argparse.ArgumentTypeError(
            f"{ENV_KEY}: the environment variable {variable} (the token of the MCP server "
            f"{tool.label!r}) is not set"
        )
    given = {field.name: getattr(tool, field.name) for field in fields(HostedMCP)}
    return EnvTokenMCP(**{**given, "authorization": token}, authorization_env=variable)


def hosted_tool_text(tool: HostedTool) -> str:
    """`tool` as the `--hosted-tool` text that grants it again: its name, or its JSON.

    A server whose token came from the environment names the variable again.
    """
    if isinstance(tool, EnvTokenMCP):
        plain = HostedMCP(tool.label, tool.url, tool.allowed_tools, None, tool.require_approval)
        data = {**hosted_tool_json(plain), ENV_KEY: tool.authorization_env}
    else:
        data = hosted_tool_json(tool)
    return str(data["name"]) if len(data) == 1 else json.dumps(data, ensure_ascii=False)
