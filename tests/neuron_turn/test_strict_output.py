"""A typed turn's final-answer tool is strict as its `OutputSpec(strict=...)` says: always with
True (refused when the turn is made over a provider without strict mode), with None only over a
provider that infers strict tools and for a schema strict mode takes as it is, never with False."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, JsonValue

from layer0 import NonRetryableError
from neuron_tool import ToolSchema
from neuron_turn import (
    NeuronTurn,
    NeuronTurnConfig,
    OutputSpec,
    ToolUsePart,
    UnsupportedStrictOutputError,
    UnsupportedStrictToolsError,
)
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from .support import ask


class Answer(BaseModel):
    """The result."""

    answer: int


class Stay(BaseModel):
    """Where to stay."""

    city: str
    nights: int = 1
    hotel: str


# A provider's strict mode: none, taken when asked for (Anthropic's), or also inferred (OpenAI's).
NONE, TAKES, INFERS = "none", "takes", "infers"


def answered(value: dict[str, Any], strict_mode: str) -> ScriptedProvider:
    """A provider with `strict_mode` whose model gives `value` through the final-answer tool."""
    provider = ScriptedProvider(
        [tool_call_response(ToolUsePart("c1", "final_answer", value))],
        takes_strict_tools=strict_mode != NONE,
    )
    provider.infers_strict_tools = strict_mode == INFERS  # type: ignore[attr-defined]
    return provider


async def final_tool_sent(output: OutputSpec[Any], strict_mode: str) -> ToolSchema:
    """The final-answer tool of the one request a tool-mode turn for `output` makes."""
    provider = answered({"answer": 1}, strict_mode)
    # No retry: an answer that is not of `output_type` ends the turn after its one call.
    config = NeuronTurnConfig(output_retries=0)
    await NeuronTurn(provider, output_type=output, config=config).execute(ask("go"))
    [request] = provider.requests
    [final] = request.tools
    return final


async def test_strict_true_offers_a_strict_final_answer_tool_and_its_answer_ends_the_turn() -> None:
    provider = answered({"city": "Oslo", "hotel": "Grand"}, TAKES)
    turn = NeuronTurn(provider, output_type=OutputSpec(Stay, mode="tool", strict=True))

    output = await turn.execute(ask("Where?"))

    assert turn.output_value(output) == Stay(city="Oslo", hotel="Grand")
    [request] = provider.requests
    assert [(tool.name, tool.strict) for tool in request.tools] == [("final_answer", True)]
    # Strict mode's form is the provider's to write: the tool carries the output's own schema.
    assert request.tools[0].input_schema == OutputSpec(Stay).schema


def test_strict_true_over_a_provider_without_strict_mode_is_refused_when_the_turn_is_made() -> None:
    provider = ScriptedProvider([text_response("never")])
    strict = OutputSpec(Stay, mode="tool", strict=True)

    with pytest.raises(UnsupportedStrictOutputError) as refused:
        NeuronTurn(provider, output_type=strict)

    assert isinstance(refused.value, UnsupportedStrictToolsError)
    assert str(refused.value) == (
        "the provider ScriptedProvider has no strict mode for tool inputs, and the output "
        "'Stay' asks for its final-answer tool 'final_answer' to be strict "
        "(OutputSpec(strict=True), or an input's output_strict, in tool mode); make it "
        "strict=None (the answer is still validated against the schema), or use another "
        "output mode"
    )
    assert isinstance(refused.value, NonRetryableError)
    with pytest.raises(UnsupportedStrictToolsError):
        NeuronTurn(provider).with_output(strict)
    assert provider.requests == []


def test_strict_true_is_refused_only_where_the_output_is_asked_for_by_a_tool() -> None:
    provider = ScriptedProvider([text_response("never")])

    # Native output's strict mode is the provider's response format, not a strict tool.
    NeuronTurn(provider, output_type=OutputSpec(Stay, mode="native", strict=True))
    NeuronTurn(provider, output_type=OutputSpec(Stay, mode="prompted", strict=True))


@pytest.mark.parametrize(
    ("output_type", "strict"),
    [
        (Answer, True),  # every property required: strict mode takes it as it is
        (int, True),  # wrapped as {"response": ...}, required
        (Stay, None),  # an optional property strict mode would have to make nullable
        (dict[str, int], None),  # an object of free keys
        (tuple[int, str], None),  # required, but a tuple has no strict form
    ],
)
async def test_strict_none_makes_the_tool_strict_only_for_a_schema_strict_mode_takes_as_it_is(
    output_type: Any, strict: bool | None
) -> None:
    output = OutputSpec(output_type, mode="tool")

    final = await final_tool_sent(output, INFERS)

    assert final.strict is strict


@pytest.mark.parametrize("strict_mode", [NONE, TAKES])
@pytest.mark.parametrize("output_type", [Answer, Stay, int])
async def test_strict_none_where_the_provider_infers_no_strict_tools_offers_the_tool_as_before(
    output_type: Any, strict_mode: str
) -> None:
    output = OutputSpec(output_type, mode="tool")

    final = await final_tool_sent(output, strict_mode)

    assert final.model_dump() == {
        "name": "final_answer",
        "description": output.tool_schema().description,
        "input_schema": output.schema,
        "strict": None,
    }


async def test_strict_false_never_makes_the_tool_strict() -> None:
    output = OutputSpec(Answer, mode="tool", strict=False)

    final = await final_tool_sent(output, INFERS)

    assert final.strict is None


async def test_every_call_of_a_turn_offers_the_same_final_answer_tool_object() -> None:
    # One object, so a provider writes its strict form once for the whole turn.
    provider = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("c1", "final_answer", {"answer": "not a number"})),
            tool_call_response(ToolUsePart("c2", "final_answer", {"answer": 2})),
        ],
        takes_strict_tools=True,
    )
    provider.infers_strict_tools = True  # type: ignore[attr-defined]
    turn = NeuronTurn(provider, output_type=OutputSpec(Answer, mode="tool"))

    output = await turn.execute(ask("go"))

    assert turn.output_value(output) == Answer(answer=2)
    first, second = (request.tools[0] for request in provider.requests)
    assert first.strict is True and first is second


def _nested(depth: int) -> dict[str, JsonValue]:
    """An object schema with objects nested `depth` deep, every property required."""
    schema: dict[str, JsonValue] = {"type": "string"}
    for _ in range(depth):
        schema = {
            "type": "object",
            "properties": {"next": schema},
            "required": ["next"],
            "additionalProperties": False,
        }
    return schema


def _flat(count: int, enum: list[JsonValue] | None = None) -> dict[str, JsonValue]:
    leaf: dict[str, JsonValue] = {"type": "string"} if enum is None else {"enum": enum}
    names = [f"p{n}" for n in range(count)]
    return {
        "type": "object",
        "properties": dict.fromkeys(names, leaf),
        "required": names,
        "additionalProperties": False,
    }


@pytest.mark.parametrize(
    ("schema", "inferred"),
    [
        (_nested(10), True),
        (_nested(11), False),
        (_flat(5000), True),
        (_flat(5001), False),
        (_flat(1, [str(n) for n in range(1000)]), True),
        (_flat(1, [str(n) for n in range(1001)]), False),
        (_flat(1, ["x" * 60] * 251), False),
        (_flat(1, ["x" * 59] * 251), True),
    ],
)
def test_strict_is_inferred_only_within_openais_limits_and_asked_for_past_them(
    schema: dict[str, JsonValue], inferred: bool
) -> None:
    # Past OpenAI's limits a strict request is refused where a loose one runs: strict=None
    # must never make a working request fail; strict=True asks all the same.
    spec = OutputSpec.json_schema(schema, mode="tool")

    assert spec.strict is inferred
    assert (spec.tool_schema(infer_strict=True).strict is True) is inferred
    assert OutputSpec.json_schema(schema, strict=True).strict is True
