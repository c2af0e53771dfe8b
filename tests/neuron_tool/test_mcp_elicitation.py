"""An MCP server's questions in the middle of a tool call, put to the client's handler.

Against the `elicits` test server over stdio: what the handler answers is what
the server gets, checked against what it asked for; a server's bad question,
and the handler's failures, reach the server as errors and never crash the call.
"""

from __future__ import annotations

import json
import logging
import shlex
from collections.abc import AsyncIterator

import mcp_types as types
import pytest
import pytest_asyncio

from neuron_tool.mcp import (
    Elicitation,
    ElicitationAnswer,
    ElicitationHandler,
    MCPClient,
    MCPElicitationError,
    mcp_tools,
)
from neuron_tool.mcp.elicitation import elicitation_callback

from .mcp_servers.elicits import BOOKING
from .mcp_servers.paths import everything_command, script, script_client

pytestmark = pytest.mark.asyncio(loop_scope="module")


class Answering:
    """The handler of the module's one client: puts each question to the test's handler."""

    def __init__(self) -> None:
        self.handler: ElicitationHandler | None = None

    async def __call__(self, elicitation: Elicitation) -> ElicitationAnswer:
        assert self.handler is not None
        return await self.handler(elicitation)


ANSWERING = Answering()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def calendar() -> AsyncIterator[MCPClient]:
    async with script_client("elicits", name="calendar", elicitation=ANSWERING) as client:
        yield client


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def without_handler() -> AsyncIterator[MCPClient]:
    async with script_client("elicits", name="calendar") as client:
        yield client


async def said(client: MCPClient, tool: str, handler: ElicitationHandler | None = None) -> object:
    """What the server's `tool` got from `client` answering with `handler`, as it reports it."""
    ANSWERING.handler = handler
    result = await client.call_tool(tool, {})
    assert isinstance(result, str)
    return json.loads(result)


async def test_the_handler_sees_the_servers_question_and_the_server_gets_its_answer(
    calendar: MCPClient,
) -> None:
    asked: list[Elicitation] = []

    async def handler(elicitation: Elicitation) -> ElicitationAnswer:
        asked.append(elicitation)
        return ElicitationAnswer.accept({"confirm": True, "seats": 2})

    assert await said(calendar, "book", handler) == {
        "action": "accept",
        "content": {"confirm": True, "seats": 2},
    }
    (question,) = asked
    assert (question.server, question.message, question.url) == (
        "calendar",
        "Book 2 seats on the 14th?",
        None,
    )
    assert dict(question.schema) == BOOKING


@pytest.mark.parametrize("answer", [ElicitationAnswer.decline(), ElicitationAnswer.cancel()])
async def test_a_declined_or_cancelled_question_reaches_the_server_without_content(
    calendar: MCPClient,
    answer: ElicitationAnswer,
) -> None:
    async def handler(elicitation: Elicitation) -> ElicitationAnswer:
        return answer

    assert await said(calendar, "book", handler) == {"action": answer.action, "content": None}


async def test_an_answer_that_does_not_match_the_question_is_not_sent_and_fails_the_call(
    calendar: MCPClient,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def handler(elicitation: Elicitation) -> ElicitationAnswer:
        return ElicitationAnswer.accept({"confirm": True, "seats": 80})

    with caplog.at_level(logging.ERROR, logger="neuron_tool.mcp.elicitation"):
        with pytest.raises(MCPElicitationError) as refused:
            await said(calendar, "book", handler)

    assert str(refused.value) == (
        "MCP server 'calendar' asked a question during the call to tool 'book' that this "
        "client did not answer: the client's answer did not match the question"
    )
    assert "$.seats: 80 is greater than the maximum of 8" in caplog.text


async def test_a_failing_handler_fails_the_call_naming_its_class_only_and_logs_the_rest(
    calendar: MCPClient,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def handler(elicitation: Elicitation) -> ElicitationAnswer:
        raise RuntimeError("the calendar password is hunter2")

    with caplog.at_level(logging.ERROR, logger="neuron_tool.mcp.elicitation"):
        with pytest.raises(MCPElicitationError) as refused:
            await said(calendar, "book", handler)

    assert refused.value.reason == "the client could not answer (RuntimeError)"
    assert "hunter2" not in str(refused.value)  # nor sent to the server
    assert "hunter2" in caplog.text  # here, for the operator


async def test_a_question_whose_schema_is_no_json_schema_is_refused_before_the_handler() -> None:
    # The SDK's own servers will not send one; a hostile server may.
    asked: list[Elicitation] = []

    async def handler(elicitation: Elicitation) -> ElicitationAnswer:
        asked.append(elicitation)
        return ElicitationAnswer.accept({})

    answer = elicitation_callback("calendar", handler)
    question = types.ElicitRequestFormParams(message="Anything?", requested_schema={"type": 12})
    got = await answer(None, question)  # type: ignore[arg-type]

    assert isinstance(got, types.ErrorData) and got.message.startswith(
        "the requested schema is not a JSON Schema: 12 is not valid"
    )
    assert asked == []


async def test_a_url_question_names_the_url_and_takes_no_content(calendar: MCPClient) -> None:
    asked: list[Elicitation] = []

    async def handler(elicitation: Elicitation) -> ElicitationAnswer:
        asked.append(elicitation)
        return ElicitationAnswer.accept()

    assert await said(calendar, "sign_in", handler) == {"action": "accept", "content": None}
    assert [(q.message, q.url) for q in asked] == [
        ("Sign in to the calendar", "https://calendar.example/auth")
    ]


async def test_without_a_handler_a_servers_question_fails_the_call_saying_how_to_answer(
    without_handler: MCPClient,
) -> None:
    with pytest.raises(MCPElicitationError) as refused:
        await said(without_handler, "book")

    assert refused.value.reason == "it has no elicitation handler (MCPClient(elicitation=...))"


async def test_a_third_party_servers_question_over_its_back_channel_gets_the_handlers_answer() -> (
    None
):
    # server-everything speaks an older MCP: it sends `elicitation/create` to the client
    # mid-call, and offers its elicitation tool only to a client that declares it answers.
    asked: list[Elicitation] = []

    async def handler(elicitation: Elicitation) -> ElicitationAnswer:
        asked.append(elicitation)
        return ElicitationAnswer.accept({"name": "Ada Lovelace", "check": True, "integer": 7})

    command, *args = everything_command("stdio")
    async with MCPClient.stdio(command, args, name="everything", elicitation=handler) as client:
        result = await client.call_tool("trigger-elicitation-request", {})
    async with MCPClient.stdio(command, args, name="everything") as client:
        offered = {tool.remote_name for tool in await client.list_tools()}

    assert isinstance(result, str)
    assert "- Name: Ada Lovelace\n- Agreed to terms: true\n- Favorite Integer: 7" in result
    (question,) = asked
    assert question.message == "Please provide inputs for the following fields:"
    assert question.schema["required"] == ["name"]
    assert "trigger-elicitation-request" not in offered


async def test_mcp_tools_gives_every_server_the_handler() -> None:
    async def handler(elicitation: Elicitation) -> ElicitationAnswer:
        return ElicitationAnswer.accept({"confirm": False})

    command = " ".join(shlex.quote(part) for part in script("elicits"))
    async with mcp_tools(commands=[command], elicitation=handler) as tools:
        (book,) = [tool for tool in tools if tool.name == "book"]
        result = await book.call({})

    assert json.loads(str(result)) == {"action": "accept", "content": {"confirm": False}}
