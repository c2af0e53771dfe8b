"""`MCPClient`'s resources against the library test server over stdio: listing resources and
templates, reading text and blobs, the server's errors and hostile answers, deadlines, the
size cap, restarts."""

from __future__ import annotations

import logging
import os
import signal

import pytest
import pytest_asyncio

from layer0 import CustomBlock, ImageBlock, TextBlock
from neuron_tool import document_of
from neuron_tool.mcp import (
    MCPClient,
    MCPInvalidAnswerError,
    MCPRequestError,
    MCPResource,
    MCPResourceContents,
    MCPResourceTemplate,
    MCPResponseTooLargeError,
    MCPTimeoutError,
)

from .library_server import CAP, hostile, library_client
from .mcp_servers.library import IMAGE, NOT_FOUND, PDF
from .mcp_servers.paths import script_client

pytestmark = pytest.mark.asyncio(loop_scope="module")
library = pytest_asyncio.fixture(loop_scope="module", scope="module", name="library")(
    library_client
)


async def test_resources_are_listed_across_every_page(library: MCPClient) -> None:
    resources = await library.list_resources()

    # Two a page: five resources take three pages.
    assert [resource.uri for resource in resources] == [
        "memo://note",
        "file:///pixel.png",
        "file:///report.pdf",
        "data://both",
        "pid://self",
    ]
    assert resources[0] == MCPResource(
        server="library",
        uri="memo://note",
        name="note",
        title="A note",
        mime_type="text/plain",
        size=8,
    )
    assert resources[2].description == "The Q3 report."


async def test_resource_templates_are_listed_across_every_page(library: MCPClient) -> None:
    templates = await library.list_resource_templates()

    # Two a page: three templates take two pages.
    assert [template.uri_template for template in templates] == [
        "memo://{name}",
        "big://{size}",
        "file:///{path}",
    ]
    assert templates[1] == MCPResourceTemplate(
        server="library",
        uri_template="big://{size}",
        name="big",
        title="Big",
        description="SIZE characters.",
    )
    assert templates[0].mime_type == "text/plain"


async def test_a_text_resource_reads_as_a_text_block_naming_its_uri(library: MCPClient) -> None:
    (note,) = await library.read_resource("memo://note")

    assert note == MCPResourceContents(
        uri="memo://note", mime_type="text/plain", block=TextBlock(text="remember")
    )
    assert (note.text, note.data) == ("remember", None)


async def test_a_png_blob_reads_as_an_image_and_a_pdf_blob_as_a_document(
    library: MCPClient,
) -> None:
    (pixel,) = await library.read_resource("file:///pixel.png")
    (report,) = await library.read_resource("file:///report.pdf")

    assert isinstance(pixel.block, ImageBlock) and pixel.block.media_type == "image/png"
    assert (pixel.uri, pixel.data, pixel.text) == ("file:///pixel.png", IMAGE, None)
    assert isinstance(report.block, CustomBlock)
    document = document_of(report.block.data)
    assert document is not None and document[1:] == ("application/pdf", "report.pdf")
    assert report.data == PDF


async def test_each_of_several_contents_names_its_own_uri_and_an_untyped_blob_is_kept(
    library: MCPClient,
) -> None:
    text, blob = await library.read_resource("data://both")

    assert (text.uri, text.text) == ("data://both/text", "hello")
    assert (blob.uri, blob.mime_type, blob.data) == ("data://both/bytes", None, b"\x00\x01")
    assert isinstance(blob.block, CustomBlock)
    document = document_of(blob.block.data)
    assert document is not None and document[1] == "application/octet-stream"


async def test_a_uri_goes_to_the_server_as_given_and_is_never_fetched_here(
    library: MCPClient,
) -> None:
    # The server knows no such resource and says so, echoing the uri it received.
    for uri in ("https://example.com/report.pdf", "memo://a b/ü?x=1#frag"):
        with pytest.raises(MCPRequestError) as caught:
            await library.read_resource(uri)
        assert caught.value.message == f"Resource not found: {uri}"


