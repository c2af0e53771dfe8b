"""A strict final-answer tool (`OutputSpec(strict=...)`, tool mode) on OpenAI's two APIs and the
presets: sent in OpenAI's strict subset with `strict: true`, the null the model must send for an
optional field dropped so its default applies (complete and streamed), and where the provider
has no strict mode (or infers none, as Cerebras'), refused when asked for and left as before
when not."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from layer0 import TurnInput
from neuron_turn import NeuronTurn, OutputDelta, OutputSpec, UnsupportedStrictToolsError
from neuron_turn.loop.strict_tools import infers_strict_tools

from ...neuron_turn.test_strict_output import Answer, Stay
from ._responses_support import function_call, response, sse
from ._support import completion, json_response, strict_forms_written, tool_call
from ._support import named_provider as provider
from .test_responses_streaming import CREATED, call_events
from .test_streaming import DONE, USAGE, call_chunk, chunk
from .test_strict_tools import TAKES_STRICT, WITHOUT_STRICT, streamed, weather_tool

STRICT_STAY = OutputSpec(Stay, mode="tool", strict=True)
STAY = Stay(city="Oslo", nights=1, hotel="Grand")
# What strict mode makes the model send: every field, a null for one it has no value for.
NULL_NIGHTS = ('{"city":"Oslo",', '"nights":null,', '"hotel":"Grand"}')
DESCRIPTION = "Give the final answer (Stay: Where to stay.); this ends the conversation."
STRICT_PARAMETERS = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "nights": {
            "anyOf": [{"type": "integer"}, {"type": "null"}],
            "description": "{default: 1} (null: the default)",
        },
        "hotel": {"type": "string"},
    },
    "required": ["city", "nights", "hotel"],
    "additionalProperties": False,
    "description": "Where to stay.",
}
APIS = ["openai", "openai-responses"]


def answered(name: str, arguments: str) -> httpx.Response:
    """The model's call of the final-answer tool with `arguments`, from provider `name`."""
    if name != "openai-responses":
        calls = [tool_call("c1", "final_answer", arguments)]
        return json_response(completion(None, finish_reason="tool_calls", tool_calls=calls))
    return json_response(response(function_call("c1", "final_answer", arguments)))


def streamed_answer(name: str, *pieces: str) -> httpx.Response:
    """The model's call of the final-answer tool, its arguments streamed in `pieces`."""
    if name == "openai":
        first, *rest = pieces
        return streamed(
            chunk({"role": "assistant", "content": None}),
            call_chunk(0, id="c1", name="final_answer", args=first),
            *(call_chunk(0, args=piece) for piece in rest),
            chunk({}, finish="tool_calls"),
            USAGE,
            DONE,
        )
    events = [
        {**event, "item": {**event["item"], "name": "final_answer"}} if "item" in event else event
        for event in call_events(0, "c1", *pieces)
    ]
    whole = function_call("c1", "final_answer", "".join(pieces), item_id="fc_0")
    done = {"type": "response.completed", "response": response(whole)}
    return sse(CREATED, *events, done)


def final_tool(body: dict[str, Any]) -> dict[str, Any]:
    """The final-answer tool of a request body, in its API's shape made flat."""
    [sent] = [
        t
        for t in body["tools"]
        if t.get("name", t.get("function", {}).get("name")) == "final_answer"
    ]
    return dict(sent.get("function", sent))


def ask() -> TurnInput:
    return TurnInput(message="Where do I stay in Oslo?", trigger="user")


# --- the body ---------------------------------------------------------------------


async def test_a_strict_output_goes_to_chat_as_a_strict_final_answer_tool() -> None:
    built, recorder = provider("openai", answered("openai", "".join(NULL_NIGHTS)))

    await NeuronTurn(built, output_type=STRICT_STAY).execute(ask())

    body = recorder.body
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "final_answer",
                "description": DESCRIPTION,
                "parameters": STRICT_PARAMETERS,
                "strict": True,
            },
        }
    ]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "final_answer"}}


async def test_a_strict_output_goes_to_the_responses_api_as_a_strict_final_answer_tool() -> None:
    built, recorder = provider(
        "openai-responses", answered("openai-responses", "".join(NULL_NIGHTS))
    )

    await NeuronTurn(built, output_type=STRICT_STAY).execute(ask())

    assert recorder.body["tools"] == [
        {
            "type": "function",
            "name": "final_answer",
            "description": DESCRIPTION,
            "parameters": STRICT_PARAMETERS,
            "strict": True,
        }
    ]


# --- the answer read back -------------------------------------------------------------


@pytest.mark.parametrize("name", APIS)
async def test_a_strict_answers_null_for_an_optional_field_validates_as_its_default(
    name: str,
) -> None:
    built, recorder = provider(name, answered(name, "".join(NULL_NIGHTS)))
    turn = NeuronTurn(built, output_type=STRICT_STAY)

    output = await turn.execute(ask())

    assert output.exit_reason == "complete"
    assert turn.output_value(output) == STAY
    assert len(recorder.requests) == 1  # no correction sent back for the null


