"""Servers that do not start, exit, hang, print garbage or get killed: clear errors, restarts,
and no child process left behind."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import time

import pytest

from layer0 import TurnInput
from neuron_tool import MCPBridgeError, ToolRegistry
from neuron_tool.mcp import (
    MCPClient,
    MCPConnectionError,
    MCPConnectTimeoutError,
    MCPTimeoutError,
    serve_http,
)
from neuron_turn import NeuronTurn, NeuronTurnConfig, ToolResultPart, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from .mcp_servers.paths import script_client
from .mcp_servers.registry import build_registry

TOKEN = "test-token-0123456789abcdef"


def _alive(pid: int) -> bool:
    """Whether `pid` still exists; a zombie (exited but not reaped) counts as alive."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def _pid(client: MCPClient) -> int:
    result = await client.call_tool("pid", {})
    assert isinstance(result, str)
    return int(result)


async def test_a_command_that_does_not_exist_is_a_clear_error() -> None:
    client = MCPClient.stdio("/nonexistent/mcp-server-nope", name="nope")
    with pytest.raises(MCPConnectionError) as caught:
        await client.connect()
    message = str(caught.value)
    assert message.startswith("cannot connect to MCP server 'nope' (/nonexistent/mcp-server-nope)")
    assert "No such file or directory" in message
    assert caught.value.server == "nope"


async def test_a_token_given_as_an_argument_stays_out_of_the_error_and_the_repr() -> None:
    args = ["--api-key", "sk-live-1", "--auth=sk-live-2", "https://me:sk-live-3@example.invalid/"]
    client = MCPClient.stdio("/nonexistent/mcp-server-nope", args, name="nope")
    with pytest.raises(MCPConnectionError) as caught:
        await client.connect()
    message = str(caught.value)
    assert message.startswith(
        "cannot connect to MCP server 'nope' (/nonexistent/mcp-server-nope --api-key '***' "
        "'--auth=***' 'https://***@example.invalid/')"
    )
    assert "sk-live" not in message + repr(client) + repr(client.endpoint)


async def test_a_server_that_exits_at_start_reports_its_stderr() -> None:
    with pytest.raises(MCPConnectionError) as caught:
        async with script_client("exits"):
            pass
    assert "its process exited" in str(caught.value)
    assert "cannot read configuration file /etc/exits.toml" in caught.value.stderr
    # Under the traceback, as a note; not in the message a model could be given.
    assert "cannot read configuration file" in "".join(caught.value.__notes__)
    assert "cannot read configuration file" not in str(caught.value)


async def test_garbage_on_stdout_fails_at_once_rather_than_hanging() -> None:
    started = time.monotonic()
    with pytest.raises(MCPConnectionError) as caught:
        async with script_client("garbage", connect_timeout=30):
            pass
    assert time.monotonic() - started < 10
    message = str(caught.value)
    assert "not JSON-RPC" in message
    assert "Welcome to the garbage server" in message


async def test_a_server_that_never_answers_the_handshake_times_out() -> None:
    started = time.monotonic()
    with pytest.raises(MCPConnectTimeoutError) as caught:
        async with script_client("silent", name="silent", connect_timeout=0.5):
            pass
    assert time.monotonic() - started < 5
    assert isinstance(caught.value, MCPTimeoutError)
    assert (caught.value.server, caught.value.seconds) == ("silent", 0.5)
    assert str(caught.value).startswith(
        "MCP server 'silent' did not start and finish the MCP handshake within 0.5 s"
        " (connect_timeout)"
    )
    assert "thinking very hard" in caught.value.stderr


async def test_a_handshake_timeout_stops_a_server_that_ignores_its_stdin_closing() -> None:
    # The server outlives the end of its stdin, so only a signal stops it; the
    # error must not wait out the grace period a working server gets.
    client = script_client("deaf", name="deaf", connect_timeout=0.5)
    started = time.monotonic()
    with pytest.raises(MCPConnectTimeoutError) as caught:
        await client.connect()
    assert time.monotonic() - started < 2
    assert "starting up, slowly" in caught.value.stderr


def test_the_connect_timeout_defaults_to_ten_seconds() -> None:
    assert script_client("silent").connect_timeout == 10.0


