"""Strict tools on the Gemini API: a calling mode that keeps calls to their schemas, per request."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from layer0 import TurnInput
from neuron_provider_google import GoogleProvider
from neuron_provider_google._wire import request_body
from neuron_tool import tool
from neuron_tool.schema import ToolSchema
from neuron_turn import NeuronTurn, NeuronTurnConfig
from neuron_turn.loop.tool_choice import ToolChoice

from ._support import KEY, MODEL, Recorder, call, json_response, request, response, text

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
STRICT = ToolSchema(
    name="get_weather", description="The weather.", input_schema=SCHEMA, strict=True
)
LOOSE = ToolSchema(name="get_time", description="The time.", input_schema=SCHEMA)
UNSTRICT = ToolSchema(name="get_time", description="The time.", input_schema=SCHEMA, strict=False)
NAMED = ToolChoice.tool("get_weather")


def tool_config(*tools: ToolSchema, **fields: Any) -> Any:
    """The `toolConfig` a request offering `tools` sends; None when it sends none."""
    return request_body(request(tools=list(tools), **fields), model=MODEL).get("toolConfig")


def calling(mode: str, **fields: Any) -> dict[str, Any]:
    return {"functionCallingConfig": {"mode": mode, **fields}}


@pytest.mark.parametrize(
    ("choice", "sent"),
    [
        (None, calling("VALIDATED")),
        (ToolChoice.AUTO, calling("VALIDATED")),
        (ToolChoice.REQUIRED, calling("ANY")),
        (NAMED, calling("ANY", allowedFunctionNames=["get_weather"])),
        (ToolChoice.NONE, calling("NONE")),
    ],
)
def test_a_strict_tool_maps_each_tool_choice_to_a_mode_that_keeps_calls_to_their_schemas(
    choice: ToolChoice | None, sent: dict[str, Any]
) -> None:
    assert tool_config(STRICT, tool_choice=choice) == sent


@pytest.mark.parametrize(
    ("choice", "sent"),
    [
        (None, None),
        (ToolChoice.AUTO, calling("AUTO")),
        (ToolChoice.REQUIRED, calling("ANY")),
        (NAMED, calling("ANY", allowedFunctionNames=["get_weather"])),
        (ToolChoice.NONE, calling("NONE")),
    ],
)
@pytest.mark.parametrize("tool", [LOOSE, UNSTRICT], ids=["strict None", "strict False"])
def test_without_a_strict_tool_each_tool_choice_maps_as_before(
    tool: ToolSchema, choice: ToolChoice | None, sent: dict[str, Any] | None
) -> None:
    assert tool_config(tool, tool_choice=choice) == sent


def test_one_strict_tool_makes_the_mode_of_the_whole_request() -> None:
    assert tool_config(LOOSE, STRICT) == calling("VALIDATED")


def test_a_strict_tools_declaration_is_sent_as_without_strict_mode() -> None:
    not_strict = STRICT.model_copy(update={"strict": None})
    body = request_body(request(tools=[LOOSE, STRICT]), model=MODEL)
    assert body["tools"] == request_body(request(tools=[LOOSE, not_strict]), model=MODEL)["tools"]


def test_a_function_calling_config_in_extra_wins_over_the_strict_mode() -> None:
    own = {"toolConfig": calling("AUTO")}
    assert tool_config(STRICT, extra=own) == calling("AUTO")
    assert tool_config(STRICT, tool_choice=ToolChoice.AUTO, extra=own) == calling("AUTO")


def test_other_tool_config_fields_in_extra_keep_the_strict_mode_beside_them() -> None:
    retrieval = {"retrievalConfig": {"languageCode": "fr"}}
    assert tool_config(STRICT, extra={"toolConfig": retrieval}) == {
        **calling("VALIDATED"),
        **retrieval,
    }


def test_a_function_calling_config_in_body_defaults_wins_when_the_turn_sets_no_tool_choice() -> (
    None
):
    defaults: dict[str, Any] = {"toolConfig": calling("ANY")}
    body = request_body(request(tools=[STRICT]), defaults=defaults, model=MODEL)
    assert body["toolConfig"] == calling("ANY")


def test_a_tool_choice_wins_over_body_defaults_as_without_strict_mode() -> None:
    defaults: dict[str, Any] = {"toolConfig": calling("NONE")}
    strict = request(tools=[STRICT], tool_choice=ToolChoice.AUTO)
    loose = request(tools=[LOOSE], tool_choice=ToolChoice.AUTO)
    assert request_body(strict, defaults=defaults, model=MODEL)["toolConfig"] == calling(
        "VALIDATED"
    )
    assert request_body(loose, defaults=defaults, model=MODEL)["toolConfig"] == calling("AUTO")


def test_other_tool_config_fields_in_body_defaults_keep_the_strict_mode_beside_them() -> None:
    defaults: dict[str, Any] = {"toolConfig": {"retrievalConfig": {"languageCode": "fr"}}}
    body = request_body(request(tools=[STRICT]), defaults=defaults, model=MODEL)
    assert body["toolConfig"] == {**calling("VALIDATED"), "retrievalConfig": {"languageCode": "fr"}}


def test_the_provider_takes_strict_tools() -> None:
    assert GoogleProvider.takes_strict_tools is True


@tool(strict=True)
def get_weather(city: str, days: int = 1) -> str:
    """Return the weather in a city for the next days."""
    return f"Sunny in {city} for {days} day(s)"


async def test_a_turn_with_a_strict_tool_calls_it_in_validated_mode_and_completes() -> None:
    recorder = Recorder(
        json_response(response(call("get_weather", {"city": "Paris"}, id="call-1"))),
        json_response(response(text("Sunny in Paris all day."))),
    )
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    provider = GoogleProvider(MODEL, api_key=KEY, client=client)
    turn = NeuronTurn(provider, tools=[get_weather], config=NeuronTurnConfig(model=MODEL))

    output = await turn.execute(TurnInput(message="Weather in Paris?", trigger="user"))

    assert turn.output_value(output) == "Sunny in Paris all day."
    first, second = (json.loads(sent.content) for sent in recorder.requests)
    assert first["toolConfig"] == second["toolConfig"] == calling("VALIDATED")
    (declaration,) = first["tools"][0]["functionDeclarations"]
    assert declaration["name"] == "get_weather"
    assert declaration["parametersJsonSchema"]["required"] == ["city"]  # its own schema
    assert second["contents"][-1]["parts"] == [
        {
            "functionResponse": {
                "id": "call-1",
                "name": "get_weather",
                "response": {"output": "Sunny in Paris for 1 day(s)"},
            }
        }
    ]
    await client.aclose()
