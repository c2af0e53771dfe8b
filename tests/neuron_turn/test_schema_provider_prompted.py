"""SchemaProvider in prompted mode: JSON the schema in the system prompt accepts."""

from __future__ import annotations

import dataclasses
import datetime
import json
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field, TypeAdapter
from typing_extensions import TypedDict

from layer0 import ModelError
from neuron_tool import ToolRegistry, tool
from neuron_turn import NeuronTurn, NeuronTurnConfig, OutputSpec, TurnDone, output_kind
from neuron_turn.loop._output_round import OUTPUT_INVALID
from neuron_turn.testing import SchemaProvider

from .support import ask

PROMPTED = NeuronTurnConfig(output_mode="prompted")


class Booking(BaseModel):
    """A room booked."""

    city: str = Field(min_length=3)
    nights: int = Field(ge=1, le=14)
    when: datetime.date
    kind: Literal["hotel", "hostel"]
    tags: list[str]


@dataclasses.dataclass
class Stay:
    """A stay, as a dataclass."""

    city: str
    nights: Annotated[int, Field(ge=1)]


class Guest(TypedDict):
    """A guest, as a TypedDict."""

    name: str
    age: int


class Remark(BaseModel):
    """A remark whose schema holds quotes, braces and letters past ASCII."""

    text: str = Field(description='Say "{hi}" \\ — café')
    mood: Literal["naïve", "ü"]


class Refund(BaseModel):
    """Money goes back to the customer."""

    amount: float = Field(gt=0)


class Escalation(BaseModel):
    """A person takes the case over."""

    reason: str


CHOICE: list[type[BaseModel]] = [Refund, Escalation]
calls: list[str] = []


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    calls.append("add")
    return a + b


@pytest.fixture(autouse=True)
def no_calls_yet() -> None:
    calls.clear()


@pytest.mark.parametrize("output_type", [Booking, Stay, Guest, int, Remark])
async def test_a_prompted_turn_calls_its_tools_then_ends_with_a_valid_value(
    output_type: Any,
) -> None:
    provider = SchemaProvider()
    turn = NeuronTurn(provider, tools=ToolRegistry([add]), config=PROMPTED, output_type=output_type)

    output = await turn.execute(ask())

    assert output.exit_reason == "complete"
    value = turn.output_value(output)
    assert TypeAdapter(output_type).validate_python(value, strict=True) == value
    assert calls == ["add"]
    assert len(provider.requests) == 2  # the tool call, then the answer: no correction
    assert all(request.output is None for request in provider.requests)  # never native


async def test_a_choice_is_answered_as_its_first_type_with_its_kind() -> None:
    turn = NeuronTurn(SchemaProvider(), config=PROMPTED, output_type=CHOICE)

    output = await turn.execute(ask())

    assert output.exit_reason == "complete"
    assert isinstance(turn.output_value(output), Refund)
    assert output_kind(output) == "Refund"


async def test_a_choice_taking_text_is_answered_as_its_type_not_as_text() -> None:
    turn = NeuronTurn(SchemaProvider(), config=PROMPTED, output_type=[Booking, str])

    output = await turn.execute(ask())

    assert output.exit_reason == "complete"
    assert isinstance(turn.output_value(output), Booking)


@pytest.mark.parametrize("mode", ["native", "tool", "prompted"])
async def test_a_choice_is_answered_as_the_kind_asked_for_in_every_mode(mode: str) -> None:
    config = NeuronTurnConfig(output_mode=mode)  # type: ignore[arg-type]
    turn = NeuronTurn(SchemaProvider(kind="Escalation"), config=config, output_type=CHOICE)

    output = await turn.execute(ask())

    assert turn.output_value(output) == Escalation(reason="a")
    assert output_kind(output) == "Escalation"


async def test_a_choice_taking_text_is_answered_with_text_when_asked() -> None:
    turn = NeuronTurn(
        SchemaProvider(kind="text", text="No booking yet."),
        config=PROMPTED,
        output_type=[Booking, str],
    )

    output = await turn.execute(ask())

    assert turn.output_value(output) == "No booking yet."
    assert output_kind(output) == "text"


