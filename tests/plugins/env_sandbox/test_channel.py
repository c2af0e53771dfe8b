"""What crosses between parent and child: provider calls, errors, and reads of one session only."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from decimal import Decimal
from typing import Any

import pytest
from moneyed import Money
from pydantic import JsonValue

from layer0 import (
    Base64Source,
    CredentialRef,
    EnvironmentSpec,
    EnvVarInjection,
    NonRetryableError,
    RetryableError,
    SessionScope,
    TurnInput,
    UrlSource,
)
from layer0.testing import InMemoryStore
from neuron_env_sandbox import ProcessEnvironment, StaticCredentials
from neuron_env_sandbox._channel import MAX_LINE, ChannelError, write_message
from neuron_env_sandbox._child import _Parent, _ParentError
from neuron_env_sandbox._supervisor import _Server
from neuron_env_sandbox._wire import (
    WireError,
    decode_error,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
)
from neuron_tool import ToolSchema
from neuron_turn import (
    CodeExecution,
    DocumentPart,
    HostedToolCall,
    ImagePart,
    OutputSchema,
    ProviderAuthenticationError,
    ProviderMessage,
    ProviderRequest,
    ProviderResponse,
    RateLimitError,
    RawPart,
    Sampling,
    TextPart,
    ThinkingPart,
    TokenUsage,
    ToolChoice,
    ToolResultPart,
    ToolUsePart,
    UnsupportedStrictToolsError,
    UserLocation,
    WebFetch,
    WebSearch,
)
from neuron_turn.loop.provider import MAX_IMAGE_BASE64
from neuron_turn.testing import FunctionProvider, text_response

from ._helpers import RECIPE

FILES = (
    ImagePart(Base64Source(data="iVBORw0K"), "image/png"),
    DocumentPart(UrlSource(url="https://example.com/q3.pdf"), "application/pdf", "q3.pdf"),
)
"""The files a tool returned with a result."""


@pytest.mark.parametrize("sampling", [{"top_p": 2}, {"temperature": 1}, ["top_p"], "x"])
def test_a_childs_request_with_settings_that_are_not_sampling_is_a_wire_error(
    sampling: object,
) -> None:
    data = _through_json(encode_request(ProviderRequest(model="m", messages=[])))
    with pytest.raises(WireError, match="not a provider request"):
        decode_request({**data, "sampling": sampling})


def test_requests_and_responses_survive_the_json_round_trip() -> None:
    parts = [
        TextPart("hi"),
        ImagePart(source=UrlSource(url="https://example.com/a.png"), media_type="image/png"),
        DocumentPart(Base64Source(data="JVBERi0x"), "application/pdf", "report.pdf"),
        ToolUsePart(id="t1", name="add", input={"a": 1}),
        ToolResultPart(tool_use_id="t1", content="2", is_error=True),
        ToolResultPart("t2", "shot", files=FILES),
        ThinkingPart(thinking="hmm", signature="sig"),
        RawPart(provider="anthropic", data={"type": "redacted_thinking"}),
    ]
    request = ProviderRequest(
        model="m",
        messages=[ProviderMessage(role="user", content=parts)],
        tools=[ToolSchema(name="add", description="Add.", input_schema={"type": "object"})],
        max_tokens=10,
        temperature=0.5,
        system="be brief",
        extra={"metadata": {"trace": "x"}},
        sampling=Sampling(top_k=3, stop_sequences=("END",), seed=0, frequency_penalty=-1.5),
    )
    assert decode_request(_through_json(encode_request(request))) == request
    response = ProviderResponse(
        content=parts,
        stop_reason="tool_use",
        usage=TokenUsage(input_tokens=3, output_tokens=4, cache_read_tokens=1),
        model="m-1",
        cost=Money(Decimal("0.000123"), "USD"),
        truncated=False,
        hosted_calls=(HostedToolCall("web_search", {"query": "q"}), HostedToolCall("web_fetch")),
        unpriced_web_searches=2,
        unpriced_images=1,
        unpriced_code_executions=3,
    )
    assert decode_response(_through_json(encode_response(response))) == response


@pytest.mark.parametrize(
    "key", ["unpriced_web_searches", "unpriced_images", "unpriced_code_executions"]
)
@pytest.mark.parametrize("count", [-1, "2", True, 1.0])
def test_a_response_whose_unpriced_fee_count_is_not_a_count_is_refused(
    count: object, key: str
) -> None:
    data = encode_response(ProviderResponse(content=[TextPart("hi")], stop_reason="end_turn"))
    data[key] = count  # type: ignore[assignment]
    with pytest.raises(WireError, match=f"{key} must be a count"):
        decode_response(data)


SEARCH = WebSearch(
    max_uses=2, allowed_domains=["docs.python.org"], user_location=UserLocation(country="NO")
)
"""The hosted tool a recipe grants in these tests, with every limit set."""


def request_with(*hosted: WebSearch | WebFetch | CodeExecution) -> ProviderRequest:
    """A model call offering `hosted` tools."""
    return ProviderRequest(
        model="m",
        messages=[ProviderMessage(role="user", content=[TextPart("hi")])],
        tools=[],
        hosted_tools=hosted,
    )


def test_a_requests_hosted_tools_cross_the_channel_with_their_limits() -> None:
    request = request_with(SEARCH, WebFetch(blocked_domains=["evil.example"]), CodeExecution())
    encoded = _through_json(encode_request(request))
    assert encoded["hosted_tools"][0] == {
        "name": "web_search",
        "max_uses": 2,
        "allowed_domains": ["docs.python.org"],
        "user_location": {"country": "NO"},
    }
    assert decode_request(encoded) == request


@pytest.mark.parametrize(
    ("hosted", "named"),
    [
        ({"name": "shell"}, "unknown hosted tool 'shell'"),
        ({"name": "web_search", "max_uses": 0}, "max_uses"),
        ({"name": "web_fetch", "user_location": {"country": "NO"}}, "no field 'user_location'"),
        ({"name": "web_search", "allowed_domains": "docs.python.org"}, "allowed_domains"),
        ({"name": "web_search", "user_location": {"planet": "Mars"}}, "user_location"),
        ("web_search", "an object with a name"),
    ],
)
def test_a_malformed_hosted_tool_from_the_child_is_a_wire_error_naming_it(
    hosted: JsonValue, named: str
) -> None:
    encoded = encode_request(request_with())
    encoded["hosted_tools"] = [hosted]
    with pytest.raises(WireError, match=named):
        decode_request(encoded)


async def test_the_parent_makes_no_model_call_offering_hosted_tools_beyond_the_recipes() -> None:
    calls: list[ProviderRequest] = []

    def answer(request: ProviderRequest) -> ProviderResponse:
        calls.append(request)
        return text_response("ok")

    server = _Server(FunctionProvider(answer), None, None, frozenset({SEARCH}))
    wider = WebSearch(max_uses=50, allowed_domains=["docs.python.org"])
    for hosted in (wider, CodeExecution(), WebSearch()):
        params = _through_json(encode_request(request_with(hosted)))
        with pytest.raises(PermissionError, match=f"hosted tool\\(s\\) {hosted.name} beyond"):
            await server._call("complete", params)
    assert calls == []
    await server._call("complete", _through_json(encode_request(request_with(SEARCH))))
    await server._call("complete", _through_json(encode_request(request_with())))
    assert [call.hosted_tools for call in calls] == [(SEARCH,), ()]


async def test_the_child_may_read_only_its_inputs_session() -> None:
    store = InMemoryStore()
    await store.write(SessionScope(id="mine"), "messages", ["mine"])
    await store.write(SessionScope(id="other"), "messages", ["other"])
    server = _Server(FunctionProvider(lambda request: None), store, "mine")  # type: ignore[arg-type, return-value]
    mine = await server._call("read", {"scope": {"session": "mine"}, "key": "messages"})
    assert mine == ["mine"]
    with pytest.raises(PermissionError, match="only the state of its input's session"):
        await server._call("read", {"scope": {"session": "other"}, "key": "messages"})
    with pytest.raises(PermissionError):
        await server._call("list", {"scope": "global", "prefix": ""})


async def test_a_retryable_provider_error_in_the_parent_is_retryable_at_the_caller() -> None:
    def limited(request: ProviderRequest) -> ProviderResponse:
        raise RateLimitError("slow down", retry_after=7.0)

    environment = ProcessEnvironment(
        RECIPE.model_copy(update={"tools": ()}), provider=FunctionProvider(limited)
    )
    with pytest.raises(RetryableError, match="slow down") as caught:
        await environment.run(TurnInput(message="go", trigger="user"), EnvironmentSpec())
    assert caught.value.retry_after == 7.0


async def test_a_credential_in_an_error_from_the_child_is_blanked() -> None:
    def rejects(request: ProviderRequest) -> ProviderResponse:
        raise ProviderAuthenticationError("the API rejected token s3cr3t-value")

    spec = EnvironmentSpec(
        credentials=[CredentialRef(name="k", injection=EnvVarInjection(var_name="TOKEN"))]
    )
    environment = ProcessEnvironment(
        RECIPE.model_copy(update={"tools": ()}),
        provider=FunctionProvider(rejects),
        credentials=StaticCredentials({"k": "s3cr3t-value"}),
    )
    with pytest.raises(NonRetryableError, match=r"rejected token \[REDACTED\]") as caught:
        await environment.run(TurnInput(message="go", trigger="user"), spec)
    assert "s3cr3t" not in str(caught.value)


def test_a_partial_turn_that_does_not_read_is_left_out_and_noted() -> None:
    body = {"type": "RetryableError", "message": "429", "retry_after": 1.0}
    error = decode_error({**body, "partial": {"output": {"message": 7}}}, fallback=RuntimeError)
    assert isinstance(error, RetryableError) and error.partial is None
    (note,) = error.__notes__
    assert note.startswith("the partial turn the child sent does not read: ")


def _through_json(data: dict[str, JsonValue]) -> Any:
    """`data` as the other end reads it: written as JSON text and parsed."""
    return json.loads(json.dumps(data))


def _request_with_file(file: object) -> Any:
    """A request's JSON, as read from the channel, whose one result carries `file` as its file."""
    result = ToolResultPart("t1", "shot", files=FILES)
    request = _through_json(
        encode_request(ProviderRequest("m", [ProviderMessage("user", [result])]))
    )
    request["messages"][0]["content"][0]["files"] = [file]
    return request


