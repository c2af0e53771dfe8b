"""A streamed turn with an output type yields its answer as it grows, typed as far as it goes."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from pydantic import BaseModel

from layer0 import CustomExit, TurnInput
from neuron_turn import (
    ModelCallStart,
    NeuronTurn,
    NeuronTurnConfig,
    OutputDelta,
    OutputSpec,
    ToolCallDelta,
    ToolUsePart,
    TurnEvent,
    event_from_json,
    event_json,
    output_value,
)
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response


class City(BaseModel):
    """A city and what is known of it."""

    name: str
    population: int
    districts: list[str] = []


CITY = {"name": "Paris", "population": 2100000, "districts": ["Marais", "Montmartre"]}


async def streamed(
    script: list[Any], output_type: Any = City, *, mode: str, chunk_size: int = 3
) -> tuple[list[TurnEvent], Any]:
    provider = ScriptedProvider(script, chunk_size=chunk_size)
    config = NeuronTurnConfig(model="m", output_mode=mode)  # type: ignore[arg-type]
    turn = NeuronTurn(provider, config=config, output_type=output_type)
    events: list[TurnEvent] = []
    async with turn.stream(TurnInput(message="Paris?", trigger="user")) as stream:
        async for event in stream:
            events.append(event)
    return events, stream.output


def partials(events: list[TurnEvent]) -> list[Any]:
    return [event.value for event in events if isinstance(event, OutputDelta)]


def final_answer(value: Any) -> Any:
    return tool_call_response(ToolUsePart("c1", "final_answer", value))


async def test_tool_mode_yields_the_answer_typed_as_it_grows_from_the_calls_arguments() -> None:
    events, output = await streamed([final_answer(CITY)], mode="tool")

    grown = partials(events)
    assert all(isinstance(city, City) for city in grown)
    # Not before its required fields came; each one differs from the last; the last is the answer.
    assert grown[0] == City(name="Paris", population=2100000)
    assert all(a != b for a, b in itertools.pairwise(grown))
    assert grown[-1] == output_value(output, City) == City.model_validate(CITY)
    # A district's name grows as it arrives: one shows cut short.
    names = {name for city in grown for name in city.districts}
    assert any(name not in ("Marais", "Montmartre") for name in names), names


async def test_a_number_still_arriving_is_not_shown_until_it_is_whole() -> None:
    events, _ = await streamed([final_answer(CITY)], mode="tool", chunk_size=1)

    populations = {city.population for city in partials(events)}
    assert populations == {2100000}  # never 2, 21, 210...


async def test_the_events_json_carries_the_partial_as_json() -> None:
    events, _ = await streamed([final_answer(CITY)], mode="tool")
    first = next(event for event in events if isinstance(event, OutputDelta))

    data = event_json(first)
    assert data == {
        "type": "output_delta",
        "value": {"name": "Paris", "population": 2100000, "districts": []},
    }
    rebuilt = event_from_json(data)
    assert isinstance(rebuilt, OutputDelta) and rebuilt.data == data["value"]


@pytest.mark.parametrize("mode", ["native", "prompted"])
async def test_text_modes_yield_the_answer_past_a_fence_and_stop_at_its_end(mode: str) -> None:
    text = 'Here it is:\n```json\n{"name": "Paris", "population": 2100000}\n```\nEnjoy!'
    events, output = await streamed([text_response(text)], mode=mode)

    grown = partials(events)
    assert grown[0] == City(name="Paris", population=2100000)
    assert grown[-1] == output_value(output, City)
    assert len(grown) == 1  # the fence and prose after the object change nothing


async def test_an_answer_refused_then_asked_again_starts_its_partials_over() -> None:
    script = [
        text_response('{"name": "Lyon"}'),  # no population: refused, asked again
        text_response('{"name": "Paris", "population": 2100000}'),
    ]
    events, output = await streamed(script, mode="native")

    calls = [i for i, event in enumerate(events) if isinstance(event, ModelCallStart)]
    assert len(calls) == 2
    assert partials(events[: calls[1]]) == []  # Lyon never validated, even partly
    assert partials(events[calls[1] :])[-1] == output_value(output, City)


async def test_a_raw_json_schema_yields_the_json_as_far_as_it_came() -> None:
    schema = {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
        "required": ["tags"],
    }
    script = [text_response('{"tags": ["red", "green"]}')]
    events, _ = await streamed(script, OutputSpec.json_schema(schema), mode="native")

    grown = partials(events)
    assert grown[0] == {}  # unchecked: "tags" is required, and not there yet
    assert {"tags": ["red", "gre"]} in grown
    assert grown[-1] == {"tags": ["red", "green"]}


async def test_a_type_asked_for_wrapped_yields_the_value_unwrapped() -> None:
    script = [text_response('{"response": ["eggs", "milk"]}')]
    events, output = await streamed(script, list[str], mode="native")

    grown = partials(events)
    assert grown[-1] == ["eggs", "milk"] == output_value(output, list[str])
    assert all(isinstance(items, list) for items in grown)


async def test_other_tool_calls_and_text_beside_the_final_answer_call_are_not_the_answer() -> None:
    script = [
        tool_call_response(
            ToolUsePart("c0", "final_answerx", {"name": "Lyon", "population": 1}),
            ToolUsePart("c1", "final_answer", CITY),
        )
    ]
    events, _ = await streamed(script, mode="tool")

    assert {city.name for city in partials(events)} == {"Paris"}


async def test_a_turn_without_an_output_type_yields_no_partials() -> None:
    provider = ScriptedProvider([text_response('{"name": "Paris"}')], chunk_size=3)
    turn = NeuronTurn(provider, config=NeuronTurnConfig(model="m"))
    async with turn.stream(TurnInput(message="Paris?", trigger="user")) as stream:
        kinds = [event.kind async for event in stream]
    assert "output_delta" not in kinds


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000,  # nested past any parser's depth
        '{"name": "Par\\ud800is", "population": 1',  # a lone surrogate escaped
        '{"name": "\\',  # cut inside an escape
        "{" + '"a": 1, ' * 10_000,  # a long object that never closes or validates
        '{"name": 5, "population": "many"}',
        "no JSON at all }",
    ],
    ids=["deep", "surrogate", "escape", "long", "wrong-types", "prose"],
)
async def test_a_hostile_answer_streams_without_crashing_the_turn(text: str) -> None:
    events, output = await streamed([text_response(text)] * 3, mode="native", chunk_size=97)

    assert output.exit_reason == CustomExit(name="output_invalid")  # after its two retries
    assert all(isinstance(city, City) for city in partials(events))


async def test_a_long_answer_in_tiny_pieces_is_parsed_as_it_grows_by_a_fraction_not_per_piece() -> (
    None
):
    districts = [f"district {n}" for n in range(2000)]
    long = {"name": "Paris", "population": 2100000, "districts": districts}
    events, output = await streamed([final_answer(long)], mode="tool", chunk_size=1)

    grown = partials(events)
    pieces = sum(isinstance(event, ToolCallDelta) for event in events)
    # Parsed per piece, the ~30,000 pieces would give thousands of partials (each costing a
    # parse of all that came before): a hostile model's way to burn the CPU.
    assert pieces > 30_000 and len(grown) < 250
    assert grown[-1] == output_value(output, City) == City.model_validate(long)
