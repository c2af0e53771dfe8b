"""`OpenAIResponsesProvider.complete`: the call it makes and how it reads the answer."""

from __future__ import annotations

import logging

import pytest

from neuron_provider_openai import OpenAIResponsesProvider
from neuron_turn.loop.provider import (
    RawPart,
    TextPart,
    ThinkingPart,
    TokenUsage,
    ToolUsePart,
)
from neuron_turn.loop.provider_errors import ProviderResponseError
from neuron_turn.loop.provider_stream import StreamingProvider

from ._responses_support import (
    ANSWERED,
    function_call,
    message,
    mocked,
    reasoning,
    response,
    usage,
)
from ._support import KEY, json_response, request


async def test_complete_posts_to_responses_with_a_bearer_key() -> None:
    provider, recorder = mocked()
    answer = await provider.complete(request(model=""))
    (sent,) = recorder.requests
    assert str(sent.url) == "https://api.openai.com/v1/responses"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert recorder.body["model"] == "gpt-5-mini"
    assert answer.content == [TextPart("Hello!")]
    assert (answer.stop_reason, answer.model, answer.truncated) == ("end_turn", ANSWERED, False)


async def test_provider_satisfies_the_streaming_protocol() -> None:
    provider, _ = mocked()
    assert isinstance(provider, StreamingProvider)


async def test_function_calls_use_call_id_and_decode_arguments() -> None:
    provider, _ = mocked(
        json_response(
            response(
                function_call("call_a", "get_weather", '{"city":"Paris"}'),
                function_call("call_b", "get_weather", '{"city":"Rome"}', item_id="fc_2"),
            )
        )
    )
    answer = await provider.complete(request())
    assert answer.content == [
        ToolUsePart("call_a", "get_weather", {"city": "Paris"}),
        ToolUsePart("call_b", "get_weather", {"city": "Rome"}),
    ]
    assert answer.stop_reason == "tool_use"


async def test_arguments_that_are_not_json_are_kept_as_the_raw_string() -> None:
    provider, _ = mocked(json_response(response(function_call("c", "f", '{"city": "Par'))))
    (call,) = (await provider.complete(request())).content
    assert call == ToolUsePart("c", "f", '{"city": "Par')


async def test_a_call_without_call_id_or_name_gets_an_id_and_an_empty_name() -> None:
    item = {"type": "function_call", "arguments": "{}"}
    provider, _ = mocked(json_response(response(item)))
    (call,) = (await provider.complete(request())).content
    assert isinstance(call, ToolUsePart)
    assert call.id.startswith("call_") and call.name == "" and call.input == {}


async def test_a_refusal_becomes_the_answer_text() -> None:
    provider, _ = mocked(
        json_response(response(message("I can't help with that.", kind="refusal")))
    )
    assert (await provider.complete(request())).content == [TextPart("I can't help with that.")]


async def test_reasoning_becomes_a_thinking_part_and_a_raw_part_to_send_back() -> None:
    item = reasoning("Need the forecast.", encrypted="gAAA-enc")
    item["status"] = None
    provider, _ = mocked(json_response(response(item, message("Sunny."))))
    answer = await provider.complete(request())
    assert answer.content == [
        ThinkingPart("Need the forecast."),
        RawPart(
            "openai-responses",
            {
                "type": "reasoning",
                "id": "rs_1",
                "summary": [{"type": "summary_text", "text": "Need the forecast."}],
                "encrypted_content": "gAAA-enc",
            },
        ),
        TextPart("Sunny."),
    ]


async def test_reasoning_text_content_is_read_when_there_is_no_summary() -> None:
    item = {
        "id": "rs_2",
        "type": "reasoning",
        "summary": [],
        "content": [{"type": "reasoning_text", "text": "Let me think."}],
    }
    provider, _ = mocked(json_response(response(item, message("Done."))))
    content = (await provider.complete(request())).content
    assert content[0] == ThinkingPart("Let me think.")
    assert isinstance(content[1], RawPart) and content[1].data["content"] == item["content"]


