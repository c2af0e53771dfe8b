"""A whole `NeuronTurn` tool loop over the Responses provider, its HTTP mocked."""

from __future__ import annotations

import json

import httpx

from layer0 import TurnInput
from neuron_provider_openai import OpenAIResponsesProvider
from neuron_tool import tool
from neuron_turn import NeuronTurn

from ._responses_support import function_call, message, reasoning, response
from ._support import KEY, Recorder, json_response


@tool
def get_weather(city: str) -> str:
    """Return the current weather in a city."""
    return f"Sunny in {city}"


async def test_a_tool_loop_sends_the_call_its_reasoning_and_its_output_back_by_call_id() -> None:
    recorder = Recorder(
        json_response(
            response(
                reasoning("Need the weather.", encrypted="gAAA-enc"),
                function_call("call_42", "get_weather", '{"city":"Paris"}'),
            )
        ),
        json_response(response(message("It is sunny in Paris."))),
    )
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    provider = OpenAIResponsesProvider("gpt-5-mini", api_key=KEY, client=client)
    turn = NeuronTurn(provider, tools=[get_weather])
    output = await turn.execute(TurnInput(message="Weather in Paris?", trigger="user"))
    assert turn.output_value(output) == "It is sunny in Paris."
    first, second = (json.loads(sent.content) for sent in recorder.requests)
    assert first["include"] == ["reasoning.encrypted_content"]
    assert first["tools"][0]["name"] == "get_weather"
    items = second["input"]
    kinds = [item.get("type", item.get("role")) for item in items]
    assert kinds == ["user", "reasoning", "function_call", "function_call_output"]
    assert items[1]["encrypted_content"] == "gAAA-enc"
    assert items[2]["call_id"] == items[3]["call_id"] == "call_42"
    assert items[3]["output"] == "Sunny in Paris"
    await client.aclose()
