"""Hosted tools on the Gemini API: Google Search, URL context, code execution."""

from __future__ import annotations

from typing import Any

import pytest

from neuron_provider_google import GoogleProvider
from neuron_tool import ToolSchema
from neuron_turn import (
    CodeExecution,
    NeuronTurn,
    NeuronTurnConfig,
    UserLocation,
    WebFetch,
    WebSearch,
)
from neuron_turn.loop.provider import ProviderMessage, RawPart, TextPart
from neuron_turn.loop.provider_errors import InvalidRequestError

from ._support import json_response, mocked, request, response, text, user

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


def test_the_provider_runs_all_three_hosted_tools() -> None:
    provider = GoogleProvider("gemini-2.5-flash", api_key="k")
    hosted = [WebSearch(), WebFetch(), CodeExecution()]
    NeuronTurn(provider, config=NeuronTurnConfig(hosted_tools=hosted))
    assert GoogleProvider.hosted_tools == {"web_search", "web_fetch", "code_execution"}


def _schema() -> ToolSchema:
    return ToolSchema(name="add", description="Add.", input_schema={"type": "object"})
