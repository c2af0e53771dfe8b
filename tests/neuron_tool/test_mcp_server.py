"""Our `ToolRegistry` served over MCP (stdio and Streamable HTTP), read back by our client."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from typing import Any, Literal

import mcp_types as types
import pytest
import pytest_asyncio
from mcp import Client

from neuron_tool import MCPBridgeError, ToolAnnotations, ToolReturn, document_block, image_block
from neuron_tool.mcp import MCPClient, MCPTool, MCPToolError, mcp_server, serve_http

from .mcp_servers.paths import script, script_client
from .mcp_servers.registry import MP4, PDF, PNG, WAV, build_registry

pytestmark = pytest.mark.asyncio(loop_scope="module")

TOKEN = "test-token-0123456789abcdef"


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def http_url() -> AsyncIterator[str]:
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    server = asyncio.create_task(
        serve_http(build_registry(), port=0, token=TOKEN, on_ready=ready.set_result)
    )
    yield await ready
    server.cancel()
    await asyncio.wait([server])


@pytest_asyncio.fixture(loop_scope="module", scope="module", params=["stdio", "http"])
async def client(request: pytest.FixtureRequest, http_url: str) -> AsyncIterator[MCPClient]:
    if request.param == "stdio":
        served = script_client("registry", name="sample")
    else:
        served = MCPClient.http(http_url, token=TOKEN, name="sample")
    async with served:
        yield served


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def tools(client: MCPClient) -> dict[str, MCPTool]:
    return {tool.name: tool for tool in await client.list_tools()}


async def test_http_binds_to_loopback_by_default(http_url: str) -> None:
    assert http_url.startswith("http://127.0.0.1:")
    assert http_url.endswith("/mcp")


async def test_schemas_and_descriptions_round_trip(tools: dict[str, MCPTool]) -> None:
    registry = build_registry()
    assert list(tools) == registry.names()
    for schema in registry.schemas():
        assert tools[schema.name].description == schema.description
        assert tools[schema.name].input_schema == schema.input_schema


async def test_annotations_round_trip(tools: dict[str, MCPTool]) -> None:
    assert tools["add"].annotations == ToolAnnotations(
        title="Add", read_only_hint=True, idempotent_hint=True
    )
    assert tools["greet"].annotations is None


async def test_output_schemas_round_trip(tools: dict[str, MCPTool]) -> None:
    registry = build_registry()
    for name in ("add", "forecast", "greet"):
        assert tools[name].output_schema == registry.get(name).output_schema
    assert tools["inventory"].output_schema is None


async def test_results_round_trip(tools: dict[str, MCPTool]) -> None:
    assert await tools["add"].call({"a": 2, "b": 3}) == 5
    assert await tools["forecast"].call({"city": "Lima"}) == {"city": "Lima", "celsius": 19.5}
    assert await tools["greet"].call({"name": "Ada"}) == "Hello, Ada!"
    assert await tools["inventory"].call({}) == {"apples": 3, "pears": 0}


async def test_model_retry_is_an_error_result_with_the_hint(tools: dict[str, MCPTool]) -> None:
    with pytest.raises(MCPToolError) as caught:
        await tools["pick"].call({"size": 50})
    assert caught.value.message == "50 is too large; try a number below 10"


async def test_an_exception_is_an_error_result(tools: dict[str, MCPTool]) -> None:
    with pytest.raises(MCPToolError, match="the fuse was lit"):
        await tools["explode"].call({})


async def test_invalid_input_is_an_error_result_naming_the_field(tools: dict[str, MCPTool]) -> None:
    with pytest.raises(MCPToolError, match=r"invalid input for tool 'add' at \$\.a"):
        await tools["add"].call({"a": "two", "b": 3})


async def test_an_unknown_tool_is_a_protocol_error(client: MCPClient) -> None:
    with pytest.raises(MCPBridgeError, match="unknown tool 'nope'; available: add, forecast"):
        await client.call_tool("nope", {})


async def test_older_sessions_get_only_object_schemas_and_object_results() -> None:
    # The initialize handshake negotiates 2025-11-25, where structured output is an object.
    async with Client(mcp_server(build_registry()), mode="legacy") as legacy:
        listed = {tool.name: tool for tool in (await legacy.list_tools()).tools}
        assert listed["add"].output_schema is None
        assert listed["forecast"].output_schema is not None
        added = await legacy.call_tool("add", {"a": 1, "b": 2})
        assert added.structured_content is None
        assert added.content == [types.TextContent(text="3")]
        forecast = await legacy.call_tool("forecast", {"city": "Rome"})
        assert forecast.structured_content == {"city": "Rome", "celsius": 19.5}


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


async def test_a_tool_return_arrives_with_equal_files(tools: dict[str, MCPTool]) -> None:
    result = await tools["chart"].call({"title": "Q3"})
    assert isinstance(result, ToolReturn)
    assert result.files == (image_block(PNG), document_block(PDF, name="Q3 report.pdf"))
    assert result.value == "\n".join(
        [
            "Chart: Q3",
            f"[image: image/png, {len(PNG)} bytes]",
            f"[resource: neuron:document/Q3%20report.pdf (application/pdf), {len(PDF)} bytes]",
        ]
    )


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_files_follow_the_text_as_image_content_and_an_embedded_document(
    mode: Literal["legacy", "auto"],
) -> None:
    async with Client(mcp_server(build_registry()), mode=mode) as peer:
        result = await peer.call_tool("chart", {"title": "Q3"})
    document = types.BlobResourceContents(
        uri="neuron:document/Q3%20report.pdf", mime_type="application/pdf", blob=_b64(PDF)
    )
    assert result.content == [
        types.TextContent(text="Chart: Q3"),
        types.ImageContent(data=_b64(PNG), mime_type="image/png"),
        types.EmbeddedResource(resource=document),
    ]
    assert result.structured_content is None


async def test_audio_is_served_as_audio_content_and_video_as_an_embedded_resource() -> None:
    async with Client(mcp_server(build_registry())) as peer:
        result = await peer.call_tool("recording", {})
    clip = types.BlobResourceContents(
        uri="neuron:document/clip.mp4", mime_type="video/mp4", blob=_b64(MP4)
    )
    assert result.content == [
        types.TextContent(text="recorded"),
        types.AudioContent(data=_b64(WAV), mime_type="audio/wav"),
        types.EmbeddedResource(resource=clip),
    ]


async def test_a_document_without_a_name_is_named_by_its_place_among_the_files(
    tools: dict[str, MCPTool],
) -> None:
    words = b"plain words"
    assert await tools["unnamed"].call({}) == ToolReturn(
        f"notes\n[resource: neuron:document/0 (text/plain), {len(words)} bytes]",
        files=[document_block(words, media_type="text/plain", name="0")],
    )


async def test_files_by_url_are_resource_links_after_the_structured_value() -> None:
    async with Client(mcp_server(build_registry())) as peer:
        result = await peer.call_tool("links", {})
    assert result.structured_content == {"count": 3}
    assert result.content == [
        types.TextContent(text='{"count": 3}'),
        types.ResourceLink(
            name="a.png", uri="https://example.com/img/a.png", mime_type="image/png"
        ),
        types.ResourceLink(
            name="Report", uri="https://example.com/docs/r.pdf?v=2", mime_type="application/pdf"
        ),
        types.ResourceLink(name="example.com", uri="https://example.com/", mime_type="text/plain"),
    ]


async def test_sessions_older_than_resource_links_get_a_file_url_in_text() -> None:
    # The SDK's client speaks 2025-11-25 at the oldest, so this one writes JSON-RPC by hand.
    result = await _raw_call("2025-03-26", "links")
    assert result["content"][1:] == [
        {"type": "text", "text": "[file: https://example.com/img/a.png (image/png)]"},
        {"type": "text", "text": "[file: https://example.com/docs/r.pdf?v=2 (application/pdf)]"},
        {"type": "text", "text": "[file: https://example.com/ (text/plain)]"},
    ]


async def _raw_call(version: str, tool: str) -> dict[str, Any]:
    """Call `tool` of the registry script over stdio in a session of protocol `version`."""
    command, *args = script("registry")
    process = await asyncio.create_subprocess_exec(
        command,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    client_info = {"name": "raw", "version": "0"}
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": client_info},
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool}},
    ]
    try:
        async with asyncio.timeout(30):
            for message in messages:
                process.stdin.write(json.dumps(message).encode() + b"\n")
            await process.stdin.drain()
            while True:
                answer = json.loads(await process.stdout.readline())
                if answer.get("id") == 1:
                    assert answer["result"]["protocolVersion"] == version
                if answer.get("id") == 2:
                    result: dict[str, Any] = answer["result"]
                    return result
    finally:
        process.stdin.close()
        await process.wait()
