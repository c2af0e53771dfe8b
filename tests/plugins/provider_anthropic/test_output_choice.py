"""A choice of output types over the Messages API: one final-answer tool per type, one to call."""

from __future__ import annotations

import json
from typing import Any

from layer0 import TurnInput
from neuron_turn import NeuronTurn, OutputDelta

from ...neuron_turn.test_output_choice import CHOICE, Escalation, Refund
from ._support import FakeApi, message_json, reply
from .test_stream import END, START, block_start, delta, message_delta, sse, stop


def ask() -> TurnInput:
    return TurnInput(message="My phone arrived broken; I want my 20 dollars back.", trigger="user")


def answered(name: str, value: dict[str, Any]) -> Any:
    call = {"type": "tool_use", "id": "toolu_1", "name": name, "input": value}
    return reply(message_json([call], stop_reason="tool_use"))


async def test_each_type_goes_as_its_own_tool_and_the_model_must_call_one() -> None:
    api = FakeApi(answered("final_answer_Refund", {"amount": 20}))
    turn = NeuronTurn(api.provider(), output_type=CHOICE)  # tool mode: Anthropic's default

    output = await turn.execute(ask())

    assert turn.output_value(output) == Refund(amount=20.0)
    [body] = api.bodies
    assert [(t["name"], t["description"]) for t in body["tools"]] == [
        (
            "final_answer_Refund",
            "Give the final answer (Refund: Money goes back to the customer.); "
            "this ends the conversation.",
        ),
        (
            "final_answer_Escalation",
            "Give the final answer (Escalation: A person takes the case over.); "
            "this ends the conversation.",
        ),
    ]
    assert body["tools"][1]["input_schema"]["required"] == ["reason"]
    assert body["tool_choice"] == {"type": "any"}


async def test_a_streamed_choice_grows_as_the_type_the_model_called() -> None:
    arguments = json.dumps({"reason": "the screen is cracked"})
    events = [
        START,
        block_start(
            0, {"type": "tool_use", "id": "toolu_1", "name": "final_answer_Escalation", "input": {}}
        ),
        *(
            delta(0, type="input_json_delta", partial_json=arguments[i : i + 9])
            for i in range(0, len(arguments), 9)
        ),
        stop(0),
        message_delta("tool_use", output_tokens=20),
        END,
    ]
    api = FakeApi(reply(sse(*events), headers={"content-type": "text/event-stream"}))
    turn = NeuronTurn(api.provider(), output_type=CHOICE)

    async with turn.stream(ask()) as stream:
        grown = [e.value async for e in stream if isinstance(e, OutputDelta)]

    assert grown and all(isinstance(value, Escalation) for value in grown)
    assert turn.output_value(stream.output) == Escalation(reason="the screen is cracked")
