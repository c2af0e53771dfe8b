"""An MCP server's image is the type its bytes say, whatever media type the server gives it.

A model API refuses an image whose bytes are not its media type, failing the
model request after the tool call (and every later one the image stays in the
history for). So a JPEG labelled image/png reaches the model as a JPEG, and
bytes that are no image are no image file: described in a tool result's text,
refused in a prompt or a resource read, as base64 that does not decode is.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from layer0 import ImageBlock
from neuron_tool import ToolReturn, image_block
from neuron_tool.mcp import MCPClient, MCPInvalidAnswerError

from .mcp_servers.mislabeled import JPEG, TEXT
from .mcp_servers.paths import script_client

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def server() -> AsyncIterator[MCPClient]:
    async with script_client("mislabeled", name="mislabeled") as client:
        yield client


async def test_a_tool_results_jpeg_labelled_png_reaches_the_model_as_a_jpeg(
    server: MCPClient,
) -> None:
    result = await server.call_tool("jpeg_as_png", {})
    expected = image_block(JPEG, media_type="image/jpeg")
    assert result == ToolReturn(f"[image: image/png, {len(JPEG)} bytes]", files=[expected])


async def test_a_tool_results_bytes_that_are_no_image_are_described_and_not_a_file(
    server: MCPClient,
) -> None:
    result = await server.call_tool("text_as_png", {})
    assert result == (
        f"[image: image/png, {len(TEXT)} bytes, which are no PNG, JPEG, GIF or WebP image]"
    )


async def test_a_prompts_jpeg_labelled_png_is_a_jpeg(server: MCPClient) -> None:
    prompt = await server.get_prompt("jpeg_as_png")
    (block,) = prompt.messages[0].content.blocks
    assert isinstance(block, ImageBlock) and block.media_type == "image/jpeg"


async def test_a_prompts_image_whose_bytes_are_no_image_is_refused(server: MCPClient) -> None:
    with pytest.raises(MCPInvalidAnswerError) as caught:
        await server.get_prompt("text_as_png")
    assert "message 1: the bytes of its image (image/png)" in str(caught.value)
    assert "are no PNG, JPEG, GIF or WebP image" in str(caught.value)


async def test_a_resources_jpeg_labelled_png_reads_as_a_jpeg(server: MCPClient) -> None:
    (contents,) = await server.read_resource("file:///jpeg.png")
    assert isinstance(contents.block, ImageBlock) and contents.block.media_type == "image/jpeg"
    assert contents.data == JPEG


async def test_a_resource_labelled_an_image_whose_bytes_are_none_is_refused(
    server: MCPClient,
) -> None:
    with pytest.raises(MCPInvalidAnswerError) as caught:
        await server.read_resource("file:///text.png")
    message = str(caught.value)
    assert "the read of resource 'file:///text.png'" in message
    assert "the bytes of 'file:///text.png' (image/png) are no PNG, JPEG, GIF or WebP image" in (
        message
    )
