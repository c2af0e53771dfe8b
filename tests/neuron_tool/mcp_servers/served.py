"""A low-level MCP `Server` over Streamable HTTP on loopback, guarded as `serve_http` guards one.

Every request must carry the bearer token (`TOKEN`), and the Host and Origin
checks are those of a loopback bind: the same ASGI wrapping `serve_http` gives a
registry, here around any server's handlers (prompts, resources, change streams).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

from mcp.server.lowlevel import Server

from neuron_tool.mcp._http_guard import BearerAuth, security_settings
from neuron_tool.serving import serve_asgi

TOKEN: Final = "test-token-0123456789abcdef"
HOST: Final = "127.0.0.1"


@asynccontextmanager
async def served_over_http(server: Server[Any], *, port: int = 0) -> AsyncIterator[str]:
    """Serve `server` at a loopback port (0: a free one) until the block ends; yields its URL."""
    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        host=HOST,
        transport_security=security_settings(HOST, None, None),
    )
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    serving = asyncio.create_task(
        serve_asgi(
            lambda base: BearerAuth(app, TOKEN),
            host=HOST,
            port=port,
            what="MCP",
            token=TOKEN,
            show_token=False,
            path="/mcp",
            on_ready=ready.set_result,
        )
    )
    try:
        yield await ready
    finally:
        serving.cancel()
        await asyncio.wait([serving])
