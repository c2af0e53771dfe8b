"""`MCPClient`'s prompts and resources over Streamable HTTP: the library test server's
handlers served on loopback behind the bearer token, as `serve_http` guards a server.

The stdio tests (test_mcp_prompts.py, test_mcp_resources.py) cover the conversions in
depth; these check that each kind of request, refusal, error, deadline and cap holds over
HTTP too.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from layer0 import Base64Source, Content, CustomBlock, ImageBlock, TextBlock
from neuron_tool import document_of
from neuron_tool.mcp import (
    MCPClient,
    MCPConnectionError,
    MCPRequestError,
    MCPResponseTooLargeError,
    MCPTimeoutError,
    MCPUndeclaredArgumentError,
)

from .library_server import CAP, TIMEOUT
from .mcp_servers.library import IMAGE, NOT_FOUND, PDF, library_server
from .mcp_servers.served import TOKEN, served_over_http

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def url() -> AsyncIterator[str]:
    async with served_over_http(library_server()) as served:
        yield served


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def library(url: str) -> AsyncIterator[MCPClient]:
    async with MCPClient.http(url, token=TOKEN, name="library", timeout=TIMEOUT) as client:
        yield client


async def _gets(client: MCPClient) -> int:
    """How many prompts/get requests the library server has answered."""
    (counted,) = await client.read_resource("count://gets")
    assert counted.text is not None
    return int(counted.text)


async def test_prompts_are_listed_across_every_page_over_http(library: MCPClient) -> None:
    prompts = await library.list_prompts()

    assert [prompt.name for prompt in prompts] == [
        "review",
        "few_shot",
        "attachments",
        "fails",
        "hang",
        "big",
    ]
    assert [(a.name, a.required) for a in prompts[0].arguments] == [
        ("code", True),
        ("language", False),
    ]


async def test_a_prompt_is_filled_in_as_a_text_and_an_image_message_over_http(
    library: MCPClient,
) -> None:
    prompt = await library.get_prompt("review", {"code": "x = 1", "language": "Rust"})

    text, image = prompt.messages
    assert text.content == Content([TextBlock(text="Review this Rust code:\nx = 1")])
    png = base64.b64encode(IMAGE).decode()
    assert image.content == Content(
        [ImageBlock(source=Base64Source(data=png), media_type="image/png")]
    )
    few_shot = await library.get_prompt("few_shot")
    assert [message.role for message in few_shot.messages] == ["user", "assistant", "user"]


async def test_an_undeclared_argument_is_refused_before_any_request_over_http(
    library: MCPClient,
) -> None:
    before = await _gets(library)

    with pytest.raises(MCPUndeclaredArgumentError) as caught:
        await library.get_prompt("review", {"code": "x", "lang": "Go"})

    assert await _gets(library) == before
    assert caught.value.arguments == ("lang",)


async def test_the_servers_prompt_error_names_the_server_and_the_prompt_over_http(
    library: MCPClient,
) -> None:
    with pytest.raises(MCPRequestError) as caught:
        await library.get_prompt("fails")

    assert str(caught.value) == (
        "MCP server 'library' answered the request for prompt 'fails' with the error"
        " 'the prompt broke' (code -32602)"
    )


async def test_a_prompt_that_never_answers_times_out_and_the_session_goes_on_over_http(
    library: MCPClient,
) -> None:
    with pytest.raises(MCPTimeoutError) as caught:
        await library.get_prompt("hang")

    assert caught.value.what == "the request for prompt 'hang'"
    assert (await library.get_prompt("big", {"size": "3"})).text() == "xxx"


async def test_resources_and_templates_are_listed_across_every_page_over_http(
    library: MCPClient,
) -> None:
    resources = await library.list_resources()
    templates = await library.list_resource_templates()

    assert [resource.uri for resource in resources] == [
        "memo://note",
        "file:///pixel.png",
        "file:///report.pdf",
        "data://both",
        "pid://self",
    ]
    assert (resources[0].title, resources[0].size) == ("A note", 8)
    assert [t.uri_template for t in templates] == [
        "memo://{name}",
        "big://{size}",
        "file:///{path}",
    ]


async def test_text_and_blob_resources_read_as_text_images_and_documents_over_http(
    library: MCPClient,
) -> None:
    (note,) = await library.read_resource("memo://note")
    (pixel,) = await library.read_resource("file:///pixel.png")
    (report,) = await library.read_resource("file:///report.pdf")

    assert (note.uri, note.text) == ("memo://note", "remember")
    assert isinstance(pixel.block, ImageBlock) and pixel.data == IMAGE
    assert isinstance(report.block, CustomBlock)
    document = document_of(report.block.data)
    assert document is not None and document[1:] == ("application/pdf", "report.pdf")
    assert report.data == PDF


async def test_the_servers_read_error_names_the_server_and_the_uri_over_http(
    library: MCPClient,
) -> None:
    with pytest.raises(MCPRequestError) as caught:
        await library.read_resource("memo://missing")

    assert caught.value.code == NOT_FOUND
    assert caught.value.what == "the read of resource 'memo://missing'"


async def test_a_read_that_never_answers_times_out_and_the_session_goes_on_over_http(
    library: MCPClient,
) -> None:
    with pytest.raises(MCPTimeoutError):
        await library.read_resource("hang://")

    assert (await library.read_resource("big://2"))[0].text == "xx"


async def test_answers_over_the_size_cap_are_refused_and_the_session_goes_on_over_http(
    url: str,
) -> None:
    capped = MCPClient.http(url, token=TOKEN, name="library", max_response_bytes=CAP)
    async with capped as client:
        with pytest.raises(MCPResponseTooLargeError) as reading:
            await client.read_resource(f"big://{2 * CAP}")
        with pytest.raises(MCPResponseTooLargeError) as prompting:
            await client.get_prompt("big", {"size": str(2 * CAP)})
        (small,) = await client.read_resource("big://4")

    assert (reading.value.limit, prompting.value.limit) == (CAP, CAP)
    assert prompting.value.what == "the request for prompt 'big'"
    assert small.text == "xxxx"


async def test_a_client_without_the_token_gets_no_prompts_or_resources(url: str) -> None:
    stranger = MCPClient.http(url, token="not-the-token-0123456789", name="library")

    with pytest.raises(MCPConnectionError, match="cannot connect to MCP server 'library'"):
        await stranger.list_prompts()
    with pytest.raises(MCPConnectionError):
        await stranger.read_resource("memo://note")
    await stranger.close()


async def test_the_server_listens_on_loopback_only(url: str) -> None:
    assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
