"""`GoogleProvider.complete`: the call it makes and how it reads the answer."""

from __future__ import annotations

import logging

import httpx
import pytest

from neuron_provider_google import GoogleProvider
from neuron_turn.loop.provider import (
    RawPart,
    TextPart,
    ThinkingPart,
    TokenUsage,
    ToolUsePart,
)
from neuron_turn.loop.provider_errors import (
    InvalidRequestError,
    ProviderConnectionError,
    ProviderResponseError,
)
from neuron_turn.loop.provider_stream import StreamingProvider

from ._support import (
    KEY,
    URL,
    call,
    json_response,
    mocked,
    request,
    response,
    sse,
    text,
    usage,
)


async def test_complete_posts_to_generate_content_with_the_key_in_a_header_only() -> None:
    provider, recorder = mocked()
    answer = await provider.complete(request(model=""))
    (sent,) = recorder.requests
    assert str(sent.url) == URL
    assert sent.headers["x-goog-api-key"] == KEY
    assert KEY not in str(sent.url) and "key=" not in str(sent.url)
    assert answer.content == [TextPart("Hello!")]
    assert (answer.stop_reason, answer.model, answer.truncated) == (
        "end_turn",
        "gemini-2.5-flash",
        False,
    )


@pytest.mark.parametrize(
    ("model", "path"),
    [
        ("models/gemini-2.5-pro", "/v1beta/models/gemini-2.5-pro:generateContent"),
        ("tunedModels/my-model", "/v1beta/tunedModels/my-model:generateContent"),
    ],
)
async def test_a_model_given_with_its_resource_prefix_is_used_as_it_is(
    model: str, path: str
) -> None:
    provider, recorder = mocked()
    await provider.complete(request(model=model))
    assert recorder.requests[0].url.path == path


async def test_base_url_option_and_environment_variable_set_the_api_root(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    provider, recorder = mocked(base_url="https://proxy.example.com/gemini/v1beta/")
    await provider.complete(request())
    assert str(recorder.requests[0].url).startswith(
        "https://proxy.example.com/gemini/v1beta/models/"
    )
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", "https://env.example.com/v1beta")
    assert GoogleProvider("m").base_url == "https://env.example.com/v1beta"


async def test_the_key_is_read_from_gemini_api_key_then_google_api_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "google-key")
    provider, recorder = mocked(api_key=None)
    await provider.complete(request())
    assert recorder.requests[-1].headers["x-goog-api-key"] == "google-key"
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-key")
    await provider.complete(request())
    assert recorder.requests[-1].headers["x-goog-api-key"] == "gemini-key"


def test_provider_satisfies_the_streaming_protocol() -> None:
    provider, _ = mocked()
    assert isinstance(provider, StreamingProvider)


async def test_calls_keep_the_api_s_id_and_get_a_stable_unique_one_without() -> None:
    body = response(
        call("get_weather", {"city": "Paris"}, id="fc-1"),
        call("get_weather", {"city": "Rome"}),
        call("get_weather", {"city": "Rome"}),
    )
    provider, _ = mocked(json_response(body))
    first = (await provider.complete(request())).content
    again = (await provider.complete(request())).content
    assert first[0] == ToolUsePart("fc-1", "get_weather", {"city": "Paris"})
    made = [part.id for part in first[1:]]  # type: ignore[union-attr]
    assert made[0] != made[1] and all(id_.startswith("call_") for id_ in made)
    assert first == again  # the same body, the same ids (salted by responseId)
    other = response(call("get_weather", {"city": "Rome"}), responseId="resp-other")
    provider, _ = mocked(json_response(other))
    (elsewhere,) = (await provider.complete(request())).content
    assert elsewhere.id not in made  # type: ignore[union-attr]


async def test_function_calls_make_the_stop_reason_tool_use() -> None:
    provider, _ = mocked(json_response(response(text("Checking."), call("f", {}))))
    answer = await provider.complete(request())
    assert answer.stop_reason == "tool_use"
    assert answer.content[0] == TextPart("Checking.")


