"""A strict final-answer tool (`OutputSpec(strict=...)`, tool mode, Anthropic's default) as the
Messages API's strict tool use: sent in structured outputs' subset with `strict: true`, its
answer validated with an optional field's default (complete and streamed); strict=None sends
byte-for-byte what strict=False sends, as pydantic-ai leaves Anthropic's strict mode to be asked."""

from __future__ import annotations

import json
from typing import Any

import pytest

from layer0 import TurnInput
from neuron_provider_anthropic import AnthropicProvider
from neuron_turn import NeuronTurn, OutputSpec

from ...neuron_turn.test_strict_output import Answer, Stay
from ._support import FakeApi, message_json, reply
from .test_stream import END, START, block_start, delta, message_delta, sse, stop

DESCRIPTION = "Give the final answer (Stay: Where to stay.); this ends the conversation."
STAY = Stay(city="Oslo", nights=1, hotel="Grand")
# Anthropic's strict mode leaves an optional field optional: the model leaves it out.
WITHOUT_NIGHTS = {"city": "Oslo", "hotel": "Grand"}


def answered(value: dict[str, Any]) -> Any:
    call = {"type": "tool_use", "id": "toolu_1", "name": "final_answer", "input": value}
    return reply(message_json([call], stop_reason="tool_use"))


def streamed_answer(value: dict[str, Any]) -> Any:
    arguments = json.dumps(value)
    events = [
        START,
        block_start(0, {"type": "tool_use", "id": "toolu_1", "name": "final_answer", "input": {}}),
        delta(0, type="input_json_delta", partial_json=arguments[:12]),
        delta(0, type="input_json_delta", partial_json=arguments[12:]),
        stop(0),
        message_delta("tool_use", output_tokens=20),
        END,
    ]
    return reply(sse(*events), headers={"content-type": "text/event-stream"})


def ask() -> TurnInput:
    return TurnInput(message="Where do I stay in Oslo?", trigger="user")


async def test_a_strict_output_goes_as_a_strict_final_answer_tool_in_the_subset() -> None:
    api = FakeApi(answered(WITHOUT_NIGHTS))
    turn = NeuronTurn(api.provider(), output_type=OutputSpec(Stay, strict=True))

    output = await turn.execute(ask())

    assert turn.output_value(output) == STAY
    [body] = api.bodies
    assert body["tools"] == [
        {
            "name": "final_answer",
            "description": DESCRIPTION,
            "input_schema": {
                "type": "object",
                "description": "Where to stay.",
                "properties": {
                    "city": {"type": "string"},
                    "nights": {"type": "integer", "description": "{default: 1}"},
                    "hotel": {"type": "string"},
                },
                "additionalProperties": False,
                "required": ["city", "hotel"],
            },
            "strict": True,
        }
    ]
    assert body["tool_choice"] == {"type": "tool", "name": "final_answer"}


async def test_a_streamed_strict_answer_without_an_optional_field_validates_with_its_default() -> (
    None
):
    api = FakeApi(streamed_answer(WITHOUT_NIGHTS))
    turn = NeuronTurn(api.provider(), output_type=OutputSpec(Stay, strict=True))

    async with turn.stream(ask()) as events:
        async for _ in events:
            pass

    assert turn.output_value(events.output) == STAY
    [body] = api.bodies
    assert body["stream"] is True and body["tools"][0]["strict"] is True


def test_the_provider_takes_strict_tools_but_infers_none() -> None:
    # Strict tool use is on newer models only and counts against per-request limits:
    # pydantic-ai, too, leaves it off on Anthropic unless a tool asks.
    assert AnthropicProvider.takes_strict_tools is True
    assert getattr(AnthropicProvider, "infers_strict_tools", False) is False


@pytest.mark.parametrize("output_type", [Answer, Stay, dict[str, int]])
async def test_strict_none_sends_what_strict_false_sends_byte_for_byte(output_type: Any) -> None:
    answer = {"answer": 391} if output_type is Answer else WITHOUT_NIGHTS
    sent = []
    for strict in (None, False):
        api = FakeApi(answered(answer))
        await NeuronTurn(
            api.provider(), output_type=OutputSpec(output_type, strict=strict)
        ).execute(ask())
        sent.append(api.requests[0].content)

    assert sent[0] == sent[1]
    [tool] = json.loads(sent[0])["tools"]
    assert "strict" not in tool and tool["input_schema"] == OutputSpec(output_type).schema
