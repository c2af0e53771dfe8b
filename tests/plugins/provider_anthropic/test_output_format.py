"""Native typed answers: `output_config.format` from the output type's schema."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Annotated, Any, Literal

import httpx
import pytest
from pydantic import BaseModel, Field

from layer0 import TurnInput
from neuron_provider_anthropic import AnthropicProvider
from neuron_provider_anthropic._output_format import output_format_json
from neuron_provider_anthropic._wire import build_body
from neuron_tool import tool
from neuron_turn import NeuronTurn, NeuronTurnConfig, OutputSpec
from neuron_turn.loop.output import OutputSchema
from neuron_turn.loop.provider_errors import InvalidRequestError

from ._support import API_KEY, FakeApi, message_json, reply, request


class City(BaseModel):
    """A city and what it is known for."""

    name: str
    population: Annotated[int, Field(ge=0)]
    founded: Annotated[str, Field(pattern=r"^\d{4}$")] | None = None
    kind: Literal["capital", "port"]
    sights: list[str] = []


def schema_of(output_type: Any) -> OutputSchema:
    return OutputSpec(output_type).provider_schema()


def test_a_models_schema_is_closed_and_what_the_subset_lacks_is_described() -> None:
    schema = output_format_json(schema_of(City))["schema"]
    assert schema["additionalProperties"] is False
    assert schema["description"] == "A city and what it is known for."
    assert schema["required"] == ["name", "population", "kind"]
    population = schema["properties"]["population"]
    assert population == {"type": "integer", "description": "{minimum: 0}"}
    founded = schema["properties"]["founded"]
    assert founded["anyOf"][0] == {"type": "string", "description": '{pattern: "^\\\\d{4}$"}'}
    assert founded["description"] == "{default: null}"
    assert schema["properties"]["kind"] == {
        "type": "string",
        "enum": ["capital", "port"],
    }


def test_nested_models_keep_their_refs_and_defs_closed() -> None:
    class Trip(BaseModel):
        cities: list[City]

    schema = output_format_json(schema_of(Trip))["schema"]
    assert schema["properties"]["cities"]["items"] == {"$ref": "#/$defs/City"}
    assert schema["$defs"]["City"]["additionalProperties"] is False


def test_a_listed_string_format_is_kept_and_another_described() -> None:
    raw = {
        "type": "object",
        "properties": {
            "when": {"type": "string", "format": "date-time"},
            "color": {"type": "string", "format": "color"},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
        },
    }
    schema = output_format_json(OutputSchema("Event", raw))["schema"]
    assert schema["properties"]["when"] == {"type": "string", "format": "date-time"}
    assert schema["properties"]["color"] == {"type": "string", "description": '{format: "color"}'}
    assert schema["properties"]["tags"]["description"] == "{minItems: 2}"


def test_a_non_object_type_is_asked_for_wrapped() -> None:
    schema = output_format_json(schema_of(list[int]))["schema"]
    assert schema["properties"]["response"]["items"] == {"type": "integer"}
    assert schema["additionalProperties"] is False


@pytest.mark.parametrize(
    ("output_type", "where"),
    [
        (dict[str, int], "$"),
        (dict[str, dict[str, int]], "$"),
        (list[dict[str, int]], "$.response[]"),
    ],
)
def test_an_object_of_free_keys_is_refused_naming_where(output_type: Any, where: str) -> None:
    with pytest.raises(
        InvalidRequestError, match=re.escape(f"{where} is an object of free keys")
    ) as caught:
        output_format_json(schema_of(output_type))
    assert "use output mode 'tool'" in str(caught.value) and caught.value.retryable is False


def test_the_body_carries_the_format_beside_the_thinking_effort() -> None:
    asked = replace(request(model="claude-opus-4-6"), output=schema_of(City), thinking="low")
    body = build_body(asked, model="default-model", max_tokens=4096)
    assert set(body["output_config"]) == {"format", "effort"}
    assert body["output_config"]["format"]["type"] == "json_schema"
    assert body["output_config"]["effort"] == "low"


def test_native_is_a_mode_the_provider_offers_after_tool() -> None:
    assert AnthropicProvider.output_modes == ("tool", "native", "prompted")


@tool
def population_of(city: str) -> int:
    """Return a city's population."""
    return 700_000


async def test_a_native_typed_turn_uses_a_tool_then_answers_with_the_format() -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "population_of", "input": {"city": "Oslo"}}
    answer = {"name": "Oslo", "population": 700000, "kind": "capital"}
    api = FakeApi(
        reply(message_json([call], stop_reason="tool_use")),
        reply(message_json([{"type": "text", "text": json.dumps(answer)}])),
    )
    client = httpx.AsyncClient(transport=httpx.MockTransport(api))
    provider = AnthropicProvider("claude-sonnet-4-6", api_key=API_KEY, client=client)
    config = NeuronTurnConfig(output_mode="native", thinking="medium")
    turn = NeuronTurn(provider, tools=[population_of], output_type=City, config=config)

    output = await turn.execute(TurnInput(message="Tell me about Oslo.", trigger="user"))

    assert turn.output_value(output) == City(name="Oslo", population=700_000, kind="capital")
    for body in api.bodies:
        assert set(body["output_config"]["format"]["schema"]["properties"]) == set(
            City.model_fields
        )
        assert body["output_config"]["effort"] == "medium"
        assert body["tools"][0]["name"] == "population_of" and "tool_choice" not in body
    await client.aclose()
