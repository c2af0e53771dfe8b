"""`mcp_tools`: the tools of several MCP servers for one run, e.g. from command-line flags."""

from __future__ import annotations

import shlex
from collections.abc import AsyncIterator, Iterable
from contextlib import AsyncExitStack, asynccontextmanager
from functools import partial

from ..errors import MCPBridgeError
from ._response_size import DEFAULT_MAX_RESPONSE_BYTES
from .client import DEFAULT_CONNECT_TIMEOUT, MCPClient
from .elicitation import ElicitationHandler
from .endpoint import HttpEndpoint, StdioCommand
from .sampling import SamplingHandler
from .tool import MCPTool


@asynccontextmanager
async def mcp_tools(
    *,
    commands: Iterable[str] = (),
    urls: Iterable[str | HttpEndpoint] = (),
    timeout: float = 60.0,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    elicitation: ElicitationHandler | None = None,
    sampling: SamplingHandler | None = None,
) -> AsyncIterator[list[MCPTool]]:
    """Connect to every server and yield all their tools; leaving stops every server.

    Args:
        commands: Command lines of stdio servers, split like a POSIX shell
            does (`"uvx mcp-server-time --local-timezone UTC"`).
        urls: Streamable HTTP endpoints: URLs, or `HttpEndpoint`s to send headers
            (such as the bearer token `serve_http` asks for).
        timeout: Seconds each request may take.
        connect_timeout: Seconds starting each server and its MCP handshake may take.
        max_response_bytes: The largest answer each server may send, in bytes.
        elicitation: Answers every server's questions in the middle of a tool call
            (`neuron_tool.mcp.elicitation`; `Elicitation.server` names which asks).
        sampling: Runs the client's model for every server that asks in the middle of
            a tool call (`neuron_tool.mcp.sampling`; `SamplingRequest.server` names which).

    Raises:
        ValueError: A command line is empty or badly quoted.
        MCPBridgeError: A server cannot be started or reached, or two servers
            offer tools of the same name.
    """
    limits = partial(
        MCPClient,
        timeout=timeout,
        connect_timeout=connect_timeout,
        max_response_bytes=max_response_bytes,
        elicitation=elicitation,
        sampling=sampling,
    )
    clients = [
        *(limits(StdioCommand(*_split(line))) for line in commands),
        *(limits(url if isinstance(url, HttpEndpoint) else HttpEndpoint(url)) for url in urls),
    ]
    async with AsyncExitStack() as stack:
        tools: dict[str, MCPTool] = {}
        for client in clients:
            await stack.enter_async_context(client)
            for tool in await client.list_tools():
                _add(tools, tool, server=client.name)
        yield list(tools.values())


def _split(line: str) -> tuple[str, tuple[str, ...]]:
    words = shlex.split(line)
    if not words:
        raise ValueError("an MCP server command line is empty")
    return words[0], tuple(words[1:])


def _add(tools: dict[str, MCPTool], tool: MCPTool, *, server: str) -> None:
    other = tools.get(tool.name)
    if other is not None:
        message = (
            f"MCP servers {other.server!r} and {server!r} both offer a tool named {tool.name!r};"
            " connect them with MCPClient(prefix=...) to tell them apart"
        )
        raise MCPBridgeError(message)
    tools[tool.name] = tool
