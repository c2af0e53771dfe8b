"""The cap on a server's answer (`max_response_bytes`): a clear error for that call, the
session kept, and nothing over the cap held whole; over stdio and Streamable HTTP."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from neuron_tool import ToolError, ToolRegistry, tool
from neuron_tool.mcp import MCPClient, MCPConnectionError, MCPResponseTooLargeError, serve_http
from neuron_tool.mcp._response_size import request_id

from .mcp_servers.paths import script, script_client

CAP = 64 * 1024

TOKEN = "test-token-0123456789abcdef"


def _raw(mode: str) -> MCPClient:
    command, *args = script("raw")
    return MCPClient.stdio(command, [*args, mode], name="raw", max_response_bytes=CAP)


def _restarts(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "restarting" in r.getMessage()]


async def test_an_answer_over_the_default_cap_of_8_mib_is_refused_naming_both_sizes() -> None:
    async with script_client("rpc_errors", name="rpc") as client:
        assert client.max_response_bytes == 8 * 1024 * 1024
        with pytest.raises(MCPResponseTooLargeError) as caught:
            await client.call_tool("text", {"size": 9 * 1024 * 1024})
    error = caught.value
    assert error.limit == 8 * 1024 * 1024
    assert error.size is not None and error.size > 9 * 1024 * 1024
    assert str(error).startswith(
        f"MCP server 'rpc' answered the call to tool 'text' with 9.0 MiB ({error.size} bytes),"
        " more than the 8.0 MiB cap (8388608 bytes, max_response_bytes)"
    )


async def test_an_answer_within_the_cap_arrives_whole() -> None:
    async with script_client("rpc_errors", max_response_bytes=CAP) as client:
        result = await client.call_tool("text", {"size": CAP - 1024, "blocks": 4})
    assert result == "\n".join(["x" * ((CAP - 1024) // 4)] * 4)


async def test_the_session_survives_a_refused_answer(caplog: pytest.LogCaptureFixture) -> None:
    async with script_client("rpc_errors", max_response_bytes=CAP) as client:
        registry = ToolRegistry(await client.list_tools())
        with caplog.at_level(logging.WARNING, logger="neuron_tool.mcp"):
            with pytest.raises(ToolError, match=r"more than the 64\.0 KiB cap"):
                await registry.call("text", {"size": 2 * CAP})
            assert await registry.call("text", {"size": 5}) == "xxxxx"
    assert _restarts(caplog) == []


async def test_an_oversize_answer_with_its_id_last_is_matched_to_its_call(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with _raw("id-last") as client:
        with caplog.at_level(logging.WARNING, logger="neuron_tool.mcp"):
            with pytest.raises(MCPResponseTooLargeError) as caught:
                await client.call_tool("text", {"size": 3 * CAP})
            assert await client.call_tool("text", {"size": 2}) == "xx"
    assert caught.value.size is not None and caught.value.size > 3 * CAP
    assert _restarts(caplog) == []


async def test_an_oversize_message_that_answers_no_call_ends_the_session_clearly() -> None:
    async with _raw("notify") as client:
        with pytest.raises(MCPConnectionError) as caught:
            await client.call_tool("text", {"size": 2 * CAP})
        assert await client.call_tool("text", {"size": 1}) == "xxxx"  # restarted
    assert "more than max_response_bytes (65536)" in str(caught.value)
    assert "answers no request" in str(caught.value)


@tool
def big(size: int) -> str:
    """Answer `size` bytes of text."""
    return "x" * size


@pytest_asyncio.fixture
async def http_url() -> AsyncIterator[str]:
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    server = asyncio.create_task(
        serve_http(ToolRegistry([big]), port=0, token=TOKEN, on_ready=ready.set_result)
    )
    yield await ready
    server.cancel()
    await asyncio.wait([server])


async def test_an_answer_over_the_cap_is_refused_over_http_too(http_url: str) -> None:
    async with MCPClient.http(http_url, token=TOKEN, name="web", max_response_bytes=CAP) as c:
        with pytest.raises(MCPResponseTooLargeError) as caught:
            await c.call_tool("big", {"size": 2 * CAP})
        assert await c.call_tool("big", {"size": 3}) == "xxx"
    assert (caught.value.size, caught.value.limit) == (None, CAP)
    assert "answered the call to tool 'big' with more than 64.0 KiB" in str(caught.value)


def test_the_cap_must_be_a_positive_number_of_bytes() -> None:
    for wrong in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="max_response_bytes must be a positive number"):
            MCPClient.stdio("true", max_response_bytes=wrong)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("head", "tail", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":7,"result":{"content":[', b"", 7),
        (b'{"id":"a\\"b","jsonrpc":"2.0","result":', b"", 'a"b'),
        (b'{"result":{"id":3,', b'"}]},"jsonrpc":"2.0","id":12}\n', 12),
        (b'{"result":{"id":3,', b'"}]},"id":-4,"jsonrpc":"2.0"}', -4),
        (b'{"result":{"id":3,', b'"}],"id":5}}', None),  # a nested "id", not the message's
        (b'{"jsonrpc":"2.0","method":"notifications/message","params":', b'"}}', None),
    ],
)
def test_the_request_id_is_read_only_from_either_end_of_the_message(
    head: bytes, tail: bytes, expected: object
) -> None:
    assert request_id(head, tail) == expected
