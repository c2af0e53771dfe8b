"""Hosted tools on the Gemini API: Google Search, URL context, code execution."""

from __future__ import annotations

from typing import Any

import pytest

from neuron_provider_google import GoogleProvider
from neuron_tool import ToolSchema
from neuron_turn import (
    CodeExecution,
    HostedToolCall,
    ImageGeneration,
    NeuronTurn,
    NeuronTurnConfig,
    UserLocation,
    WebFetch,
    WebSearch,
)
from neuron_turn.loop.provider import ProviderMessage, RawPart, TextPart
from neuron_turn.loop.provider_errors import InvalidRequestError

from ._support import json_response, mocked, request, response, sse, text, user

CODE = {"executableCode": {"language": "PYTHON", "code": "print(2**10)"}}
RESULT = {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1024\n"}}


async def test_hosted_tools_become_built_in_tool_entries_after_the_functions() -> None:
    provider, recorder = mocked()
    hosted = [WebSearch(), WebFetch(), CodeExecution()]
    await provider.complete(request(tools=[_schema()], hosted_tools=hosted))
    assert recorder.body["tools"] == [
        {"functionDeclarations": [recorder.body["tools"][0]["functionDeclarations"][0]]},
        {"googleSearch": {}},
        {"urlContext": {}},
        {"codeExecution": {}},
    ]


async def test_hosted_tools_alone_send_no_function_declarations() -> None:
    provider, recorder = mocked()
    await provider.complete(request(hosted_tools=[WebSearch()]))
    assert recorder.body["tools"] == [{"googleSearch": {}}]
    assert "toolConfig" not in recorder.body


@pytest.mark.parametrize(
    ("tool", "limits"),
    [
        (WebSearch(max_uses=2), "max_uses"),
        (WebSearch(allowed_domains=["example.com"]), "allowed_domains"),
        (WebSearch(user_location=UserLocation(country="FR")), "user_location"),
        (WebFetch(blocked_domains=["a.example"], max_uses=1), "max_uses, blocked_domains"),
    ],
)
async def test_a_limit_the_gemini_api_has_no_field_for_is_refused_before_the_call(
    tool: Any, limits: str
) -> None:
    provider, recorder = mocked()
    with pytest.raises(InvalidRequestError, match=f"takes no limits; this one sets {limits}$"):
        await provider.complete(request(hosted_tools=[tool]))
    assert recorder.requests == []


async def test_code_the_model_ran_is_kept_and_goes_back_in_its_place() -> None:
    signed = {**RESULT, "thoughtSignature": "c2lnbmVk"}
    provider, recorder = mocked(
        json_response(response(CODE, signed, text("It is 1024."))), json_response(response())
    )
    answer = await provider.complete(request(hosted_tools=[CodeExecution()]))
    history = [user("2**10?"), ProviderMessage("assistant", answer.content), user("Thanks")]
    await provider.complete(request(*history, hosted_tools=[CodeExecution()]))

    assert answer.content == [
        RawPart("google", CODE),
        RawPart("google", signed),
        TextPart("It is 1024."),
    ]
    model_turn = recorder.body["contents"][1]
    assert model_turn == {"role": "model", "parts": [CODE, signed, {"text": "It is 1024."}]}


def test_the_provider_runs_all_four_hosted_tools() -> None:
    provider = GoogleProvider("gemini-2.5-flash", api_key="k")
    hosted = [WebSearch(), WebFetch(), CodeExecution(), ImageGeneration()]
    NeuronTurn(provider, config=NeuronTurnConfig(hosted_tools=hosted))
    assert GoogleProvider.hosted_tools == {
        "web_search",
        "web_fetch",
        "code_execution",
        "image_generation",
    }


def _schema() -> ToolSchema:
    return ToolSchema(name="add", description="Add.", input_schema={"type": "object"})


GROUNDED = {
    "groundingMetadata": {"webSearchQueries": ["layer0 protocol", 3]},
    "urlContextMetadata": {
        "urlMetadata": [{"retrievedUrl": "https://example.com/a"}, {"retrievedUrl": None}]
    },
}


def _grounded(body: dict[str, Any]) -> dict[str, Any]:
    body["candidates"][0].update(GROUNDED)
    return body


async def test_the_code_run_the_searches_and_the_fetches_are_recorded() -> None:
    provider, _ = mocked(json_response(_grounded(response(CODE, RESULT, text("Done.")))))
    answer = await provider.complete(request(hosted_tools=[WebSearch(), CodeExecution()]))
    assert answer.hosted_calls == (
        HostedToolCall("code_execution", CODE["executableCode"]),
        HostedToolCall("web_search", {"query": "layer0 protocol"}),
        HostedToolCall("web_fetch", {"url": "https://example.com/a"}),
    )


async def test_a_stream_keeps_what_the_hosted_tools_did() -> None:
    first = response(text("Do"), finish=None)
    last = _grounded(response(text("ne."), finish="STOP"))
    provider, _ = mocked(sse(first, last))
    events = [event async for event in provider.stream(request(hosted_tools=[WebSearch()]))]
    assert events[-1].hosted_calls == (  # type: ignore[union-attr]
        HostedToolCall("web_search", {"query": "layer0 protocol"}),
        HostedToolCall("web_fetch", {"url": "https://example.com/a"}),
    )