async def test_the_servers_error_names_the_server_and_the_uri(library: MCPClient) -> None:
    with pytest.raises(MCPRequestError) as caught:
        await library.read_resource("memo://missing")

    assert caught.value.code == NOT_FOUND
    assert str(caught.value) == (
        "MCP server 'library' answered the read of resource 'memo://missing' with the error"
        f" 'Resource not found: memo://missing' (code {NOT_FOUND})"
    )


async def test_a_read_that_never_answers_times_out_and_the_session_goes_on(
    library: MCPClient,
) -> None:
    with pytest.raises(MCPTimeoutError) as caught:
        await library.read_resource("hang://")

    assert caught.value.what == "the read of resource 'hang://'"
    assert (await library.read_resource("big://2"))[0].text == "xx"


async def test_a_resource_over_the_size_cap_is_refused_and_the_session_goes_on() -> None:
    async with script_client("library", name="library", max_response_bytes=CAP) as client:
        with pytest.raises(MCPResponseTooLargeError) as caught:
            await client.read_resource(f"big://{2 * CAP}")
        (small,) = await client.read_resource("big://4")

    assert caught.value.what == f"the read of resource 'big://{2 * CAP}'"
    assert caught.value.limit == CAP
    assert small.text == "xxxx"


async def test_a_killed_server_is_restarted_for_the_next_listing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with script_client("library", name="library") as client:
        (first,) = await client.read_resource("pid://self")
        assert first.text is not None
        os.kill(int(first.text), signal.SIGKILL)
        with caplog.at_level(logging.WARNING, logger="neuron_tool.mcp"):
            templates = await client.list_resource_templates()
        (second,) = await client.read_resource("pid://self")

    assert len(templates) == 3
    assert second.text != first.text
    restarts = [r.getMessage() for r in caplog.records if "restarting" in r.getMessage()]
    assert len(restarts) == 1 and "'library'" in restarts[0]


async def test_a_server_without_resources_lists_none() -> None:
    async with script_client("toolbox", name="toolbox") as client:
        assert await client.list_resources() == []
        assert await client.list_resource_templates() == []


async def test_a_blob_whose_base64_does_not_decode_is_an_invalid_answer_naming_its_uri() -> None:
    async with hostile("shapes") as client:
        with pytest.raises(MCPInvalidAnswerError) as caught:
            await client.read_resource("bad://blob")

    assert str(caught.value) == (
        "MCP server 'hostile' answered the read of resource 'bad://blob' with an invalid"
        " answer: the base64 blob of 'bad://blob' does not decode"
    )


async def test_contents_of_the_wrong_types_are_an_invalid_answer_naming_them() -> None:
    async with hostile("shapes") as client:
        with pytest.raises(MCPInvalidAnswerError) as caught:
            await client.read_resource("bad://types")

    assert caught.value.what == "the read of resource 'bad://types'"
    assert caught.value.reason.startswith(
        "contents.0.TextResourceContents.text: Input should be a valid string (got ['a list'])"
    )
    assert caught.value.reason.endswith("; and 1 more")


async def test_a_listed_resource_without_a_name_is_an_invalid_answer() -> None:
    async with hostile("shapes") as client:
        with pytest.raises(MCPInvalidAnswerError) as caught:
            await client.list_resources()

    assert caught.value.reason == "resources.0.name: Field required (got {'uri': 'bad://nameless'})"


async def test_a_cursor_sent_twice_ends_the_listing_as_an_invalid_answer() -> None:
    async with hostile("shapes") as client:
        with pytest.raises(MCPInvalidAnswerError) as caught:
            await client.list_resource_templates()

    assert str(caught.value) == (
        "MCP server 'hostile' answered resources/templates/list with an invalid answer:"
        " the cursor 'again' came twice"
    )
