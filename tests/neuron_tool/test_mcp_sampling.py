"""An MCP server asking, mid tool call, for the client's model to write something.

Against the `samples` test server over stdio (MCP 2026-07-28, the SDK's `Sample`
resolver) and server-everything (an older MCP, asking over its back channel):
what the handler answers is what the server gets; a request this client does
not run is refused before the handler sees it, and the handler's failures
reach the server as their class name only.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import shlex
from collections.abc import AsyncIterator

import mcp_types as types
import pytest
import pytest_asyncio

from neuron_tool.mcp import (
    MCPClient,
    MCPSamplingError,
    MCPTimeoutError,
    MCPToolError,
    SamplingAnswer,
    SamplingHandler,
    SamplingImage,
    SamplingMessage,
    SamplingRefused,
    SamplingRequest,
    mcp_tools,
)
from neuron_tool.mcp.sampling import MAX_MESSAGES, MAX_TEXT_CHARS, sampling_callback

from .mcp_servers.paths import everything_command, script, script_client
from .mcp_servers.samples import HAIKU_OF_RAIN, MAX_TOKENS, PIXEL, SYSTEM

pytestmark = pytest.mark.asyncio(loop_scope="module")

PNG = base64.b64decode(PIXEL)


class Sampling:
    """The handler of the module's one client: puts each request to the test's handler."""

    def __init__(self) -> None:
        self.handler: SamplingHandler | None = None

    async def __call__(self, request: SamplingRequest) -> SamplingAnswer:
        assert self.handler is not None
        return await self.handler(request)


SAMPLING = Sampling()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def poet() -> AsyncIterator[MCPClient]:
    async with script_client("samples", name="poet", sampling=SAMPLING) as client:
        yield client


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def without_handler() -> AsyncIterator[MCPClient]:
    async with script_client("samples", name="poet") as client:
        yield client


class Recording:
    """A handler that records the requests it gets and answers each with `answer`."""

    def __init__(self, answer: SamplingAnswer | None = None) -> None:
        self.asked: list[SamplingRequest] = []
        self.answer = answer or SamplingAnswer("Rain on the pond.", model="test-model")

    async def __call__(self, request: SamplingRequest) -> SamplingAnswer:
        self.asked.append(request)
        return self.answer


async def written(
    client: MCPClient, handler: SamplingHandler | None, case: str = "poem", size: int = 0
) -> object:
    """What the server's `write` tool got back from `client` sampling with `handler`."""
    SAMPLING.handler = handler
    return await client.call_tool("write", {"case": case, "size": size})


async def test_the_handler_gets_the_servers_request_and_the_server_gets_its_answer(
    poet: MCPClient,
) -> None:
    handler = Recording()

    got = await written(poet, handler)

    assert got == {
        "role": "assistant",
        "content": {"type": "text", "text": "Rain on the pond."},
        "model": "test-model",
        "stopReason": "endTurn",
    }
    (request,) = handler.asked
    assert request == SamplingRequest(
        server="poet",
        messages=(
            SamplingMessage("user", ("A haiku on rain, please.",)),
            SamplingMessage("assistant", (HAIKU_OF_RAIN,)),
            SamplingMessage("user", ("Now one on this picture.", SamplingImage(PNG, "image/png"))),
        ),
        max_tokens=MAX_TOKENS,  # as the server asked: capping is the handler's
        system_prompt=SYSTEM,
        temperature=0.5,
        stop_sequences=("###",),
        model_hints=("haiku",),
    )


async def test_an_image_answer_reaches_the_server_as_image_content(poet: MCPClient) -> None:
    handler = Recording(
        SamplingAnswer(SamplingImage(PNG, "image/png"), model="painter", stop_reason=None)
    )

    got = await written(poet, handler)

    assert got == {
        "role": "assistant",
        "content": {"type": "image", "data": PIXEL, "mimeType": "image/png"},
        "model": "painter",
    }


