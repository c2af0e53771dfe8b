"""`MCPClient`'s prompts against the library test server over stdio: listing, filling in,
refusals before sending, the server's errors and hostile answers, deadlines, the size cap,
restarts."""

from __future__ import annotations

import base64
import logging
import os
import signal

import pytest
import pytest_asyncio

import neuron_tool.mcp.client as client_module
from layer0 import Base64Source, Content, ImageBlock, TextBlock, TurnInput
from neuron_tool import MCPBridgeError, document_block
from neuron_tool.mcp import (
    MCPClient,
    MCPInvalidAnswerError,
    MCPMissingArgumentError,
    MCPPrompt,
    MCPPromptArgument,
    MCPPromptArgumentError,
    MCPRequestError,
    MCPResponseTooLargeError,
    MCPTimeoutError,
    MCPUndeclaredArgumentError,
    MCPUnknownPromptError,
)

from .library_server import CAP, hostile, library_client
from .mcp_servers.library import AUDIO, IMAGE, PDF
from .mcp_servers.paths import script_client

pytestmark = pytest.mark.asyncio(loop_scope="module")
library = pytest_asyncio.fixture(loop_scope="module", scope="module", name="library")(
    library_client
)


async def _gets(client: MCPClient) -> int:
    """How many prompts/get requests the library server has answered."""
    (counted,) = await client.read_resource("count://gets")
    assert counted.text is not None
    return int(counted.text)


async def test_prompts_are_listed_across_every_page_with_their_arguments(
    library: MCPClient,
) -> None:
    prompts = await library.list_prompts()

    # Two a page: six prompts take three pages.
    assert [prompt.name for prompt in prompts] == [
        "review",
        "few_shot",
        "attachments",
        "fails",
        "hang",
        "big",
    ]
    assert prompts[0] == MCPPrompt(
        server="library",
        name="review",
        title="Code review",
        description="Review a piece of code.",
        arguments=(
            MCPPromptArgument("code", "The code.", required=True),
            MCPPromptArgument("language", "Its language.", required=False),
        ),
    )
    assert prompts[1].arguments == ()


async def test_a_prompt_is_filled_in_with_its_arguments_as_a_text_and_an_image_message(
    library: MCPClient,
) -> None:
    prompt = await library.get_prompt("review", {"code": "x = 1", "language": "Rust"})

    assert (prompt.server, prompt.prompt, prompt.description) == ("library", "review", "A review.")
    text, image = prompt.messages
    assert (text.role, image.role) == ("user", "user")
    assert text.content == Content([TextBlock(text="Review this Rust code:\nx = 1")])
    png = base64.b64encode(IMAGE).decode()
    assert image.content == Content(
        [ImageBlock(source=Base64Source(data=png), media_type="image/png")]
    )
    assert prompt.text() == "Review this Rust code:\nx = 1\n\n[image: image/png, 48 bytes]"


async def test_a_user_prompt_is_one_turn_input_message_holding_every_block(
    library: MCPClient,
) -> None:
    prompt = await library.get_prompt("review", {"code": "pass"})

    turn_input = TurnInput(message=prompt.content(), trigger="user")

    text, image = turn_input.message.blocks
    assert text == TextBlock(text="Review this Python code:\npass")
    assert isinstance(image, ImageBlock) and image.media_type == "image/png"


async def test_assistant_messages_keep_their_role_and_are_refused_as_one_user_message(
    library: MCPClient,
) -> None:
    prompt = await library.get_prompt("few_shot")

    assert [(m.role, m.text) for m in prompt.messages] == [
        ("user", "2+2?"),
        ("assistant", "4"),
        ("user", "3+3?"),
    ]
    assert prompt.text() == "2+2?\n\n4\n\n3+3?"
    with pytest.raises(ValueError, match=r"message 2 of prompt 'few_shot'.* is the assistant's"):
        prompt.content()


async def test_embedded_resources_audio_and_links_convert_as_a_tool_results_content_does(
    library: MCPClient,
) -> None:
    prompt = await library.get_prompt("attachments")

    assert [message.content.blocks[0] for message in prompt.messages] == [
        TextBlock(text="[resource: memo://note (text/plain)]\nremember"),
        document_block(PDF, media_type="application/pdf", name="report.pdf"),
        document_block(AUDIO, media_type="audio/wav"),
        TextBlock(text="[resource: https://example.com/ (text/html)]"),
    ]
    assert prompt.messages[1].text == (
        f"[resource: file:///report.pdf (application/pdf), {len(PDF)} bytes]"
    )


async def test_an_undeclared_argument_is_refused_before_any_request_naming_it(
    library: MCPClient,
) -> None:
    before = await _gets(library)

    with pytest.raises(MCPUndeclaredArgumentError) as caught:
        await library.get_prompt("review", {"code": "x", "lang": "py", "tone": "kind"})

    assert await _gets(library) == before
    error = caught.value
    assert isinstance(error, MCPPromptArgumentError) and isinstance(error, MCPBridgeError)
    assert (error.server, error.prompt, error.arguments) == ("library", "review", ("lang", "tone"))
    assert error.declared == ("code", "language")
    assert str(error) == (
        "prompt 'review' of MCP server 'library' does not declare the arguments 'lang', 'tone'"
        " (it declares 'code', 'language'); nothing was sent"
    )