@pytest.mark.parametrize("name", APIS)
async def test_a_streamed_strict_answers_null_validates_as_its_default_and_so_do_its_partials(
    name: str,
) -> None:
    built, recorder = provider(name, streamed_answer(name, *NULL_NIGHTS))
    turn = NeuronTurn(built, output_type=STRICT_STAY)

    async with turn.stream(ask()) as events:
        partials = [event.value async for event in events if isinstance(event, OutputDelta)]

    assert turn.output_value(events.output) == STAY
    assert len(recorder.requests) == 1 and recorder.body["stream"] is True
    # The null comes before a required field: read as sent, no partial would hold the hotel.
    assert partials[-1] == STAY


@pytest.mark.parametrize("name", APIS)
async def test_a_turns_strict_final_answer_tool_has_its_form_written_once(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = strict_forms_written(monkeypatch)
    wrong = '{"city":"Oslo","nights":"many","hotel":"Grand"}'
    built, recorder = provider(name, answered(name, wrong), answered(name, "".join(NULL_NIGHTS)))
    turn = NeuronTurn(built, output_type=OutputSpec(Stay, mode="tool", strict=True))

    output = await turn.execute(ask())

    assert turn.output_value(output) == STAY and len(recorder.requests) == 2
    assert written == ["final_answer"]  # two bodies, two answers read back: one form


# --- strict=None and False ----------------------------------------------------------------


@pytest.mark.parametrize("name", APIS)
async def test_strict_none_sends_a_schema_strict_mode_takes_as_it_is_strict(name: str) -> None:
    built, recorder = provider(name, answered(name, '{"answer":391}'))
    turn = NeuronTurn(built, output_type=OutputSpec(Answer, mode="tool"))

    output = await turn.execute(ask())

    assert turn.output_value(output) == Answer(answer=391)
    sent = final_tool(recorder.body)
    assert sent["strict"] is True
    assert sent["parameters"]["additionalProperties"] is False


@pytest.mark.parametrize(
    ("name", "output_type"),
    [
        *((api, Stay) for api in APIS),  # an optional field: not as it is
        *((preset, Answer) for preset in WITHOUT_STRICT),  # no strict mode
        *((preset, Stay) for preset in WITHOUT_STRICT),
        ("cerebras", Answer),  # strict mode, with narrower limits: not inferred
    ],
)
async def test_strict_none_sends_what_strict_false_sends_byte_for_byte_where_it_is_not_strict(
    name: str, output_type: type[BaseModel]
) -> None:
    value = '{"answer":391}' if output_type is Answer else '{"city":"Oslo","hotel":"Grand"}'
    bodies = []
    for strict in (None, False):
        built, recorder = provider(name, answered(name, value))
        await NeuronTurn(
            built, output_type=OutputSpec(output_type, mode="tool", strict=strict)
        ).execute(ask())
        bodies.append(recorder.requests[0].content)

    assert bodies[0] == bodies[1]
    sent = final_tool(json.loads(bodies[0]))
    assert sent.get("strict") in (None, False)  # Responses sends its false, Chat no key
    assert sent["parameters"] == OutputSpec(output_type).schema


@pytest.mark.parametrize("name", WITHOUT_STRICT)
def test_strict_true_over_a_preset_without_strict_mode_is_refused_when_the_turn_is_made(
    name: str,
) -> None:
    built, recorder = provider(name)

    with pytest.raises(UnsupportedStrictToolsError, match="'Stay' asks for its final-answer tool"):
        NeuronTurn(built, output_type=STRICT_STAY)

    assert recorder.requests == []
    # What is refused is the strict tool, not the output, nor a strict tool elsewhere.
    NeuronTurn(built, output_type=OutputSpec(Stay, mode="tool"))
    with pytest.raises(UnsupportedStrictToolsError, match="get_weather"):
        NeuronTurn(built, tools=[weather_tool([])], output_type=OutputSpec(Stay, mode="tool"))


def test_only_openais_own_apis_infer_strict_tools() -> None:
    inferring = {name for name in TAKES_STRICT if infers_strict_tools(provider(name)[0])}

    assert inferring == {"openai", "openai-responses"}


async def test_strict_true_over_cerebras_sends_a_strict_final_answer_tool() -> None:
    built, recorder = provider("cerebras", answered("cerebras", "".join(NULL_NIGHTS)))
    turn = NeuronTurn(built, output_type=STRICT_STAY)

    output = await turn.execute(ask())

    assert turn.output_value(output) == STAY
    assert final_tool(recorder.body) == {
        "name": "final_answer",
        "description": DESCRIPTION,
        "parameters": STRICT_PARAMETERS,
        "strict": True,
    }
