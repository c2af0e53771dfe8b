"""Remote MCP servers (`neuron_turn.HostedMCP`) through the Messages API's MCP connector.

The wire, as https://platform.claude.com/docs/en/agents-and-tools/mcp-connector
documents it (beta `mcp-client-2025-11-20`; not on Amazon Bedrock or Vertex AI):

- the body's `mcp_servers` lists each server, `{"type": "url", "url": ...,
  "name": <label>, "authorization_token": <token>}` (the token only when set);
- its `tools` list holds one `{"type": "mcp_toolset", "mcp_server_name": <label>}`
  per server, which enables all the server's tools; an allowlist is
  `"default_config": {"enabled": false}` with `"configs": {<tool>: {"enabled": true}}`;
- the answer holds `mcp_tool_use` blocks (`id`, `name`, `server_name`, `input`)
  and `mcp_tool_result` blocks (`tool_use_id`, `is_error`, `content`), kept
  whole as `RawPart`s (the API continues from them) and sent back as they came.

The token is a secret: `mcp_secrets` gives the request's tokens, which the
provider redacts wherever it redacts its API key (errors, logs, answers).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from pydantic import JsonValue

from neuron_turn.loop.hosted_tools import HostedMCP, HostedTool, HostedToolCall

__all__ = [
    "MCP_BETA",
    "mcp_call",
    "mcp_secrets",
    "mcp_servers_json",
    "mcp_toolset_json",
]

MCP_BETA: Final = "mcp-client-2025-11-20"
"""The `anthropic-beta` flag the MCP connector needs."""


def _servers(tools: Sequence[HostedTool]) -> list[HostedMCP]:
    return [tool for tool in tools if isinstance(tool, HostedMCP)]


def mcp_servers_json(tools: Sequence[HostedTool]) -> list[JsonValue]:
    """The body's `mcp_servers` entries for the `HostedMCP` servers among `tools`."""
    entries: list[JsonValue] = []
    for server in _servers(tools):
        entry: dict[str, JsonValue] = {"type": "url", "url": server.url, "name": server.label}
        if server.authorization is not None:
            entry["authorization_token"] = server.authorization
        entries.append(entry)
    return entries


def mcp_toolset_json(server: HostedMCP) -> dict[str, JsonValue]:
    """The `tools` entry for `server`: all its tools, or only its `allowed_tools`."""
    entry: dict[str, JsonValue] = {"type": "mcp_toolset", "mcp_server_name": server.label}
    if server.allowed_tools is not None:
        entry["default_config"] = {"enabled": False}
        if server.allowed_tools:
            entry["configs"] = {name: {"enabled": True} for name in server.allowed_tools}
    return entry


def mcp_secrets(tools: Sequence[HostedTool]) -> tuple[str, ...]:
    """The authorization tokens of the `HostedMCP` servers among `tools`: secrets to redact."""
    return tuple(server.authorization for server in _servers(tools) if server.authorization)


def mcp_call(block: dict[str, JsonValue]) -> HostedToolCall | None:
    """The call an `mcp_tool_use` block records, or None for a block of another type."""
    if block.get("type") != "mcp_tool_use":
        return None
    return HostedToolCall(
        "mcp",
        {
            "server": block.get("server_name"),
            "tool": block.get("name"),
            "arguments": block.get("input"),
        },
    )
