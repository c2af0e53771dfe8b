"""Several MCP servers at once, e.g. from command-line flags.

`mcp_servers` yields their clients, tool sources a turn lists at the start of
each run; `mcp_tools` yields the tools they offered when they connected.
"""

from __future__ import annotations

import shlex
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import AsyncExitStack, asynccontextmanager
from functools import partial

from ..errors import MCPBridgeError
from ._response_size import DEFAULT_MAX_RESPONSE_BYTES
from .client import DEFAULT_CONNECT_TIMEOUT, MCPClient
from .elicitation import ElicitationHandler
from .endpoint import Endpoint, HttpEndpoint, StdioCommand
from .sampling import SamplingHandler
from .tool import MCPTool


@asynccontextmanager
async def mcp_servers(
    *,
    commands: Iterable[str] = (),
    urls: Iterable[str | HttpEndpoint] = (),
    timeout: float = 60.0,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    elicitation: ElicitationHandler | None = None,
    sampling: SamplingHandler | None = None,
) -> AsyncIterator[list[MCPClient]]:
    """Connect to every server and yield their clients, as tool sources; leaving stops them.

    Why, beside `mcp_tools`: a client among a turn's tools (`NeuronTurn(tools=[*clients])`)
    is a tool source, listed at the start of each run, so a tool a server adds
    while the turn is kept (a chat, a worker) is offered from the next run on.
    Two servers offering tools of the same name are refused here, on their
    listings at connect; a clash that comes later (a server adding a tool another
    has) fails the run that sees it, naming the server (`ToolSourceError`).

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
    client = partial(
        MCPClient,
        timeout=timeout,
        connect_timeout=connect_timeout,
        max_response_bytes=max_response_bytes,
        elicitation=elicitation,
        sampling=sampling,
    )
    clients = _clients(commands, urls, client)
    async with _connected(clients):
        yield clients


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
    """Connect to every server and yield all their tools, listed once; leaving stops every server.

    The tools are those the servers offered on connecting; for tools that follow
    the servers' changes from run to run, use `mcp_servers`. The arguments are
    as for `mcp_servers`.

    Raises:
        ValueError: A command line is empty or badly quoted.
        MCPBridgeError: A server cannot be started or reached, or two servers
            offer tools of the same name.
    """
    client = partial(
        MCPClient,
        timeout=timeout,
        connect_timeout=connect_timeout,
        max_response_bytes=max_response_bytes,
        elicitation=elicitation,
        sampling=sampling,
    )
    clients = _clients(commands, urls, client)
    async with _connected(clients) as tools:
        yield tools


def _clients(
    commands: Iterable[str],
    urls: Iterable[str | HttpEndpoint],
    client: Callable[[Endpoint], MCPClient],
) -> list[MCPClient]:
    """A client (made by `client`) for each command line, then each URL."""
    return [
        *(client(StdioCommand(*_split(line))) for line in commands),
        *(client(url if isinstance(url, HttpEndpoint) else HttpEndpoint(url)) for url in urls),
    ]


@asynccontextmanager
async def _connected(clients: Iterable[MCPClient]) -> AsyncIterator[list[MCPTool]]:
    """Connect every client, and yield their tools, refusing a name two of them offer."""
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