async def test_usage_maps_cached_tokens_to_cache_reads() -> None:
    body = response(usage=usage(1200, 300, cached=1024, reasoning=256))
    provider, _ = mocked(json_response(body))
    assert (await provider.complete(request())).usage == TokenUsage(1200, 300, 1024)


@pytest.mark.parametrize(
    ("details", "stop"),
    [
        ({"reason": "max_output_tokens"}, "max_tokens"),
        ({"reason": "content_filter"}, "content_filter"),
        (None, "max_tokens"),
    ],
)
async def test_an_incomplete_response_maps_its_reason_to_the_stop_reason(
    details: object, stop: str
) -> None:
    body = response(
        function_call("c", "f", '{"a":'), status="incomplete", incomplete_details=details
    )
    provider, _ = mocked(json_response(body))
    answer = await provider.complete(request())
    assert answer.stop_reason == stop
    assert answer.truncated is (stop == "max_tokens")


async def test_unknown_output_items_are_skipped_with_a_debug_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    search = {"id": "ws_1", "type": "web_search_call", "status": "completed"}
    provider, _ = mocked(json_response(response(search, message("Found it."))))
    with caplog.at_level(logging.DEBUG, logger="neuron_provider_openai"):
        answer = await provider.complete(request())
    assert answer.content == [TextPart("Found it.")]
    assert "web_search_call" in caplog.text


async def test_an_answer_of_only_unknown_items_is_a_response_error_naming_them() -> None:
    provider, _ = mocked(json_response(response({"type": "computer_call", "id": "cu_1"})))
    with pytest.raises(ProviderResponseError, match="unsupported types \\['computer_call'\\]"):
        await provider.complete(request())


@pytest.mark.parametrize(
    ("body", "match"),
    [
        ([1, 2], "not a JSON object"),
        ({"id": "resp_1", "status": "completed"}, "no output list"),
        ({"status": "queued", "output": []}, "not finished"),
    ],
)
async def test_a_malformed_body_is_a_response_error_saying_what_is_wrong(
    body: object, match: str
) -> None:
    provider, _ = mocked(json_response(body))
    with pytest.raises(ProviderResponseError, match=match):
        await provider.complete(request())


async def test_malformed_items_and_parts_do_not_crash_the_call() -> None:
    odd = {"type": "message", "content": [None, {"type": "output_text", "text": 7}, "x"]}
    provider, _ = mocked(
        json_response(response(odd, "junk", message("ok"), usage={"input_tokens": "many"}))
    )
    answer = await provider.complete(request())
    assert answer.content == [TextPart("ok")]
    assert answer.usage == TokenUsage()


async def test_stream_option_streams_underneath_complete() -> None:
    from ._responses_support import sse

    done = {"type": "response.completed", "response": response(message("Hi there"))}
    provider, recorder = mocked(sse(done), stream=True)
    answer = await provider.complete(request())
    assert recorder.body["stream"] is True
    assert answer.content == [TextPart("Hi there")]


def test_repr_redacts_the_key() -> None:
    provider = OpenAIResponsesProvider("gpt-5-mini", api_key=KEY)
    assert KEY not in repr(provider)
    assert repr(provider).startswith("OpenAIResponsesProvider(model='gpt-5-mini'")


async def test_key_never_appears_in_log_lines(caplog: pytest.LogCaptureFixture) -> None:
    provider, _ = mocked(json_response(response(message(f"echo {KEY}"))))
    with caplog.at_level(logging.DEBUG):
        answer = await provider.complete(request())
    assert KEY not in caplog.text
    assert KEY not in str(answer.content)


async def test_own_client_is_built_once_and_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    provider = OpenAIResponsesProvider("gpt-5-mini", api_key=KEY)
    first = provider._http_client()
    assert provider._http_client() is first
    await provider.aclose()
    assert first.is_closed