async def test_without_a_handler_a_servers_request_fails_the_call_saying_how_to_answer(
    without_handler: MCPClient,
) -> None:
    with pytest.raises(MCPSamplingError) as refused:
        await written(without_handler, None)

    assert refused.value.reason == "it has no sampling handler (MCPClient(sampling=...))"
    assert str(refused.value) == (
        "MCP server 'poet' asked this client's model to write something during the call to"
        " tool 'write', which this client refused: it has no sampling handler"
        " (MCPClient(sampling=...))"
    )


@pytest.mark.parametrize(
    ("case", "size", "reason"),
    [
        (
            "many",
            MAX_MESSAGES + 1,
            f"the request holds {MAX_MESSAGES + 1} messages; this client takes at most 64",
        ),
        (
            "long",
            MAX_TEXT_CHARS + 1,
            f"the request holds {MAX_TEXT_CHARS + 1} characters of text; this client takes"
            f" at most {MAX_TEXT_CHARS}",
        ),
        (
            "audio",
            0,
            "sampling content of type 'audio' is not supported by this client (text and image"
            " only)",
        ),
    ],
)
async def test_a_request_past_the_limits_or_with_unsupported_content_is_refused_unrun(
    poet: MCPClient, case: str, size: int, reason: str
) -> None:
    handler = Recording()

    with pytest.raises(MCPSamplingError) as refused:
        await written(poet, handler, case, size)

    assert refused.value.reason == reason
    assert handler.asked == []


@pytest.mark.parametrize(("case", "size"), [("many", MAX_MESSAGES), ("long", MAX_TEXT_CHARS)])
async def test_a_request_at_the_limits_is_run(poet: MCPClient, case: str, size: int) -> None:
    handler = Recording()

    await written(poet, handler, case, size)

    assert len(handler.asked) == 1


async def test_a_request_offering_tools_is_refused_as_this_client_runs_none(
    poet: MCPClient,
) -> None:
    handler = Recording()

    with pytest.raises(MCPSamplingError) as refused:
        await written(poet, handler, "tools")

    assert refused.value.reason == (
        "the server wants to offer tools to sampling, which this client does not run"
    )
    assert handler.asked == []


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"tools": [types.Tool(name="look", input_schema={"type": "object"})]},
            "this client offers no tools to sampling (no sampling.tools capability)",
        ),
        ({"max_tokens": 0}, "maxTokens must be a positive number, got 0"),
        ({"temperature": float("nan")}, "temperature must be a number from 0, got nan"),
        ({"messages": []}, "the request holds no messages"),
        (
            {"image": types.ImageContent(data="not base64!", mime_type="image/png")},
            "an image's data is not base64",
        ),
        (
            {
                "image": types.ImageContent(
                    data=base64.b64encode(b"MZ..").decode(), mime_type="image/png"
                )
            },
            "an image is none of the types this client takes (image/gif, image/jpeg,"
            " image/png, image/webp)",
        ),
    ],
)
async def test_a_hostile_servers_request_is_refused_before_the_handler(
    params: dict[str, object], message: str
) -> None:
    # The SDK's own servers do not send these; a hostile server may.
    handler = Recording()
    image = params.pop("image", None)
    content: list[types.SamplingMessageContentBlock] = [types.TextContent(text="hi")]
    if isinstance(image, types.ImageContent):
        content.append(image)
    fields: dict[str, object] = {
        "messages": [types.SamplingMessage(role="user", content=content)],
        "max_tokens": 10,
        **params,
    }
    request = types.CreateMessageRequestParams.model_validate(fields)

    got = await sampling_callback("poet", handler)(None, request)  # type: ignore[arg-type]

    assert isinstance(got, types.ErrorData)
    assert (got.code, got.message) == (types.INVALID_PARAMS, message)
    assert handler.asked == []