async def test_non_object_args_are_kept_for_the_registry_to_refuse() -> None:
    provider, _ = mocked(json_response(response(call("f", "not an object"))))
    (part,) = (await provider.complete(request())).content
    assert isinstance(part, ToolUsePart) and part.input == "not an object"


async def test_thoughts_are_thinking_parts_and_signatures_raw_parts_before_their_part() -> None:
    body = response(
        text("Plan: look it up.", thought=True),
        call("get_weather", {"city": "Paris"}, id="c1", thoughtSignature="CiQB-sig/+=="),
    )
    provider, _ = mocked(json_response(body))
    assert (await provider.complete(request())).content == [
        ThinkingPart("Plan: look it up."),
        RawPart("google", {"thoughtSignature": "CiQB-sig/+=="}),
        ToolUsePart("c1", "get_weather", {"city": "Paris"}),
    ]


async def test_a_lone_signature_on_an_empty_text_is_kept_whole() -> None:
    body = response(text("Hi"), text("", thoughtSignature="sig"))
    provider, _ = mocked(json_response(body))
    assert (await provider.complete(request())).content == [
        TextPart("Hi"),
        RawPart("google", {"text": "", "thoughtSignature": "sig"}),
    ]


async def test_include_thoughts_option_asks_for_thought_summaries() -> None:
    provider, recorder = mocked(include_thoughts=True)
    await provider.complete(request())
    assert recorder.body["generationConfig"] == {"thinkingConfig": {"includeThoughts": True}}


async def test_usage_counts_thoughts_as_output_and_cached_tokens_as_cache_reads() -> None:
    metadata = usage(prompt=1200, candidates=300, thoughts=150, cached=1024)
    metadata["toolUsePromptTokenCount"] = 20
    provider, _ = mocked(json_response(response(usageMetadata=metadata)))
    assert (await provider.complete(request())).usage == TokenUsage(1220, 450, 1024)


@pytest.mark.parametrize(
    ("finish", "stop"),
    [
        ("STOP", "end_turn"),
        ("MAX_TOKENS", "max_tokens"),
        ("SAFETY", "content_filter"),
        ("RECITATION", "content_filter"),
        ("BLOCKLIST", "content_filter"),
        ("PROHIBITED_CONTENT", "content_filter"),
        ("SPII", "content_filter"),
        ("IMAGE_SAFETY", "content_filter"),
        ("OTHER", "end_turn"),
        (None, "end_turn"),
        ("SOMETHING_NEW", "end_turn"),
    ],
)
async def test_finish_reasons_map_to_stop_reasons(finish: str | None, stop: str) -> None:
    provider, _ = mocked(json_response(response(text("Partial"), finish=finish)))
    answer = await provider.complete(request())
    assert answer.stop_reason == stop
    assert answer.truncated is (stop == "max_tokens")


async def test_a_call_cut_short_by_max_tokens_is_truncated_not_tool_use() -> None:
    provider, _ = mocked(json_response(response(call("f", {"a": 1}), finish="MAX_TOKENS")))
    assert (await provider.complete(request())).stop_reason == "max_tokens"


async def test_a_filtered_answer_with_no_content_is_an_empty_content_filter_stop() -> None:
    body = response(finish="SAFETY")
    body["candidates"][0].pop("content")
    provider, _ = mocked(json_response(body))
    answer = await provider.complete(request())
    assert (answer.content, answer.stop_reason) == ([], "content_filter")


@pytest.mark.parametrize(
    "finish", ["MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"]
)
async def test_a_malformed_call_is_a_response_error_naming_the_finish_reason(finish: str) -> None:
    body = response(finish=finish)
    body["candidates"][0] |= {"content": {}, "finishMessage": "Malformed function call: print(x"}
    provider, _ = mocked(json_response(body))
    with pytest.raises(ProviderResponseError, match=f"finishReason {finish}.*print\\(x"):
        await provider.complete(request())


