"""A choice of output types over OpenAI's APIs: native output names the type it chose."""

from __future__ import annotations

import json

import pytest

from layer0 import TurnInput
from neuron_turn import NeuronTurn, OutputSpec

from ...neuron_turn.test_output_choice import Approve, Reject
from ._responses_support import message, response
from ._support import completion, json_response
from ._support import named_provider as provider

REJECTED = {"result": {"kind": "Reject", "data": {"note": "out of stock"}}}


def ask() -> TurnInput:
    return TurnInput(message="Can I order 40 more?", trigger="user")


@pytest.mark.parametrize("name", ["openai", "openai-responses"])
async def test_native_output_sends_the_choice_strict_and_reads_back_the_kind_chosen(
    name: str,
) -> None:
    text = json.dumps(REJECTED)
    answer = completion(text) if name == "openai" else response(message(text))
    model, recorder = provider(name, json_response(answer))
    turn = NeuronTurn(model, output_type=[Approve, Reject])  # native: OpenAI's default

    output = await turn.execute(ask())

    # The same fields on both types: only the kind tells them apart.
    assert turn.output_value(output) == Reject(note="out of stock")
    sent = recorder.body["response_format"] if name == "openai" else recorder.body["text"]["format"]
    schema = sent["json_schema"]["schema"] if name == "openai" else sent["schema"]
    assert schema == OutputSpec([Approve, Reject]).provider_schema().schema
    assert (sent["json_schema"] if name == "openai" else sent)["strict"] is True
    kinds = [b["properties"]["kind"]["enum"] for b in schema["properties"]["result"]["anyOf"]]
    assert kinds == [["Approve"], ["Reject"]]
