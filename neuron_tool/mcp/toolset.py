"""`mcp_tools`: the tools of several MCP servers for one run, e.g. from command-line flags."""

from __future__ import annotations

import shlex
from collections.abc import AsyncIterator, Iterable
from contextlib import AsyncExitStack, asynccontextmanager

from ..errors import MCPBridgeError
from .client import MCPClient
from .tool import MCPTool


@asynccontextmanager
async def mcp_tools(
    *,
    commands: Iterable[str] = (),
    urls: Iterable[str] = (),
    timeout: float = 60.0,
    connect_timeout: float = 30.0,
) -> AsyncIterator[list[MCPTool]]:
    """Connect to every server and yield all their tools; leaving stops every server.

    Args:
        commands: Command lines of stdio servers, split like a POSIX shell
            does (`"uvx mcp-server-time --local-timezone UTC"`).
        urls: Streamable HTTP endpoints.
        timeout: Seconds each request may take.
        connect_timeout: Seconds starting each server may take.

    Raises:
        ValueError: A command line is empty or badly quoted.
        MCPBridgeError: A server cannot be started or reached, or two servers
            offer tools of the same name.
    """
    clients = [
        *(
            MCPClient.stdio(*_split(line), timeout=timeout, connect_timeout=connect_timeout)
            for line in commands
        ),
        *(MCPClient.http(url, timeout=timeout, connect_timeout=connect_timeout) for url in urls),
    ]
    async with AsyncExitStack() as stack:
        tools: dict[str, MCPTool] = {}
        for client in clients:
            await stack.enter_async_context(client)
            for tool in await client.list_tools():
                _add(tools, tool, server=client.name)
        yield list(tools.values())


def _split(line: str) -> tuple[str, list[str]]:
    words = shlex.split(line)
    if not words:
        raise ValueError("an MCP server command line is empty")
    return words[0], words[1:]


def _add(tools: dict[str, MCPTool], tool: MCPTool, *, server: str) -> None:
    other = tools.get(tool.name)
    if other is not None:
        message = (
            f"MCP servers {other.server!r} and {server!r} both offer a tool named {tool.name!r};"
            " connect them with MCPClient(prefix=...) to tell them apart"
        )
        raise MCPBridgeError(message)
    tools[tool.name] = tool
