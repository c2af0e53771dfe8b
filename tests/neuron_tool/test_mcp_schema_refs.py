"""An MCP server's tool whose input schema refers outside itself (a URL, a file, a `$ref` to
nothing) is refused naming the tool, and nothing it names is fetched or read: compiling a
schema must not reach the network for an untrusted server."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from neuron_tool import RunContext, ToolRegistrationError, ToolRegistry, ToolSourceError
from neuron_tool.mcp import MCPClient

from .mcp_servers.paths import script


class _Canary(ThreadingHTTPServer):
    """A loopback HTTP server that records every request and answers with a schema.

    In a thread of its own: a fetch made while compiling a schema blocks the event loop.
    """

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Recorder)
        self.paths: list[str] = []
        self.url = f"http://127.0.0.1:{self.server_address[1]}/{secrets.token_hex(8)}/schema.json"


class _Recorder(BaseHTTPRequestHandler):
    server: _Canary

    def do_GET(self) -> None:
        self.server.paths.append(self.path)
        body = b'{"type": "string"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/schema+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def _client(canary: _Canary) -> MCPClient:
    """A client for the schemas test server, its remote `$ref`s pointing at `canary`."""
    command, *args = script("schemas")
    return MCPClient.stdio(command, [*args, canary.url], name="schemas")


@pytest.fixture
def canary() -> Iterator[_Canary]:
    server = _Canary()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    thread.join()
    server.server_close()


@pytest.mark.parametrize(
    ("tool", "ref"),
    [
        ("remote", "schema.json"),
        ("local_file", "file:///etc/hostname"),
        ("based", "other.json"),
        ("dangling", "/$defs/missing"),
    ],
)
async def test_a_tool_whose_schema_refers_outside_itself_is_refused_and_nothing_is_fetched(
    canary: _Canary, tool: str, ref: str
) -> None:
    async with _client(canary) as client:
        listed = [t for t in await client.list_tools() if t.name == tool]
    with pytest.raises(ToolRegistrationError) as caught:
        ToolRegistry(listed)
    assert caught.value.tool == tool
    assert "invalid input schema" in str(caught.value) and ref in str(caught.value)
    assert canary.paths == []


async def test_a_turn_given_such_a_server_fails_naming_it_and_fetches_nothing(
    canary: _Canary,
) -> None:
    async with _client(canary) as client:
        with pytest.raises(ToolSourceError) as caught:
            await ToolRegistry([client]).for_run(RunContext(deps=None))
    assert caught.value.source == "schemas"
    assert canary.paths == []