async def test_a_killed_server_is_restarted_by_the_next_call(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with script_client("toolbox", name="toolbox") as client:
        registry = ToolRegistry(await client.list_tools())
        first = await _pid(client)
        os.kill(first, signal.SIGKILL)
        with caplog.at_level(logging.WARNING, logger="neuron_tool.mcp"):
            assert await registry.call("echo", {"text": "back"}) == "back"
        second = await _pid(client)
        assert second != first
        assert not _alive(first)  # reaped, not a zombie
        restarts = [r for r in caplog.records if "restarting" in r.getMessage()]
        assert len(restarts) == 1
        assert restarts[0].levelno == logging.WARNING
        assert "'toolbox'" in restarts[0].getMessage()
    assert not _alive(second)


async def test_a_server_dying_in_a_call_fails_that_call_and_the_next_restarts_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with script_client("toolbox", name="toolbox") as client:
        first = await _pid(client)
        with pytest.raises(MCPConnectionError) as caught:
            # The crash tool has no read-only or idempotent hint: it is not sent twice.
            await client.call_tool("crash", {})
        assert "stopped during the call to tool 'crash': its process exited" in str(caught.value)
        assert "crashing on purpose" in caught.value.stderr
        assert "crashing on purpose" not in str(caught.value)  # a note, not the message
        assert any("crashing on purpose" in note for note in caught.value.__notes__)
        assert not _alive(first)
        with caplog.at_level(logging.WARNING, logger="neuron_tool.mcp"):
            assert await client.call_tool("echo", {"text": "again"}) == "again"
        assert any("restarting" in record.getMessage() for record in caplog.records)


async def test_leaving_the_context_reaps_the_child_even_with_a_call_in_flight() -> None:
    async with script_client("toolbox", timeout=30) as client:
        pid = await _pid(client)
        hanging = asyncio.create_task(client.call_tool("sleep_forever", {}))
        await asyncio.sleep(0)  # let the call start
    assert not _alive(pid)
    with pytest.raises(MCPConnectionError, match="stopped during the call"):
        await hanging


async def test_calls_after_close_fail_clearly() -> None:
    client = script_client("toolbox", name="toolbox")
    await client.close()
    with pytest.raises(MCPConnectionError, match=r"MCP server 'toolbox' .* is closed"):
        await client.call_tool("echo", {"text": "late"})


async def test_an_unreachable_http_server_is_a_clear_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # Nothing listens on the port now.
    client = MCPClient.http(f"http://127.0.0.1:{port}/mcp", name="remote", connect_timeout=5)
    with pytest.raises(MCPConnectionError, match="cannot connect to MCP server 'remote'") as caught:
        await client.connect()
    assert "ConnectError" in str(caught.value)


async def test_an_http_server_that_is_not_an_mcp_server_is_a_clear_error() -> None:
    async def answer_html(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        body = b"<html>It works!</html>"
        head = f"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {len(body)}\r\n"
        writer.write(head.encode() + b"Connection: close\r\n\r\n" + body)
        await writer.drain()
        writer.close()
        await writer.wait_closed()

    async with await asyncio.start_server(answer_html, "127.0.0.1", 0) as web:
        port = web.sockets[0].getsockname()[1]
        client = MCPClient.http(f"http://127.0.0.1:{port}/", name="web", connect_timeout=5)
        with pytest.raises(
            MCPConnectionError, match="cannot connect to MCP server 'web'"
        ) as caught:
            await client.connect()
    assert "text/html" in str(caught.value)


async def test_an_http_server_that_went_away_is_reconnected_once_it_is_back() -> None:
    async def serve(port: int) -> tuple[asyncio.Task[None], str]:
        ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(
            serve_http(build_registry(), port=port, token=TOKEN, on_ready=ready.set_result)
        )
        return task, await ready

    server, url = await serve(0)
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    async with MCPClient.http(url, token=TOKEN, name="remote", connect_timeout=5) as client:
        assert await client.call_tool("greet", {"name": "Ada"}) == "Hello, Ada!"
        server.cancel()
        await asyncio.wait([server])
        with pytest.raises(MCPBridgeError, match="MCP server 'remote'"):
            await client.call_tool("greet", {"name": "Ada"})
        server, _ = await serve(port)
        try:
            assert await client.call_tool("greet", {"name": "Bob"}) == "Hello, Bob!"
        finally:
            server.cancel()
            await asyncio.wait([server])


async def test_a_server_dying_in_a_models_tool_call_keeps_its_stderr_from_the_model() -> None:
    # A server's stderr is the caller's to read (it may print configuration or
    # tokens); the model hears only that the call failed and why.
    model = ScriptedProvider(
        [tool_call_response(ToolUsePart("c1", "crash", {})), text_response("It crashed.")]
    )
    async with script_client("toolbox", name="toolbox") as client:
        turn = NeuronTurn(model, tools=[client], config=NeuronTurnConfig(model="m"))
        await turn.execute(TurnInput(message="crash it", trigger="user"))

    (result,) = [
        block
        for message in model.requests[1].messages
        if isinstance(message.content, list)
        for block in message.content
        if isinstance(block, ToolResultPart)
    ]
    assert result.is_error and "its process exited" in str(result.content)
    assert "crashing on purpose" not in str(result.content)