async def test_a_missing_required_argument_is_refused_before_any_request_naming_it(
    library: MCPClient,
) -> None:
    before = await _gets(library)

    with pytest.raises(MCPMissingArgumentError) as caught:
        await library.get_prompt("review", {"language": "Go"})

    assert await _gets(library) == before
    assert caught.value.arguments == ("code",)
    assert str(caught.value) == (
        "prompt 'review' of MCP server 'library' requires the argument 'code', missing here;"
        " nothing was sent"
    )


async def test_an_argument_that_is_not_a_string_is_refused_before_any_request(
    library: MCPClient,
) -> None:
    before = await _gets(library)

    with pytest.raises(TypeError, match="prompt arguments are strings; 'code' is a int"):
        await library.get_prompt("review", {"code": 3})  # type: ignore[dict-item]

    assert await _gets(library) == before


async def test_a_prompt_the_server_does_not_list_is_refused_naming_those_it_lists(
    library: MCPClient,
) -> None:
    before = await _gets(library)

    with pytest.raises(MCPUnknownPromptError) as caught:
        await library.get_prompt("revue")

    assert await _gets(library) == before
    assert caught.value.prompt == "revue"
    assert caught.value.available[:2] == ("review", "few_shot")
    assert "MCP server 'library' has no prompt 'revue' (it lists 'review', 'few_shot'" in str(
        caught.value
    )


async def test_a_server_without_prompts_lists_none_and_is_asked_for_none() -> None:
    async with script_client("toolbox", name="toolbox") as client:
        assert await client.list_prompts() == []
        with pytest.raises(MCPUnknownPromptError, match=r"no prompt 'echo' \(it lists none\)"):
            await client.get_prompt("echo")


async def test_the_servers_error_names_the_server_and_the_prompt(library: MCPClient) -> None:
    with pytest.raises(MCPRequestError) as caught:
        await library.get_prompt("fails")

    assert (caught.value.code, caught.value.message) == (-32602, "the prompt broke")
    assert str(caught.value) == (
        "MCP server 'library' answered the request for prompt 'fails' with the error"
        " 'the prompt broke' (code -32602)"
    )


async def test_a_prompt_that_never_answers_times_out_and_the_session_goes_on(
    library: MCPClient,
) -> None:
    with pytest.raises(MCPTimeoutError) as caught:
        await library.get_prompt("hang")

    assert caught.value.what == "the request for prompt 'hang'"
    assert "MCP server 'library' did not answer the request for prompt 'hang' within 1 s" in str(
        caught.value
    )
    assert (await library.get_prompt("few_shot")).messages[0].text == "2+2?"


async def test_a_prompt_over_the_size_cap_is_refused_and_the_session_goes_on() -> None:
    async with script_client("library", name="library", max_response_bytes=CAP) as client:
        with pytest.raises(MCPResponseTooLargeError) as caught:
            await client.get_prompt("big", {"size": str(2 * CAP)})
        small = await client.get_prompt("big", {"size": "3"})

    assert caught.value.what == "the request for prompt 'big'"
    assert caught.value.size is not None and caught.value.size > 2 * CAP
    assert small.text() == "xxx"


async def test_a_killed_server_is_restarted_for_the_next_prompt_request(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with script_client("library", name="library") as client:
        (first,) = await client.read_resource("pid://self")
        assert first.text is not None
        os.kill(int(first.text), signal.SIGKILL)
        with caplog.at_level(logging.WARNING, logger="neuron_tool.mcp"):
            prompt = await client.get_prompt("review", {"code": "again"})
        (second,) = await client.read_resource("pid://self")

    assert prompt.messages[0].text == "Review this Python code:\nagain"
    assert second.text != first.text
    restarts = [r.getMessage() for r in caplog.records if "restarting" in r.getMessage()]
    assert len(restarts) == 1 and "'library'" in restarts[0]


async def test_a_role_other_than_user_or_assistant_is_an_invalid_answer_naming_it() -> None:
    async with hostile("shapes") as client:
        with pytest.raises(MCPInvalidAnswerError) as caught:
            await client.get_prompt("system_role")

    assert caught.value.what == "the request for prompt 'system_role'"
    assert caught.value.reason == (
        "messages.0.role: Input should be 'assistant' or 'user' (got 'system')"
    )


async def test_messages_of_the_wrong_type_are_an_invalid_answer_naming_them() -> None:
    async with hostile("shapes") as client:
        with pytest.raises(MCPInvalidAnswerError) as caught:
            await client.get_prompt("not_a_list")

    assert str(caught.value) == (
        "MCP server 'hostile' answered the request for prompt 'not_a_list' with an invalid"
        " answer: messages: Input should be a valid list (got 'hello')"
    )


async def test_an_image_whose_base64_does_not_decode_is_an_invalid_answer_naming_it() -> None:
    async with hostile("shapes") as client:
        with pytest.raises(MCPInvalidAnswerError) as caught:
            await client.get_prompt("bad_image")

    assert caught.value.reason == "message 1: the base64 data of its image does not decode"


async def test_a_listing_of_endless_pages_stops_at_the_bound_tools_listings_share(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(client_module, "_MAX_PAGES", 5)
    async with hostile("endless") as client:
        with pytest.raises(MCPInvalidAnswerError) as caught:
            await client.list_prompts()

    assert str(caught.value) == (
        "MCP server 'hostile' answered prompts/list with an invalid answer: more than 5 pages"
    )