async def test_a_failing_handler_fails_the_call_naming_its_class_only_and_logs_the_rest(
    poet: MCPClient, caplog: pytest.LogCaptureFixture
) -> None:
    async def handler(request: SamplingRequest) -> SamplingAnswer:
        raise RuntimeError("the API key is sk-hunter2")

    with caplog.at_level(logging.ERROR, logger="neuron_tool.mcp.sampling"):
        with pytest.raises(MCPSamplingError) as refused:
            await written(poet, handler)

    assert refused.value.reason == "the client could not sample (RuntimeError)"
    assert "hunter2" not in str(refused.value)  # nor sent to the server
    assert "hunter2" in caplog.text  # here, for the operator


async def test_a_refusing_handler_tells_the_server_why(poet: MCPClient) -> None:
    async def handler(request: SamplingRequest) -> SamplingAnswer:
        raise SamplingRefused("the budget is spent")

    with pytest.raises(MCPSamplingError) as refused:
        await written(poet, handler)

    assert refused.value.reason == "the client refused to sample: the budget is spent"


async def test_a_handler_answering_what_is_no_sampling_answer_is_not_sent(
    poet: MCPClient, caplog: pytest.LogCaptureFixture
) -> None:
    async def handler(request: SamplingRequest) -> SamplingAnswer:
        return "just text"  # type: ignore[return-value]

    with caplog.at_level(logging.ERROR, logger="neuron_tool.mcp.sampling"):
        with pytest.raises(MCPSamplingError) as refused:
            await written(poet, handler)

    assert refused.value.reason == "the client's answer was not a sampling answer"
    assert "returned str, not a SamplingAnswer" in caplog.text


async def test_a_handler_slower_than_the_calls_timeout_fails_the_call_in_time() -> None:
    never = asyncio.Event()

    async def handler(request: SamplingRequest) -> SamplingAnswer:
        await never.wait()
        raise AssertionError("unreachable")

    async with script_client("samples", name="poet", sampling=handler, timeout=0.5) as client:
        with pytest.raises(MCPTimeoutError) as late:
            await client.call_tool("write", {"case": "poem"})

    assert late.value.what == "the call to tool 'write'"


async def test_a_third_party_servers_request_over_its_back_channel_gets_the_handlers_answer() -> (
    None
):
    # server-everything speaks an older MCP: it sends `sampling/createMessage` to the client
    # mid-call, and offers its sampling tool only to a client that declares it samples.
    handler = Recording(SamplingAnswer("Forty-two.", model="test-model"))
    command, *args = everything_command("stdio")
    async with MCPClient.stdio(command, args, name="everything", sampling=handler) as client:
        result = await client.call_tool(
            "trigger-sampling-request", {"prompt": "the answer", "maxTokens": 50}
        )
    async with MCPClient.stdio(command, args, name="everything") as client:
        offered = {tool.remote_name for tool in await client.list_tools()}

    assert isinstance(result, str) and '"text": "Forty-two."' in result
    (request,) = handler.asked
    assert (request.system_prompt, request.max_tokens, request.temperature) == (
        "You are a helpful test server.",
        50,
        0.7,
    )
    assert request.messages[0].text == "Resource trigger-sampling-request context: the answer"
    assert "trigger-sampling-request" not in offered


async def test_a_third_party_servers_tool_sees_the_refusal_over_its_back_channel() -> None:
    async def handler(request: SamplingRequest) -> SamplingAnswer:
        raise SamplingRefused("not today")

    command, *args = everything_command("stdio")
    async with MCPClient.stdio(command, args, name="everything", sampling=handler) as client:
        with pytest.raises(MCPToolError) as failed:
            await client.call_tool("trigger-sampling-request", {"prompt": "hi"})

    assert "the client refused to sample: not today" in failed.value.message


async def test_mcp_tools_gives_every_server_the_handler() -> None:
    handler = Recording()
    command = " ".join(shlex.quote(part) for part in script("samples"))

    async with mcp_tools(commands=[command], sampling=handler) as tools:
        (write,) = [tool for tool in tools if tool.name == "write"]
        result = await write.call({"case": "many", "size": 1})

    assert isinstance(result, dict) and result["model"] == "test-model"
    assert [request.messages for request in handler.asked] == [
        (SamplingMessage("user", ("more",)),)
    ]
