"""SchemaProvider: a test double that calls each tool and answers from the schemas alone."""

from __future__ import annotations

import datetime
import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from layer0 import EffectPolicy, ModelError
from neuron_tool import ToolRegistry, ToolReturn, document_block, image_block, tool
from neuron_turn import NeuronTurn, NeuronTurnConfig, OutputSpec
from neuron_turn.testing import SchemaProvider, UnofferedToolError

from .support import ask


class Booking(BaseModel):
    """A room booked."""

    city: str = Field(min_length=3)
    nights: int = Field(ge=1, le=14)
    when: datetime.date
    kind: Literal["hotel", "hostel"]
    rating: float = Field(gt=0, lt=1)
    tags: list[str]
    note: str | None = None


calls: list[str] = []


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    calls.append("add")
    return a + b


@tool
async def book(booking: Booking) -> str:
    """Book a room."""
    calls.append("book")
    return f"booked {booking.city} for {booking.nights} night(s)"


@pytest.fixture(autouse=True)
def no_calls_yet() -> None:
    calls.clear()


@pytest.mark.parametrize("mode", ["native", "tool"])
async def test_a_typed_turn_calls_each_tool_once_and_ends_with_a_valid_value(mode: str) -> None:
    provider = SchemaProvider()
    turn = NeuronTurn(
        provider,
        tools=ToolRegistry([add, book]),
        config=NeuronTurnConfig(output_mode=mode),  # type: ignore[arg-type]
        output_type=Booking,
    )

    output = await turn.execute(ask())

    assert output.exit_reason == "complete"
    assert isinstance(turn.output_value(output), Booking)
    assert calls == ["add", "book"]
    assert all(record.success for record in output.metadata.tools_called)
    assert len(provider.requests) == 2


async def test_a_text_turn_answers_with_the_tools_results_by_name() -> None:
    turn = NeuronTurn(SchemaProvider(), tools=ToolRegistry([add, book]))
    output = await turn.execute(ask())
    assert json.loads(output.message.as_text() or "") == {
        "add": 0,
        "book": "booked aaa for 1 night(s)",
    }


@tool
async def shoot() -> ToolReturn:
    """Take a screenshot and fetch the report."""
    files = [image_block(b"\x89PNG"), document_block(b"%PDF-1.7 plan", name="q3.pdf")]
    return ToolReturn("took them", files=files)


async def test_a_results_files_are_named_in_the_answer_never_their_data() -> None:
    turn = NeuronTurn(SchemaProvider(), tools=ToolRegistry([shoot]))
    output = await turn.execute(ask())
    assert json.loads(output.message.as_text() or "") == {
        "shoot": {
            "result": "took them",
            "files": ["an image (image/png)", "the document q3.pdf (application/pdf)"],
        }
    }


async def test_it_prefers_native_output_and_answers_text_it_was_given() -> None:
    provider = SchemaProvider(text="all done")
    turn = NeuronTurn(provider, tools=ToolRegistry([add]))
    assert (await turn.execute(ask())).message.as_text() == "all done"
    typed = NeuronTurn(SchemaProvider(), output_type=int)
    assert typed.output_value(await typed.execute(ask())) == 0
    assert SchemaProvider.output_modes[0] == "native"


async def test_only_the_tools_named_are_called_and_a_name_not_offered_says_so() -> None:
    turn = NeuronTurn(SchemaProvider(call_tools=["book"]), tools=ToolRegistry([add, book]))
    await turn.execute(ask())
    assert calls == ["book"]

    wrong = NeuronTurn(SchemaProvider(call_tools=["sub"]), tools=ToolRegistry([add]))
    with pytest.raises(
        ModelError, match="told to call sub, which the request does not offer"
    ) as raised:
        await wrong.execute(ask())
    assert isinstance(raised.value.__cause__, UnofferedToolError)


async def test_the_effect_and_memory_tools_are_left_alone_unless_named() -> None:
    policy = EffectPolicy.everything()
    turn = NeuronTurn(
        SchemaProvider(), tools=ToolRegistry([add]), config=NeuronTurnConfig(effect_policy=policy)
    )
    output = await turn.execute(ask())
    assert [r.name for r in output.metadata.tools_called] == ["add"]
    assert output.effects == []


async def test_a_raw_schema_output_is_answered_with_json_it_accepts() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"id": {"type": "string", "format": "uuid"}, "n": {"type": "integer"}},
        "required": ["id"],
    }
    turn = NeuronTurn(SchemaProvider(), output_type=OutputSpec.json_schema(schema, name="ref"))
    output = await turn.execute(ask())
    assert turn.output_value(output) == {"id": "00000000-0000-4000-8000-000000000000"}


async def test_it_streams_its_answers() -> None:
    turn = NeuronTurn(SchemaProvider(text="streamed in pieces", chunk_size=4))
    kinds = [event.kind async for event in turn.stream(ask())]
    assert kinds.count("text_delta") == 5 and kinds[-1] == "turn_done"