async def test_a_blocked_prompt_is_an_invalid_request_naming_the_block_reason() -> None:
    body = {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": usage()}
    provider, _ = mocked(json_response(body))
    with pytest.raises(InvalidRequestError, match="prompt was blocked \\(blockReason SAFETY\\)"):
        await provider.complete(request())


async def test_a_missing_thought_signature_is_an_invalid_request() -> None:
    provider, _ = mocked(json_response(response(finish="MISSING_THOUGHT_SIGNATURE")))
    with pytest.raises(InvalidRequestError, match="lacks its thought signature"):
        await provider.complete(request())


async def test_unknown_parts_are_skipped_with_a_debug_log(caplog: pytest.LogCaptureFixture) -> None:
    unknown = {"videoMetadata": {"startOffset": "1s"}}
    provider, _ = mocked(json_response(response(unknown, text("Said it."))))
    with caplog.at_level(logging.DEBUG, logger="neuron_provider_google"):
        answer = await provider.complete(request())
    assert answer.content == [TextPart("Said it.")]
    assert "videoMetadata" in caplog.text


async def test_an_answer_of_only_unknown_parts_is_a_response_error_naming_them() -> None:
    provider, _ = mocked(json_response(response({"videoMetadata": {"startOffset": "1s"}})))
    with pytest.raises(ProviderResponseError, match="unsupported kinds \\['videoMetadata'\\]"):
        await provider.complete(request())


@pytest.mark.parametrize(
    ("body", "match"),
    [
        ([1, 2], "not a JSON object"),
        ({"usageMetadata": {}}, "no candidate"),
        ({"candidates": ["x"]}, "no candidate"),
        ("text", "not a JSON object"),
    ],
)
async def test_a_malformed_body_is_a_response_error_saying_what_is_wrong(
    body: object, match: str
) -> None:
    provider, _ = mocked(json_response(body))
    with pytest.raises(ProviderResponseError, match=match):
        await provider.complete(request())


async def test_malformed_parts_and_usage_do_not_crash_the_call() -> None:
    odd = response(None, "x", {"text": 7}, text("ok"), {"functionCall": "nope"})  # type: ignore[arg-type]
    odd["usageMetadata"] = {"promptTokenCount": "many", "candidatesTokenCount": -3}
    odd["modelVersion"] = 42
    provider, _ = mocked(json_response(odd))
    answer = await provider.complete(request())
    assert answer.content == [TextPart("ok")]
    assert (answer.usage, answer.model) == (TokenUsage(), "gemini-2.5-flash")


async def test_stream_option_streams_underneath_complete() -> None:
    provider, recorder = mocked(sse(response(text("Hi there"))), stream=True)
    answer = await provider.complete(request())
    assert recorder.requests[0].url.params["alt"] == "sse"
    assert answer.content == [TextPart("Hi there")]


def test_repr_redacts_the_key() -> None:
    provider = GoogleProvider("gemini-2.5-flash", api_key=KEY)
    assert KEY not in repr(provider)
    assert repr(provider).startswith("GoogleProvider(model='gemini-2.5-flash'")


async def test_own_client_is_built_once_reused_and_closed() -> None:
    provider = GoogleProvider("gemini-2.5-flash", api_key=KEY)
    first = provider._http_client()
    assert provider._http_client() is first
    async with provider:
        pass
    assert first.is_closed


async def test_an_injected_client_is_left_open_and_a_closed_one_is_a_clear_error() -> None:
    provider, _ = mocked()
    client = provider._http_client()
    await provider.aclose()
    assert not client.is_closed
    await client.aclose()
    with pytest.raises(ProviderConnectionError, match=r"injected httpx\.AsyncClient is closed"):
        await provider.complete(request())


async def test_no_model_is_an_invalid_request() -> None:
    client = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(500)))
    provider = GoogleProvider("", api_key=KEY, client=client)
    with pytest.raises(InvalidRequestError, match="no model"):
        await provider.complete(request(model=""))
