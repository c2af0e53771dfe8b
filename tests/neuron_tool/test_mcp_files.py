"""Files in an MCP server's results: images, PDF or plain-text blobs, audio and video reach the
model as files (a `ToolReturn`), still mentioned in the text; anything else, and base64 that does
not decode, is only described. Against the file_results test server, over stdio."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from neuron_tool import ToolRegistry, ToolReturn, document_block, image_block
from neuron_tool.mcp import MCPClient

from .mcp_servers.file_results import MP4, NOTES, PDF, PNG, SVG, WAV, ZIP
from .mcp_servers.paths import script_client

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def server() -> AsyncIterator[MCPClient]:
    async with script_client("file_results", name="files") as client:
        yield client


async def test_an_image_a_pdf_and_a_plain_text_blob_arrive_as_files_mentioned_in_the_text(
    server: MCPClient,
) -> None:
    registry = ToolRegistry(await server.list_tools())
    result = await registry.call("screenshot", {})
    assert result == ToolReturn(
        "\n".join(
            [
                "Your files:",
                f"[image: image/png, {len(PNG)} bytes]",
                f"[resource: file:///reports/q3%20figures.pdf (application/pdf), {len(PDF)} bytes]",
                "[resource: memo://notes/todo.txt?rev=2 (text/plain; charset=utf-8),"
                f" {len(NOTES)} bytes]",
            ]
        ),
        files=[
            image_block(PNG),
            # Named by the last segment of the URI's path; the type without its parameters.
            document_block(PDF, name="q3 figures.pdf"),
            document_block(NOTES, media_type="text/plain", name="todo.txt"),
        ],
    )


async def test_base64_that_does_not_decode_is_described_and_the_call_still_succeeds(
    server: MCPClient,
) -> None:
    result = await server.call_tool("broken", {})
    assert result == ToolReturn(
        "\n".join(
            [
                "[image: image/png, its base64 data did not decode]",
                "[resource: file:///bad.pdf (application/pdf), its base64 data did not decode]",
                f"[image: image/png, {len(PNG)} bytes]",
            ]
        ),
        files=[image_block(PNG)],
    )


async def test_a_result_whose_only_image_does_not_decode_is_its_text(server: MCPClient) -> None:
    result = await server.call_tool("only_broken", {})
    assert result == "[image: image/png, its base64 data did not decode]"


async def test_a_result_without_files_for_the_model_is_its_text_as_before(
    server: MCPClient,
) -> None:
    # Links, text resources, SVG (no provider shows it) and other blobs stay text.
    assert await server.call_tool("no_files", {}) == "\n".join(
        [
            "Nothing to show:",
            "[resource: https://example.com/r.pdf (application/pdf)]",
            "[resource: memo://n (text/plain)]",
            "hi",
            f"[image: image/svg+xml, {len(SVG)} bytes]",
            f"[resource: file:///a.zip (application/zip), {len(ZIP)} bytes]",
        ]
    )


async def test_structured_content_stays_the_value_beside_the_files(server: MCPClient) -> None:
    result = await server.call_tool("structured_screenshot", {})
    assert result == ToolReturn({"width": 2}, files=[image_block(PNG)])


async def test_audio_and_a_video_blob_arrive_as_files_and_audio_that_does_not_decode_as_text(
    server: MCPClient,
) -> None:
    result = await server.call_tool("recording", {})

    assert result == ToolReturn(
        "\n".join(
            [
                f"[audio: audio/wav, {len(WAV)} bytes]",
                f"[resource: file:///clips/door.mp4 (video/mp4), {len(MP4)} bytes]",
                "[audio: audio/mpeg, its base64 data did not decode]",
            ]
        ),
        files=[
            document_block(WAV, media_type="audio/wav"),
            document_block(MP4, media_type="video/mp4", name="door.mp4"),
        ],
    )
