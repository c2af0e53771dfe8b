"""JSON-RPC errors from a live MCP server: tool errors at once, with the server's words."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
import uvicorn
from mcp.server.lowlevel import Server

from neuron_tool import ToolError, ToolRegistry
from neuron_tool.mcp import MCPClient, MCPRequestError

from .mcp_servers.paths import script_client
from .mcp_servers.rpc_errors import call_tool, list_tools

pytestmark = pytest.mark.asyncio(loop_scope="module")

# What a lost session waits for before reporting; an answered error must not wait at all.
SETTLE_SECONDS = 5.0


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def http_url() -> AsyncIterator[str]:
    """The rpc_errors server's handlers served over Streamable HTTP on loopback."""
    server = Server("rpc-errors", on_list_tools=list_tools, on_call_tool=call_tool)
    app = server.streamable_http_app(host="127.0.0.1")
    uvicorn_server = uvicorn.Server(uvicorn.Config(app, log_config=None, access_log=False))
    # Connections wait in the listening socket's backlog until uvicorn takes them.
    with socket.create_server(("127.0.0.1", 0)) as sock:
        task = asyncio.create_task(uvicorn_server.serve(sockets=[sock]))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
        uvicorn_server.should_exit = True
        await asyncio.wait([task])


@pytest_asyncio.fixture(loop_scope="module", scope="module", params=["stdio", "http"])
async def client(request: pytest.FixtureRequest, http_url: str) -> AsyncIterator[MCPClient]:
    if request.param == "stdio":
        served = script_client("rpc_errors", name="rpc", timeout=30)
    else:
        served = MCPClient.http(http_url, name="rpc", timeout=30)
    async with served:
        yield served


async def test_a_server_error_with_the_connection_closed_code_is_a_request_error_at_once(
    client: MCPClient, caplog: pytest.LogCaptureFixture
) -> None:
    started = time.monotonic()
    with pytest.raises(MCPRequestError) as caught:
        await client.call_tool("fail", {"code": -32000, "message": "the database is down"})
    assert time.monotonic() - started < SETTLE_SECONDS
    assert caught.value.code == -32000
    assert caught.value.message == "the database is down"
    assert str(caught.value) == (
        "MCP server 'rpc' answered the call to tool 'fail' with the error"
        " 'the database is down' (code -32000)"
    )
    with caplog.at_level(logging.WARNING, logger="neuron_tool.mcp"):
        assert await client.call_tool("text", {"size": 3}) == "xxx"
    assert not [record for record in caplog.records if "restarting" in record.getMessage()]


async def test_any_other_server_error_is_a_request_error_too(client: MCPClient) -> None:
    with pytest.raises(MCPRequestError) as caught:
        await client.call_tool("fail", {"code": -32603, "message": "internal trouble"})
    assert (caught.value.code, caught.value.message) == (-32603, "internal trouble")


async def test_the_model_reads_the_server_error_as_a_tool_error(client: MCPClient) -> None:
    registry = ToolRegistry(await client.list_tools())
    with pytest.raises(ToolError, match="the database is down"):
        await registry.call("fail", {"code": -32000, "message": "the database is down"})


async def test_a_servers_error_of_megabytes_is_quoted_in_part_and_kept_whole(
    client: MCPClient,
) -> None:
    said = "the database is down " * 100_000  # 2.1 MB the model would read
    with pytest.raises(MCPRequestError) as caught:
        await client.call_tool("fail", {"code": -32603, "message": said})
    text = str(caught.value)
    assert len(text) < MCPRequestError.MESSAGE_SHOWN + 200
    assert f"[{len(said)} characters in all]" in text and caught.value.message == said


async def test_a_token_in_the_servers_url_stays_out_of_the_logs(
    http_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    secret_url = http_url.replace("://", "://me:pw-s3cret@") + "?api_key=key-s3cret&x=1"
    async with MCPClient.http(secret_url, name="keyed", timeout=30) as keyed:
        await keyed.list_tools()
    ours = [r for r in caplog.records if not r.name.startswith("uvicorn")]  # the test's server
    logged = "\n".join(record.getMessage() for record in ours)
    assert "HTTP Request: POST" in logged and "api_key=***&x=1" in logged
    assert "s3cret" not in logged