@pytest.mark.parametrize(
    ("file", "problem"),
    [
        ("iVBORw0K", "is a str, not an image or document"),
        (
            {"type": "TextPart", "text": "hi"},
            "is of type 'TextPart', not ImagePart or DocumentPart",
        ),
        (
            {"type": "ImagePart", "source": {"type": "base64", "data": "QUJD"}},
            "has no media_type string",
        ),
        (
            {"type": "ImagePart", "source": {"type": "file", "data": "QUJD"}, "media_type": "x/y"},
            "has a source that does not read",
        ),
        (
            {
                "type": "DocumentPart",
                "source": {"type": "base64", "data": "QUJD"},
                "media_type": "application/pdf",
                "name": 7,
            },
            "has a name that is not a string",
        ),
        (
            {
                "type": "ImagePart",
                "source": {"type": "base64", "data": "QUJD"},
                "media_type": "image/png",
                "name": "a.png",
            },
            "has unknown fields ['name']",
        ),
    ],
)
def test_a_malformed_file_from_the_child_is_a_wire_error_naming_it(
    file: object, problem: str
) -> None:
    with pytest.raises(WireError) as caught:
        decode_request(_request_with_file(file))
    assert f"file 0 of the result of call 't1' {problem}" in str(caught.value)
    assert "QUJD" not in str(caught.value)  # the file's data is never quoted


