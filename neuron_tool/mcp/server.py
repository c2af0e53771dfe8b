"""Serve a `ToolRegistry` to any MCP client, over stdio or Streamable HTTP."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Final

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS
from mcp_types.version import MODERN_PROTOCOL_VERSIONS, is_version_at_least

from .._tool_changes import tool_changes_of
from ..context import RunContext
from ..errors import ToolError, ToolSourceError
from ..registry import ToolRegistry, _per_step
from ..retry import ModelRetry
from ..serving import serve_asgi, server_token
from ._convert import advertised_output_schema, error_result, success_result, to_mcp_tool
from ._describe import describe
from ._http_guard import BearerAuth, security_settings
from ._tool_list_notices import ToolListNotices

logger = logging.getLogger(__name__)

_DEFAULT_NAME: Final = "neuron-tool"
# Open HTTP connections get this long to finish when the server stops.
# The first protocol version with resource links, which carry files given by URL.
_RESOURCE_LINKS_SINCE: Final = "2025-06-18"


def mcp_server(
    registry: ToolRegistry, *, name: str = _DEFAULT_NAME, deps: object = None
) -> Server[Any]:
    """An MCP server (the SDK's low-level `Server`) that lists and calls `registry`'s tools.

    Calls go through the registry, so its input validation and middleware
    apply. A `ToolReturn`'s files follow its text: images as image content,
    documents as embedded resources, files given by URL as resource links. A
    tool's `ToolError`, `ModelRetry` or exception becomes an `isError` result
    the client's model can read; an unknown tool name is a JSON-RPC error, as
    the MCP specification asks.

    The registry's tool sources (`neuron_tool.source`) are asked on every
    listing and every call, with a `RunContext` holding `deps` (which the
    tools asking for a context get too), so a client sees their tools as they
    are then: a registry of `MCPClient`s, filtered, prefixed or renamed
    (`neuron_tool.tool_views`), serves several servers as one. A source that
    fails fails that request with a JSON-RPC error naming it.

    Its clients are told when the tools change (`notifications/tools/list_changed`,
    on a 2026-07-28 client's `subscriptions/listen` stream), and the server
    declares `tools.listChanged`, when one of the registry's sources (as it is
    made) can say so: one carrying a `ToolChanges` (an `MCPClient` given one as
    `on_list_changed`), or a `per_step` source, asked again after each call and
    told as changed if it then gives other tools.
    """
    return _served(registry, name=name, deps=deps)[0]


class _Server(Server[Any]):
    """The SDK's server, declaring `tools.listChanged` to handshake-era clients if it tells them.

    Why a subclass: the SDK's HTTP transport asks the server for its initialization
    options with no arguments, and by default they declare no list changes.
    """

    tools_changed = False

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        """The SDK's options, declaring by default the changes of tools this server tells."""
        if notification_options is None:
            notification_options = NotificationOptions(tools_changed=self.tools_changed)
        return super().create_initialization_options(
            notification_options, experimental_capabilities, extensions
        )


def _served(
    registry: ToolRegistry, *, name: str, deps: object
) -> tuple[Server[Any], ToolListNotices | None]:
    """`mcp_server`'s server, and what tells its clients of changes (None: nothing can)."""
    changes = list(dict.fromkeys(filter(None, map(tool_changes_of, registry.sources))))
    stepping = any(_per_step(source) for source in registry.sources)
    notices = ToolListNotices() if changes or stepping else None

    async def served() -> ToolRegistry:
        try:
            return await registry.for_run(RunContext(deps=deps))
        except ToolSourceError as exc:
            raise MCPError(INTERNAL_ERROR, str(exc)) from exc

    async def list_tools(
        context: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if notices is not None:
            notices.seen(context)
        modern = _is_modern(context)
        tools = await served()
        return types.ListToolsResult(tools=[to_mcp_tool(tool, modern=modern) for tool in tools])

    async def call_tool(
        context: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if notices is not None:
            notices.seen(context)
        tools = await served()
        if params.name not in tools:
            known = ", ".join(tools.names()) or "none"
            raise MCPError(INVALID_PARAMS, f"unknown tool {params.name!r}; available: {known}")
        result = await _call(tools, context, params, deps)
        if notices is not None and tools.step_sources and await _steps_changed(tools, deps):
            notices.changed()
        return result

    def lifespan(_: Server[Any]) -> AbstractAsyncContextManager[None]:
        return contextlib.nullcontext() if notices is None else notices.running(changes)

    server = _Server(
        name,
        lifespan=lifespan,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=None if notices is None else notices.listen,
    )
    server.tools_changed = notices is not None
    return server, notices


async def _call(
    tools: ToolRegistry,
    context: ServerRequestContext[Any],
    params: types.CallToolRequestParams,
    deps: object,
) -> types.CallToolResult:
    """Call the tool `params` names in `tools`, its outcome as an MCP result."""
    try:
        value = await tools.call(params.name, params.arguments or {}, context=RunContext(deps=deps))
    except ModelRetry as retry:
        return error_result(retry.hint)
    except ToolError as exc:
        return error_result(str(exc))
    except Exception as exc:  # the registry wraps tool errors; this is a last resort
        return error_result(f"tool {params.name!r} failed: {describe(exc)}")
    modern = _is_modern(context)
    schema = advertised_output_schema(tools.get(params.name), modern=modern)
    links = is_version_at_least(context.protocol_version, _RESOURCE_LINKS_SINCE)
    return success_result(
        value, schema_advertised=schema is not None, modern=modern, resource_links=links
    )


async def _steps_changed(tools: ToolRegistry, deps: object) -> bool:
    """Whether `tools`' per-step sources, asked again after a call, give other tools.

    A source failing now says nothing: the next request asks it, and fails naming it.
    """
    try:
        after = await tools.for_step(RunContext(deps=deps))
    except ToolSourceError as exc:
        logger.debug("a per-step source failed after a call: %s", exc)
        return False
    return after.schemas() != tools.schemas()


def _is_modern(context: ServerRequestContext[Any]) -> bool:
    return context.protocol_version in MODERN_PROTOCOL_VERSIONS


async def serve_stdio(
    registry: ToolRegistry, *, name: str = _DEFAULT_NAME, deps: object = None
) -> None:
    """Serve `registry` over this process's stdin and stdout until the client hangs up.

    `deps` is what its tool sources and context-taking tools see (`mcp_server`).
    """
    server = mcp_server(registry, name=name, deps=deps)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve_http(
    registry: ToolRegistry,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    name: str = _DEFAULT_NAME,
    token: str | None = None,
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
    on_ready: Callable[[str], object] | None = None,
    deps: object = None,
) -> None:
    """Serve `registry` over Streamable HTTP at `http://host:port/path` until cancelled.

    Every request must carry `Authorization: Bearer <token>`, on loopback too:
    any local user can reach a loopback port. Without a `token` one is made
    (`secrets.token_urlsafe`) and printed on stderr with the URL. Requests whose
    Host or Origin header is not allowed are refused (DNS-rebinding
    protection). It binds to the loopback interface unless told otherwise.
    Cancelling the call (or SIGINT / SIGTERM) stops the server gracefully.

    Args:
        registry: The tools to serve.
        host: The address to bind; a wider bind is explicit and still needs the token.
        port: The port; 0 picks a free one (`on_ready` gets the URL).
        path: The MCP endpoint's path.
        name: The server's name in the MCP handshake.
        token: The bearer token clients send; at least 16 printable ASCII characters.
        allowed_hosts: The Host header values accepted (`"name:port"`, or
            `"name:*"` for any port). By default the loopback names on a
            loopback bind and the bound address otherwise; required when
            binding every interface (`"0.0.0.0"`, `"::"`), which has no name.
        allowed_origins: The Origin header values accepted (requests without
            one are accepted); by default `http://` and each allowed host.
        on_ready: Called with the endpoint URL once connections are accepted.
        deps: What its tool sources and context-taking tools see (`mcp_server`).

    Raises:
        ValueError: The token is too short or not header-safe, or a wildcard
            `host` comes without `allowed_hosts`.
    """
    security = security_settings(host, allowed_hosts, allowed_origins)
    token, show = server_token(token)
    server, notices = _served(registry, name=name, deps=deps)
    app = server.streamable_http_app(
        streamable_http_path=path, host=host, transport_security=security
    )
    await serve_asgi(
        lambda base: BearerAuth(app, token),
        host=host,
        port=port,
        what="MCP",
        token=token,
        show_token=show,
        path=path,
        on_ready=on_ready,
        # Streams of changes last as long as their clients: ended first, they hold up no stop.
        on_stop=None if notices is None else notices.stop,
    )
