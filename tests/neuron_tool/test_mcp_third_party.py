"""The bridge against servers nobody here wrote: the Python `mcp-server-time` and the npm
`@modelcontextprotocol/server-everything` (stdio and Streamable HTTP), as installed by
scripts/setup.d/test-mcp-servers (run by `scripts/setup --test`). A missing install fails
these tests; it never skips them."""

from __future__ import annotations

import asyncio
import base64
import os
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from pydantic import JsonValue

from layer0 import Base64Source, CustomBlock, ImageBlock
from neuron_tool import MCPBridgeError, ToolAnnotations, ToolRegistry, ToolReturn, document_of
from neuron_tool.mcp import MCPClient, MCPTool, MCPToolError

from .mcp_servers import paths
from .mcp_servers.paths import everything_command, time_server_command

pytestmark = pytest.mark.asyncio(loop_scope="module")

# What server-everything offers a client without roots, sampling or elicitation
# (our client offers none): tools like get-roots-list are left out.
EVERYTHING_TOOLS = {
    "simulate-research-query",
    "echo",
    "get-annotated-message",
    "get-env",
    "get-resource-links",
    "get-resource-reference",
    "get-structured-content",
    "get-sum",
    "get-tiny-image",
    "gzip-file-as-resource",
    "toggle-simulated-logging",
    "toggle-subscriber-updates",
    "trigger-long-running-operation",
}
READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def time_server() -> AsyncIterator[MCPClient]:
    command, *args = time_server_command()
    async with MCPClient.stdio(command, args, name="time", prefix="time_") as client:
        yield client


async def test_time_server_converts_time_with_a_structured_result(time_server: MCPClient) -> None:
    tools = {tool.name: tool for tool in await time_server.list_tools()}
    assert set(tools) == {"time_get_current_time", "time_convert_time"}
    convert = tools["time_convert_time"]
    assert convert.remote_name == "convert_time"
    assert convert.annotations is not None and convert.annotations.read_only_hint
    assert convert.output_schema is not None
    registry = ToolRegistry(tools.values())
    result = await registry.call(
        "time_convert_time",
        {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Kolkata"},
    )
    assert isinstance(result, dict)
    assert result["time_difference"] == "+5.5h"
    assert result["source"]["timezone"] == "UTC"
    assert result["target"]["timezone"] == "Asia/Kolkata"
    assert result["target"]["datetime"].endswith("T17:30:00+05:30")


async def test_time_server_reports_a_bad_timezone_as_a_tool_error(time_server: MCPClient) -> None:
    with pytest.raises(MCPToolError, match="Mars/Olympus"):
        await time_server.call_tool("get_current_time", {"timezone": "Mars/Olympus"})


async def test_time_server_refuses_an_unknown_tool(time_server: MCPClient) -> None:
    with pytest.raises(
        MCPBridgeError, match="answered the call to tool 'nope' with the error 'Unknown tool: nope'"
    ):
        await time_server.call_tool("nope", {})


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def everything_http_url() -> AsyncIterator[str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command, *args = everything_command("streamableHttp")
    process = await asyncio.create_subprocess_exec(
        command,
        *args,
        env={**os.environ, "PORT": str(port)},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    try:
        # The server says so on stderr once it listens (see transports/streamableHttp.js).
        async with asyncio.timeout(30):
            while b"listening on port" not in (line := await process.stderr.readline()):
                assert line, "server-everything exited before listening"
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        await process.communicate()


@pytest_asyncio.fixture(loop_scope="module", scope="module", params=["stdio", "http"])
async def everything(
    request: pytest.FixtureRequest, everything_http_url: str
) -> AsyncIterator[MCPClient]:
    if request.param == "stdio":
        command, *args = everything_command("stdio")
        client = MCPClient.stdio(command, args, name="everything", prefix="ev_")
    else:
        client = MCPClient.http(everything_http_url, name="everything", prefix="ev_")
    async with client:
        yield client


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def everything_tools(everything: MCPClient) -> dict[str, MCPTool]:
    return {tool.remote_name: tool for tool in await everything.list_tools()}


async def test_everything_lists_every_tool_with_the_prefix(
    everything_tools: dict[str, MCPTool],
) -> None:
    # The listing is followed to its last page (this server sends a single one).
    assert set(everything_tools) == EVERYTHING_TOOLS
    assert all(tool.name == f"ev_{name}" for name, tool in everything_tools.items())
    ToolRegistry(everything_tools.values())  # every name and schema is acceptable


async def test_everything_annotations_are_mapped(everything_tools: dict[str, MCPTool]) -> None:
    assert (
        everything_tools["echo"].annotations == READ_ONLY.model_copy(update={"title": None})
        or everything_tools["echo"].annotations == READ_ONLY
    )
    assert everything_tools["get-sum"].annotations is not None
    assert everything_tools["get-sum"].annotations.read_only_hint is True
    assert everything_tools["echo"].description == "Echoes back the input string"


async def test_everything_echo_and_get_sum(everything_tools: dict[str, MCPTool]) -> None:
    registry = ToolRegistry(everything_tools.values())
    assert await registry.call("ev_echo", {"message": "hi there"}) == "Echo: hi there"
    total = await registry.call("ev_get-sum", {"a": 2, "b": 3.5})
    assert total == "The sum of 2 and 3.5 is 5.5."


async def test_everything_tiny_image_arrives_as_a_file_mentioned_in_the_text(
    everything_tools: dict[str, MCPTool],
) -> None:
    result = await everything_tools["get-tiny-image"].call({})
    assert isinstance(result, ToolReturn)
    assert isinstance(result.value, str)
    assert "[image: image/png, " in result.value
    [image] = result.files
    assert isinstance(image, ImageBlock)
    assert image.media_type == "image/png"
    assert isinstance(image.source, Base64Source)
    assert base64.b64decode(image.source.data).startswith(b"\x89PNG\r\n\x1a\n")


async def test_everything_plain_text_blob_arrives_as_a_document_named_by_its_uri(
    everything_tools: dict[str, MCPTool],
) -> None:
    arguments: dict[str, JsonValue] = {"resourceType": "Blob", "resourceId": 2}
    result = await everything_tools["get-resource-reference"].call(arguments)
    assert isinstance(result, ToolReturn)
    assert isinstance(result.value, str)
    assert "[resource: demo://resource/dynamic/blob/2 (text/plain), " in result.value
    [file] = result.files
    assert isinstance(file, CustomBlock)
    source, media_type, name = document_of(file.data) or (None, None, None)
    assert (media_type, name) == ("text/plain", "2")
    assert isinstance(source, Base64Source)
    assert base64.b64decode(source.data).startswith(b"Resource 2:")


async def test_everything_gzip_blob_and_resource_links_stay_text(
    everything_tools: dict[str, MCPTool],
) -> None:
    arguments: dict[str, JsonValue] = {
        "name": "hi.txt.gz",
        "data": "data:text/plain;base64,aGVsbG8=",
        "outputType": "resource",
    }
    gzipped = await everything_tools["gzip-file-as-resource"].call(arguments)
    assert isinstance(gzipped, str)
    assert gzipped.startswith("[resource: demo://resource/session/hi.txt.gz (application/gzip), ")
    linked = await everything_tools["get-resource-links"].call({"count": 2})
    assert isinstance(linked, str)
    assert "[resource: demo://resource/dynamic/blob/1 (text/plain)]" in linked


async def test_a_missing_install_fails_and_says_to_run_setup(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(paths, "EVERYTHING", tmp_path / "missing/index.js")
    with pytest.raises(pytest.fail.Exception, match="run scripts/setup"):
        paths.everything_command("stdio")