def test_files_that_are_not_a_list_are_a_wire_error() -> None:
    request = _request_with_file(None)
    request["messages"][0]["content"][0]["files"] = "QUJD"
    with pytest.raises(WireError, match="the files of the result of call 't1' are not a list"):
        decode_request(request)


async def test_the_parent_makes_no_model_call_with_another_thinking_setting_than_the_recipes() -> (
    None
):
    calls: list[ProviderRequest] = []

    def answer(request: ProviderRequest) -> ProviderResponse:
        calls.append(request)
        return text_response("ok")

    server = _Server(FunctionProvider(answer), None, None, frozenset(), "low")
    for asked in ("xhigh", True, None):
        params = _through_json(encode_request(replace(request_with(), thinking=asked)))
        with pytest.raises(PermissionError, match=f"thinking={asked!r}, not its recipe's 'low'"):
            await server._call("complete", params)
    assert calls == []
    await server._call(
        "complete", _through_json(encode_request(replace(request_with(), thinking="low")))
    )
    assert [call.thinking for call in calls] == ["low"]


async def test_the_parent_makes_no_model_call_offering_a_strict_tool_its_provider_cannot_hold() -> (
    None
):
    calls: list[ProviderRequest] = []

    def answer(request: ProviderRequest) -> ProviderResponse:
        calls.append(request)
        return text_response("ok")

    strict = ToolSchema(name="s", description="d", input_schema={"type": "object"}, strict=True)
    asked = _through_json(encode_request(replace(request_with(), tools=[strict])))
    plain = _Server(FunctionProvider(answer), None, None)
    with pytest.raises(UnsupportedStrictToolsError, match="the tool\\(s\\) s ask for it"):
        await plain._call("complete", asked)
    assert calls == []

    holding = _Server(FunctionProvider(answer, takes_strict_tools=True), None, None)
    await holding._call("complete", asked)
    assert [[t.strict for t in call.tools] for call in calls] == [[True]]