@pytest.mark.parametrize("mode", ["tool", "prompted"])
async def test_a_kind_the_choice_does_not_hold_is_refused_naming_the_kinds_it_does(
    mode: str,
) -> None:
    config = NeuronTurnConfig(output_mode=mode)  # type: ignore[arg-type]
    turn = NeuronTurn(SchemaProvider(kind="Refnd"), config=config, output_type=CHOICE)

    with pytest.raises(ModelError, match=r"answer as 'Refnd'.*it holds: Refund, Escalation"):
        await turn.execute(ask())


async def test_a_kind_asked_of_a_turn_that_asks_for_text_is_refused_not_answered_with_text() -> (
    None
):
    turn = NeuronTurn(SchemaProvider(kind="Escalation"))

    with pytest.raises(ModelError, match=r"answer as 'Escalation'.*asks for text, no typed"):
        await turn.execute(ask())


async def test_a_raw_schema_asked_for_in_prompted_mode_is_answered_with_json_it_accepts() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"id": {"type": "string", "format": "uuid"}, "n": {"type": "integer"}},
        "required": ["id"],
    }
    provider = SchemaProvider()
    spec = OutputSpec.json_schema(schema, name="ref", mode="prompted")
    turn = NeuronTurn(provider, output_type=spec)

    output = await turn.execute(ask())

    assert turn.output_value(output) == {"id": "00000000-0000-4000-8000-000000000000"}
    assert provider.requests[0].output is None  # the spec's mode, over native-first


async def test_the_request_names_the_prompted_schema_whatever_other_json_the_prompt_holds() -> None:
    template = (
        'Like {"city": "Rome", "nights": 2}, or {"type":"object"}, answer to {schema} '
        'and nothing else: not {"done":true}.'
    )
    spec: OutputSpec[Booking] = OutputSpec(Booking, mode="prompted", prompt_template=template)
    base = 'Lookups return {"type":"object","properties":{"hits":{"type":"integer"}}}.'
    provider = SchemaProvider()
    turn = NeuronTurn(provider, config=NeuronTurnConfig(system=base), output_type=spec)

    output = await turn.execute(ask())

    assert output.exit_reason == "complete"
    assert isinstance(turn.output_value(output), Booking)
    system = provider.requests[0].system or ""
    assert system.startswith(f"{base}\nLike ") and system.endswith('not {"done":true}.')
    named = provider.requests[0].prompted_output
    assert named is not None and named.schema == spec.schema
    assert provider.requests[0].output is None  # nothing native is asked of a provider


async def test_an_output_function_is_called_with_the_arguments_it_answers() -> None:
    def place(city: str, nights: int) -> str:
        """Place an order for a stay."""
        return f"{city} x{nights}"

    turn = NeuronTurn(SchemaProvider(), config=PROMPTED, output_type=place)

    output = await turn.execute(ask())

    assert output.exit_reason == "complete"
    assert turn.output_value(output) == "a x0"


async def test_it_streams_its_prompted_answer() -> None:
    turn = NeuronTurn(SchemaProvider(chunk_size=8), config=PROMPTED, output_type=Booking)

    events = [event async for event in turn.stream(ask())]

    done = events[-1]
    assert isinstance(done, TurnDone) and done.output.exit_reason == "complete"
    assert isinstance(turn.output_value(done.output), Booking)
    deltas = [event for event in events if event.kind == "text_delta"]
    assert len(deltas) > 1  # the JSON in pieces


async def test_given_text_and_untyped_turns_answer_as_before_typed_prompted_ones_json() -> None:
    answered = NeuronTurn(SchemaProvider(), config=PROMPTED, output_type=Guest)
    assert (await answered.execute(ask())).exit_reason == "complete"
    assert SchemaProvider.output_modes == ("native", "tool", "prompted")

    told = SchemaProvider(text="not JSON")
    output = await NeuronTurn(told, config=PROMPTED, output_type=Guest).execute(ask())
    assert output.exit_reason == OUTPUT_INVALID  # its text, each time, never validates
    assert len(told.requests) == 3  # the answer and its two retries

    # JSON in an untyped turn's prompt, written by hand, is no schema to answer by.
    base = 'Answer like {"type": "object", "sum": 5} or {"sum":5}.'
    untyped = NeuronTurn(
        SchemaProvider(), tools=ToolRegistry([add]), config=NeuronTurnConfig(system=base)
    )
    results = await untyped.execute(ask())
    assert json.loads(results.message.as_text() or "") == {"add": 0}
