"""`MCPClient.complete`: a server's completions of a prompt's or a resource template's argument.

Against a real server over stdio and loopback HTTP (MCP 2026-07-28) and stdio
(2025-11-25); answers MCP forbids, and a server without the capability, against a
hand-written peer.
"""

from __future__ import annotations

import json
import logging
import os
import signal

import pytest

from neuron_tool.mcp import (
    MCPCapabilityError,
    MCPClient,
    MCPCompletion,
    MCPInvalidAnswerError,
    MCPPrompt,
    MCPResourceTemplate,
    MCPResponseTooLargeError,
    MCPTimeoutError,
    MCPUndeclaredArgumentError,
    MCPUnknownPromptError,
)

from .changes import TRANSPORTS, changing, counts
from .library_server import CAP
from .mcp_servers.noisy import BIG
from .mcp_servers.paths import script

GREET = MCPPrompt(server="changing", name="greet")
NOTES = MCPResourceTemplate(server="changing", uri_template="note://{name}", name="note")


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


def noisy(mode: str) -> MCPClient:
    command, *args = script("noisy")
    return MCPClient.stdio(command, [*args, mode], name=mode, timeout=10.0)


async def test_a_prompt_arguments_completions_are_the_servers_values_and_total(
    transport: str,
) -> None:
    async with changing(transport) as client:
        (listed,) = await client.list_prompts()
        completion = await client.complete(listed, "style", "f")
        by_hand = await client.complete(GREET, "style", "pl")
        asked = await counts(client)

    assert completion == MCPCompletion(values=("formal", "friendly"), total=4, has_more=True)
    assert by_hand == MCPCompletion(values=("plain",), total=1, has_more=False)
    # The prompt is looked up in the cached listing: one listing served all three.
    assert (asked["prompts/list"], asked["completion/complete"]) == (1, 2)


async def test_arguments_already_filled_in_reach_the_server(transport: str) -> None:
    async with changing(transport) as client:
        completion = await client.complete(GREET, "style", "", {"name": "Ada"})

    assert completion.values == ("ada",)


async def test_a_resource_templates_argument_is_completed(transport: str) -> None:
    async with changing(transport) as client:
        completion = await client.complete(NOTES, "name", "cur")

    assert completion == MCPCompletion(values=("current",), total=1, has_more=False)


async def test_a_prompt_the_server_does_not_list_is_refused_before_any_request() -> None:
    async with changing("stdio") as client:
        with pytest.raises(MCPUnknownPromptError) as caught:
            await client.complete(MCPPrompt(server="changing", name="gret"), "style", "f")
        asked = await counts(client)

    assert "completion/complete" not in asked
    assert caught.value.available == ("greet",)


async def test_an_argument_the_prompt_does_not_declare_is_refused_before_any_request() -> None:
    async with changing("stdio") as client:
        with pytest.raises(MCPUndeclaredArgumentError) as completing:
            await client.complete(GREET, "tone", "f")
        with pytest.raises(MCPUndeclaredArgumentError) as in_context:
            await client.complete(GREET, "style", "f", {"mood": "glad"})
        with pytest.raises(TypeError, match="completion arguments are strings; 'style' is a int"):
            await client.complete(GREET, "style", 3)  # type: ignore[arg-type]
        asked = await counts(client)

    assert "completion/complete" not in asked
    assert completing.value.arguments == ("tone",)
    assert in_context.value.arguments == ("mood",)


async def test_more_than_100_values_is_an_invalid_answer_and_the_session_goes_on() -> None:
    # A 2026-07-28 server's SDK refuses to send them; an earlier one's sends them.
    async with changing("legacy") as client:
        with pytest.raises(MCPInvalidAnswerError) as caught:
            await client.complete(GREET, "style", "many")
        assert (await client.complete(GREET, "style", "fu")).values == ("funny",)

    assert str(caught.value) == (
        "MCP server 'changing' answered the completion of argument 'style' of prompt 'greet'"
        " with an invalid answer: completion.values holds 101 values, more than the 100 MCP"
        " allows"
    )


async def test_a_total_below_the_values_sent_is_an_invalid_answer() -> None:
    async with changing("stdio") as client:
        with pytest.raises(MCPInvalidAnswerError) as caught:
            await client.complete(NOTES, "name", "short")

    assert caught.value.what == "the completion of argument 'name' of resource template" + (
        " 'note://{name}'"
    )
    assert caught.value.reason == "completion.total is 1, fewer than the 2 values it sent"


async def test_values_that_are_not_strings_are_an_invalid_answer_naming_them() -> None:
    template = MCPResourceTemplate(server="flood", uri_template="strings://{a}", name="strings")
    async with noisy("flood") as client:
        with pytest.raises(MCPInvalidAnswerError) as caught:
            await client.complete(template, "a", "")
        many = MCPResourceTemplate(server="flood", uri_template="many://{a}", name="many")
        with pytest.raises(MCPInvalidAnswerError, match="holds 101 values, more than the 100"):
            await client.complete(many, "a", "")

    assert caught.value.reason == (
        "completion.values.1: Input should be a valid string (got 5);"
        " completion.values.2: Input should be a valid string (got None)"
    )


async def test_a_server_without_the_completions_capability_is_refused_before_any_request() -> None:
    async with noisy("bare") as client:
        with pytest.raises(MCPCapabilityError) as caught:
            await client.complete(NOTES, "name", "cur")
        seen = await client.call_tool("seen", {})

    assert isinstance(seen, str)
    assert "completion/complete" not in json.loads(seen)
    assert caught.value.capability == "completions"
    assert str(caught.value) == (
        "MCP server 'bare' does not declare the 'completions' capability, which the completion"
        " of argument 'name' of resource template 'note://{name}' needs; nothing was sent"
    )


async def test_a_completion_that_never_answers_times_out_and_the_session_goes_on() -> None:
    hang = MCPResourceTemplate(server="flood", uri_template="hang://{a}", name="hang")
    command, *args = script("noisy")
    async with MCPClient.stdio(command, [*args, "flood"], name="flood", timeout=1.0) as client:
        with pytest.raises(MCPTimeoutError) as caught:
            await client.complete(hang, "a", "")
        assert await client.call_tool("anything", {}) == "anything"

    assert caught.value.what == "the completion of argument 'a' of resource template 'hang://{a}'"


async def test_a_completion_over_the_size_cap_is_refused_and_the_session_goes_on() -> None:
    big = MCPResourceTemplate(server="flood", uri_template="big://{a}", name="big")
    command, *args = script("noisy")
    capped = MCPClient.stdio(command, [*args, "flood"], name="flood", max_response_bytes=CAP)
    async with capped as client:
        with pytest.raises(MCPResponseTooLargeError) as caught:
            await client.complete(big, "a", "")
        assert await client.call_tool("anything", {}) == "anything"

    assert caught.value.limit == CAP
    assert caught.value.size is not None and caught.value.size > BIG


async def test_a_killed_server_is_restarted_for_the_next_completion(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with changing("stdio") as client:
        pid = await client.call_tool("pid", {})
        assert isinstance(pid, str)
        os.kill(int(pid), signal.SIGKILL)
        with caplog.at_level(logging.WARNING, logger="neuron_tool.mcp"):
            completion = await client.complete(GREET, "style", "fu")

    assert completion.values == ("funny",)
    assert any("restarting" in record.getMessage() for record in caplog.records)