class _Sink:
    """A writer that keeps what is written (a channel end whose other side is a test)."""

    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.wrote = asyncio.Event()

    def write(self, data: bytes) -> None:
        self.written.append(data)
        self.wrote.set()

    async def drain(self) -> None:
        return None


async def test_a_message_longer_than_the_channel_carries_is_refused_before_it_is_sent() -> None:
    sink = _Sink()
    with pytest.raises(ChannelError, match=r"a reply message of \d+ bytes is longer than"):
        await write_message(sink, "reply", {"text": "x" * MAX_LINE})  # type: ignore[arg-type]
    assert sink.written == []


async def test_a_reply_carrying_the_largest_image_a_provider_keeps_fits_the_channel() -> None:
    # Past MAX_IMAGE_BASE64 a provider leaves the image out; up to it, the sandbox carries it.
    image = ImagePart(Base64Source(data="A" * MAX_IMAGE_BASE64), "image/png")
    answer = replace(text_response("Here it is."), content=(TextPart("Here it is."), image))
    reply = {"id": 7, "result": encode_response(answer)}
    sink = _Sink()
    await write_message(sink, "reply", reply)  # type: ignore[arg-type]
    (line,) = sink.written
    assert MAX_IMAGE_BASE64 < len(line) <= MAX_LINE


async def test_a_reply_the_child_cannot_read_fails_its_call_and_every_later_one() -> None:
    reader = asyncio.StreamReader(limit=MAX_LINE)
    parent = _Parent(reader, _Sink())  # type: ignore[arg-type]
    reader.feed_data(b'{"start": {}}\n')
    await parent.start()
    # Read by the reply pump once the call below waits for its reply.
    reader.feed_data(b"not json\n")

    with pytest.raises(_ParentError, match="a reply from the parent could not be read"):
        await parent.call("complete", {})
    with pytest.raises(_ParentError, match="could not be read"):
        await parent.call("complete", {})


async def test_a_late_reply_to_a_call_the_child_gave_up_on_spoils_no_later_call() -> None:
    reader, sink = asyncio.StreamReader(limit=MAX_LINE), _Sink()
    parent = _Parent(reader, sink)  # type: ignore[arg-type]
    reader.feed_data(b'{"start": {}}\n')
    await parent.start()
    given_up = asyncio.create_task(parent.call("search", {"q": 1}))
    await sink.wrote.wait()  # asked the parent, now waiting for its reply
    given_up.cancel()  # as a tool's timeout does
    with pytest.raises(asyncio.CancelledError):
        await given_up

    # The parent answers it anyway, then the next call: read by the pump as that one waits.
    reader.feed_data(b'{"reply": {"id": 1, "result": []}}\n{"reply": {"id": 2, "result": "ok"}}\n')

    assert await parent.call("complete", {}) == "ok"


ANSWER = OutputSchema("Answer", {"type": "object", "properties": {}}, "The answer.", strict=True)


@pytest.mark.parametrize(
    "shaped",
    [
        {"tool_choice": ToolChoice("required"), "parallel_tool_calls": False},
        {"tool_choice": ToolChoice.tool("add"), "parallel_tool_calls": True},
        {"tool_choice": ToolChoice("none"), "output": ANSWER},
        {"prompted_output": ANSWER},
    ],
)
def test_a_requests_tool_choice_parallel_calls_and_output_schema_cross_the_channel(
    shaped: dict[str, Any],
) -> None:
    request = replace(request_with(), **shaped)
    assert decode_request(_through_json(encode_request(request))) == request


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("tool_choice", 3),
        ("parallel_tool_calls", "yes"),
        ("output", {"name": "A"}),
        ("output", "schema"),
    ],
)
def test_a_request_whose_shaping_is_malformed_is_refused(key: str, value: object) -> None:
    data = encode_request(request_with())
    data[key] = value  # type: ignore[assignment]
    with pytest.raises(WireError):
        decode_request(data)
