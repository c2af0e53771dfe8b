"""Typed turn results: output types, validation, corrections, modes and the wire form."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from pydantic import BaseModel, JsonValue
from typing_extensions import TypedDict

from layer0 import Content, CustomBlock, CustomExit, TurnOutput
from neuron_tool import ToolRegistry
from neuron_turn import (
    NeuronTurn,
    NeuronTurnConfig,
    OutputMissingError,
    OutputSpec,
    OutputTypeError,
    OutputValidationError,
    ProviderRequest,
    TextPart,
    ToolChoice,
    ToolResultPart,
    UnsupportedStrictOutputError,
    output_kind,
    output_value,
)
from neuron_turn.testing import ScriptedProvider

from .support import add, answer, ask, build, call, calls


class Answer(BaseModel):
    """The answer to an arithmetic question."""

    answer: int


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Person(TypedDict):
    name: str
    age: int


def typed(
    script: list[Any],
    output_type: Any = Answer,
    *,
    mode: str | None = None,
    retries: int = 2,
    tools: bool = True,
    **config: Any,
) -> tuple[NeuronTurn[Any], ScriptedProvider]:
    provider = ScriptedProvider(script)
    turn = NeuronTurn(
        provider,
        tools=ToolRegistry([add] if tools else []),
        config=NeuronTurnConfig(
            model="m",
            output_mode=mode,  # type: ignore[arg-type]
            output_retries=retries,
            **config,
        ),
        output_type=output_type,
    )
    return turn, provider


def stored_messages(output: TurnOutput) -> Any:
    """The messages the turn's history append declares."""
    return output.effects[-1].model_dump(mode="json")["data"]["messages"]


def last_user_text(request: ProviderRequest) -> str:
    message = request.messages[-1]
    assert message.role == "user"
    return "".join(p.text for p in message.content if isinstance(p, TextPart))


# --- text answers (native and prompted modes) ---------------------------------


async def test_an_invalid_then_valid_answer_ends_with_the_value_after_one_correction() -> None:
    turn, provider = typed([answer("391, I think"), answer('{"answer": 391}')])
    output = await turn.execute(ask("What is 17*23?"))
    assert output.exit_reason == "complete"
    assert turn.output_value(output) == Answer(answer=391)
    assert output.metadata.turns_used == 2
    correction = last_user_text(provider.requests[1])
    assert correction.startswith("Your answer does not match the required output: ")
    assert "not valid JSON" in correction


@pytest.mark.parametrize(
    "text",
    ["[" * 100_000, '{"answer": ' + "[" * 65 + "]" * 65 + "}"],
    ids=["past-the-parser", "past-the-limit"],
)
async def test_an_answer_nested_too_deep_is_sent_back_and_the_turn_goes_on(text: str) -> None:
    turn, provider = typed([answer(text), answer('{"answer": 391}')], mode="prompted")
    output = await turn.execute(ask("What is 17*23?"))
    assert output.exit_reason == "complete"
    assert turn.output_value(output) == Answer(answer=391)
    correction = last_user_text(provider.requests[1])
    assert "the answer nests deeper than 64 levels of objects and arrays" in correction


async def test_a_schema_mismatch_is_sent_back_naming_the_field() -> None:
    turn, provider = typed([answer('{"answer": "many"}'), answer('{"answer": 3}')])
    output = await turn.execute(ask())
    assert turn.output_value(output).answer == 3
    correction = last_user_text(provider.requests[1])
    assert "at answer:" in correction and "integer" in correction


async def test_an_exhausted_retry_budget_exits_output_invalid_without_raising() -> None:
    turn, provider = typed([answer("nope"), answer("still no"), answer("{}")], retries=2)
    output = await turn.execute(ask())
    assert output.exit_reason == CustomExit(name="output_invalid")
    assert output.model_dump(mode="json")["exit_reason"] == {"custom": "output_invalid"}
    assert provider.remaining == 0 and output.metadata.turns_used == 3
    assert output.message.as_text() == "{}"
    with pytest.raises(OutputMissingError, match="output_invalid"):
        turn.output_value(output)


async def test_a_zero_retry_budget_gives_up_at_the_first_invalid_answer() -> None:
    turn, provider = typed([answer("nope"), answer('{"answer": 1}')], retries=0)
    output = await turn.execute(ask())
    assert output.exit_reason == CustomExit(name="output_invalid")
    assert provider.remaining == 1


async def test_a_fenced_answer_validates() -> None:
    turn, _ = typed([answer('```json\n{"answer": 7}\n```')])
    output = await turn.execute(ask())
    assert turn.output_value(output) == Answer(answer=7)


async def test_prompted_mode_puts_the_schema_in_the_system_prompt() -> None:
    turn, provider = typed([answer('{"answer": 1}')], system="Be terse.")
    await turn.execute(ask())
    request = provider.requests[0]
    assert request.output is None
    assert request.system is not None and request.system.startswith("Be terse.\n")
    assert '"answer":{"type":"integer"}' in request.system


async def test_a_prompt_template_is_what_prompted_mode_adds_with_the_schema_in_its_place() -> None:
    template = 'Antworte nur mit JSON wie {"answer": 1}, nach diesem Schema: {schema}'
    spec = OutputSpec(Answer, mode="prompted", prompt_template=template)
    turn, provider = typed([answer('{"answer": 2}')], spec, system="Sei knapp.")

    output = await turn.execute(ask())

    assert turn.output_value(output) == Answer(answer=2)
    system = provider.requests[0].system
    assert system is not None and system.startswith(
        'Sei knapp.\nAntworte nur mit JSON wie {"answer": 1}, nach diesem Schema: {"'
    )
    assert '"answer":{"type":"integer"}' in system and "{schema}" not in system


def test_a_prompt_template_without_a_place_for_the_schema_is_refused() -> None:
    with pytest.raises(OutputTypeError, match=r"has no \{schema\}"):
        OutputSpec(Answer, prompt_template="Answer in JSON.")
    with pytest.raises(OutputTypeError, match=r"has no \{schema\}"):
        OutputSpec.json_schema({"type": "object"}, prompt_template="JSON please")


async def test_native_mode_sends_the_schema_and_no_prompt() -> None:
    turn, provider = typed([answer('{"answer": 1}')], mode="native")
    await turn.execute(ask())
    request = provider.requests[0]
    assert request.system is None
    assert request.output is not None
    assert request.output.name == "Answer"
    assert request.output.description == "The answer to an arithmetic question."
    assert request.output.strict is True
    assert request.output.schema == {
        "type": "object",
        "properties": {"answer": {"type": "integer"}},
        "required": ["answer"],
        "additionalProperties": False,
        "description": "The answer to an arithmetic question.",
    }


async def test_a_native_correction_forbids_tool_calls_so_a_grammar_can_apply() -> None:
    turn, provider = typed([answer("391"), answer('{"answer": 391}')], mode="native")
    await turn.execute(ask())
    assert provider.requests[0].tool_choice is None
    assert provider.requests[1].tool_choice == ToolChoice.NONE


async def test_the_provider_names_its_preferred_mode() -> None:
    class NativeScripted(ScriptedProvider):
        output_modes = ("native", "prompted")

    provider = NativeScripted([answer('{"answer": 2}')])
    turn = NeuronTurn(provider, output_type=Answer)
    await turn.execute(ask())
    assert provider.requests[0].output is not None


# --- tool mode ----------------------------------------------------------------


async def test_tool_mode_offers_final_answer_and_requires_a_tool_call() -> None:
    turn, provider = typed(
        [calls(call("c1", "add", a=17, b=23)), calls(call("c2", "final_answer", answer=40))],
        mode="tool",
    )
    output = await turn.execute(ask(session="s"))
    assert turn.output_value(output) == Answer(answer=40)
    first = provider.requests[0]
    assert [t.name for t in first.tools][-1] == "final_answer"
    assert first.tools[-1].input_schema["required"] == ["answer"]
    assert first.tool_choice == ToolChoice.REQUIRED
    assert [r.name for r in output.metadata.tools_called] == ["add"]
    # The final call is answered, so the stored history never holds a call without a result.
    history = stored_messages(output)
    assert history[-1]["content"][0]["tool_use_id"] == "c2"


async def test_tool_mode_without_other_tools_forces_the_final_answer_tool() -> None:
    turn, provider = typed(
        [calls(call("c1", "final_answer", answer=1))], mode="tool", tools=False, effect_tools=False
    )
    output = await turn.execute(ask())
    assert output.exit_reason == "complete"
    request = provider.requests[0]
    assert [t.name for t in request.tools] == ["final_answer"]
    assert request.tool_choice == ToolChoice.tool("final_answer")


async def test_an_invalid_final_call_gets_an_error_result_and_other_calls_run() -> None:
    turn, provider = typed(
        [
            calls(call("c1", "add", a=1, b=2), call("c2", "final_answer", answer="x")),
            calls(call("c3", "final_answer", answer=3)),
        ],
        mode="tool",
    )
    output = await turn.execute(ask())
    assert turn.output_value(output).answer == 3
    results = provider.requests[1].messages[-1].content
    assert [type(r) for r in results] == [ToolResultPart, ToolResultPart]
    assert isinstance(results[0], ToolResultPart) and results[0].content == "3"
    assert isinstance(results[1], ToolResultPart) and results[1].is_error
    assert results[1].tool_use_id == "c2" and "invalid final answer" in results[1].content


async def test_a_valid_final_call_skips_the_other_calls_of_its_response() -> None:
    turn, _ = typed(
        [calls(call("c1", "add", a=1, b=2), call("c2", "final_answer", answer=5))], mode="tool"
    )
    output = await turn.execute(ask())
    assert turn.output_value(output).answer == 5
    assert output.metadata.tools_called == []


async def test_tool_mode_exhausted_budget_answers_the_dangling_calls() -> None:
    turn, _ = typed([calls(call("c1", "final_answer", wrong=1))], mode="tool", retries=0)
    output = await turn.execute(ask(session="s"))
    assert output.exit_reason == CustomExit(name="output_invalid")
    history = stored_messages(output)
    assert history[-1]["content"][0]["tool_use_id"] == "c1"


async def test_tool_mode_accepts_a_valid_text_answer_too() -> None:
    turn, _ = typed([answer('{"answer": 9}')], mode="tool")
    output = await turn.execute(ask())
    assert turn.output_value(output).answer == 9


async def test_a_tool_named_like_the_final_answer_tool_is_refused() -> None:
    from layer0 import NonRetryableError
    from neuron_tool import tool

    @tool(name="final_answer")
    async def clash(x: int) -> int:
        """Clash."""
        return x

    turn = NeuronTurn(
        ScriptedProvider([]),
        tools=ToolRegistry([clash]),
        config=NeuronTurnConfig(output_mode="tool"),
        output_type=Answer,
    )
    with pytest.raises(NonRetryableError, match="final_answer"):
        await turn.execute(ask())


# --- output types and the wire form -------------------------------------------


@pytest.mark.parametrize(
    ("output_type", "text", "expected"),
    [
        (Point, '{"x": 1, "y": 2}', Point(1, 2)),
        (Person, '{"name": "Ada", "age": 36}', {"name": "Ada", "age": 36}),
        (int, '{"response": 391}', 391),
        (list[str], '{"response": ["a", "b"]}', ["a", "b"]),
    ],
)
async def test_dataclasses_typed_dicts_and_plain_types_validate(
    output_type: Any, text: str, expected: Any
) -> None:
    turn, _ = typed([answer(text)], output_type)
    output = await turn.execute(ask())
    assert turn.output_value(output) == expected
    assert output_value(output, output_type) == expected


async def test_a_raw_json_schema_validates_and_gives_json() -> None:
    schema: dict[str, JsonValue] = {
        "type": "object",
        "properties": {"answer": {"type": "integer"}},
        "required": ["answer"],
    }
    turn, provider = typed(
        [answer('{"answer": "x"}'), answer('{"answer": 391}')], OutputSpec.json_schema(schema)
    )
    output = await turn.execute(ask())
    assert output_value(output) == {"answer": 391}
    assert "at $.answer" in last_user_text(provider.requests[1])


def test_an_invalid_raw_schema_is_refused() -> None:
    with pytest.raises(OutputTypeError, match="not a valid JSON Schema"):
        OutputSpec.json_schema({"type": "no-such-type"})


def test_a_type_without_a_schema_is_refused() -> None:
    with pytest.raises(OutputTypeError, match="no JSON Schema"):
        OutputSpec(object())


async def test_the_result_travels_as_json_text_plus_a_custom_block() -> None:
    turn, _ = typed([answer('{"answer": 391}')])
    output = await turn.execute(ask())
    wire = output.model_dump(mode="json")["message"]
    assert wire == [
        {"type": "text", "text": '{"answer":391}'},
        {
            "type": "custom",
            "content_type": "neuron.output",
            "data": {"name": "Answer", "value": {"answer": 391}},
        },
    ]
    again = TurnOutput.model_validate_json(output.model_dump_json())
    assert output_value(again, Answer) == Answer(answer=391)
    assert again.message.as_text() == '{"answer":391}'


def test_output_value_on_a_free_text_output_says_there_is_none() -> None:
    output = TurnOutput.model_validate(
        {
            "message": "hello",
            "exit_reason": "complete",
            "metadata": {
                "tokens_in": 0,
                "tokens_out": 0,
                "cost": "0",
                "turns_used": 1,
                "tools_called": [],
                "duration": 0,
            },
        }
    )
    with pytest.raises(OutputMissingError, match="no validated result"):
        output_value(output, Answer)


def test_a_stored_value_that_does_not_fit_the_asked_type_is_reported() -> None:
    block = CustomBlock(content_type="neuron.output", data={"name": "x", "value": {"a": 1}})
    output = TurnOutput.model_validate(
        {
            "message": Content([block]).model_dump(mode="json"),
            "exit_reason": "complete",
            "metadata": {
                "tokens_in": 0,
                "tokens_out": 0,
                "cost": "0",
                "turns_used": 1,
                "tools_called": [],
                "duration": 0,
            },
        }
    )
    with pytest.raises(OutputValidationError, match="answer"):
        output_value(output, Answer)


async def test_a_turn_without_output_type_returns_its_text() -> None:
    turn, _ = build([answer("hello")])
    output = await turn.execute(ask())
    assert turn.output_value(output) == "hello"


async def test_with_output_gives_a_typed_turn_sharing_the_collaborators() -> None:
    plain, _ = build([answer('{"answer": 4}')])
    turn = plain.with_output(Answer)
    assert turn.provider is plain.provider and turn.tools is plain.tools
    output = await turn.execute(ask())
    assert turn.output_value(output) == Answer(answer=4)


# --- per-call options in the input's metadata ----------------------------------


async def test_an_output_schema_in_the_metadata_applies_to_that_call() -> None:
    turn, provider = build([answer("no"), answer('{"n": 2}')])
    options = {"output_schema": {"type": "object", "properties": {"n": {"type": "integer"}}}}
    output = await turn.execute(ask(neuron_turn=options, trace="t-1"))
    assert output_value(output) == {"n": 2}
    # The loop's options are not passed on as trace metadata.
    assert provider.requests[0].extra["metadata"] == {"trace": "t-1"}


_N_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
    "required": ["n"],
}


async def test_an_inputs_output_mode_and_strict_shape_that_calls_final_answer_tool() -> None:
    provider = ScriptedProvider([calls(call("f1", "final_answer", n=2))], takes_strict_tools=True)
    turn = NeuronTurn(provider, tools=ToolRegistry([add]))
    options = {"output_schema": _N_SCHEMA, "output_mode": "tool", "output_strict": True}

    output = await turn.execute(ask(neuron_turn=options))

    assert output_value(output) == {"n": 2}
    (final,) = [tool for tool in provider.requests[0].tools if tool.name == "final_answer"]
    assert final.strict is True
    assert provider.requests[0].output is None  # asked through the tool, not natively


@pytest.mark.parametrize(("given", "sent"), [({"output_strict": False}, None), ({}, True)])
async def test_an_inputs_output_strict_false_leaves_its_final_answer_tool_loose_where_inferred(
    given: dict[str, JsonValue], sent: bool | None
) -> None:
    provider = ScriptedProvider([calls(call("f1", "final_answer", n=2))], takes_strict_tools=True)
    provider.infers_strict_tools = True  # type: ignore[attr-defined]  # as OpenAI's providers
    turn = NeuronTurn(provider)
    options = {"output_schema": _N_SCHEMA, "output_mode": "tool", **given}

    await turn.execute(ask(neuron_turn=options))

    assert [tool.strict for tool in provider.requests[0].tools] == [sent]


@pytest.mark.parametrize("said", ["No number today.", '{"n": 4}'])
async def test_an_inputs_output_text_takes_plain_text_or_the_schemas_json(said: str) -> None:
    provider = ScriptedProvider([answer(said)])
    turn = NeuronTurn(provider)
    options = {"output_schema": _N_SCHEMA, "output_name": "number", "output_text": True}

    output = await turn.execute(ask(neuron_turn=options))

    text = said.startswith("No")
    assert output_value(output) == (said if text else {"n": 4})
    assert output_kind(output) == ("text" if text else "number")


async def test_an_inputs_choice_with_output_text_offers_each_kinds_tool_and_forces_none() -> None:
    provider = ScriptedProvider([calls(call("f1", "final_answer_count", n=5))])
    turn = NeuronTurn(provider)
    options = {
        "output_schema": [
            {"name": "count", "schema": _N_SCHEMA},
            {"name": "note", "schema": {"type": "object", "properties": {"t": {"type": "string"}}}},
        ],
        "output_mode": "tool",
        "output_text": True,
    }

    output = await turn.execute(ask(neuron_turn=options))

    assert (output_value(output), output_kind(output)) == ({"n": 5}, "count")
    sent = provider.requests[0]
    assert [t.name for t in sent.tools] == ["final_answer_count", "final_answer_note"]
    assert sent.tool_choice is None  # text is an answer: no call is forced


async def test_an_inputs_native_output_mode_puts_the_schema_on_the_request() -> None:
    provider = ScriptedProvider([answer('{"n": 3}')])
    turn = NeuronTurn(provider)
    options = {"output_schema": _N_SCHEMA, "output_mode": "native", "output_strict": True}

    output = await turn.execute(ask(neuron_turn=options))

    assert output_value(output) == {"n": 3}
    sent = provider.requests[0].output
    assert sent is not None and sent.strict is True and sent.schema["required"] == ["n"]


async def test_an_inputs_strict_final_answer_without_strict_mode_is_refused_unsent() -> None:
    provider = ScriptedProvider([answer("never read")])
    turn = NeuronTurn(provider)
    options = {"output_schema": _N_SCHEMA, "output_mode": "tool", "output_strict": True}

    with pytest.raises(UnsupportedStrictOutputError) as refused:
        await turn.execute(ask(neuron_turn=options))

    assert "'final_answer' to be strict" in str(refused.value)
    assert provider.requests == []


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("required", "must be an object"),
        ({"tool_choice": 3}, "tool_choice must be a string"),
        ({"output_schema": 3}, "output_schema must be a JSON Schema object, or a list of"),
        ({"output_schema": []}, "a choice of schemas needs two or more of them"),
        ({"output_schema": {"type": 7}}, "not a valid JSON Schema"),
        ({"toolchoice": "auto"}, "unknown keys"),
        (
            {"output_schema": {"type": "object"}, "output_mode": "json"},
            "output_mode must be one of native, tool, prompted, not 'json'",
        ),
        (
            {"output_schema": {"type": "object"}, "output_strict": "yes"},
            "output_strict must be true or false, not 'yes'",
        ),
        (
            {"output_mode": "tool", "output_strict": True},
            "output_mode and output_strict given without an output_schema",
        ),
        ({"output_text": True}, "output_text given without an output_schema"),
        (
            {"output_schema": {"type": "object"}, "output_text": "yes"},
            "output_text must be true or false, not 'yes'",
        ),
    ],
)
async def test_malformed_call_options_are_refused_clearly(options: Any, message: str) -> None:
    from layer0 import NonRetryableError

    turn, _ = build([])
    with pytest.raises(NonRetryableError, match=message):
        await turn.execute(ask(neuron_turn=options))


def test_the_correction_text_is_concise() -> None:
    spec: OutputSpec[Answer] = OutputSpec(Answer)
    with pytest.raises(OutputValidationError) as caught:
        spec.validate_text(json.dumps({"answer": "x" * 5000}))
    assert len(str(caught.value)) < 200


@pytest.mark.parametrize(
    ("schema", "strict"),
    [
        ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}, True),
        ({"type": "object", "properties": {"a": {"type": "string"}}}, False),
        ({"type": "object"}, False),
        ({"type": "object", "additionalProperties": {"type": "integer"}}, False),
        ({"type": "object", "properties": {}, "additionalProperties": False}, True),
    ],
)
def test_strict_mode_is_asked_for_only_when_the_schema_fits_it(
    schema: dict[str, JsonValue], strict: bool
) -> None:
    spec = OutputSpec.json_schema(schema)
    assert spec.strict is strict
    assert spec.provider_schema().strict is strict


def test_a_dict_output_is_an_open_object_and_not_strict() -> None:
    assert OutputSpec(dict[str, int]).strict is False
    assert OutputSpec(Answer).strict is True


async def test_an_answer_sent_back_answers_the_calls_it_came_with_so_the_history_stays_valid() -> (
    None
):
    # Some servers stop `end_turn` beside tool calls; the correction must answer them,
    # or the next request holds calls without results, which the APIs refuse.
    beside = dataclasses.replace(
        calls(call("c1", "add", a=1, b=2)),
        content=[TextPart("391, I think"), *calls(call("c1", "add", a=1, b=2)).content],
        stop_reason="end_turn",
    )
    turn, provider = typed([beside, answer('{"answer": 391}')])
    output = await turn.execute(ask(session="s1"))
    assert turn.output_value(output) == Answer(answer=391)
    sent_back = provider.requests[1].messages[-1].content
    assert isinstance(sent_back[0], ToolResultPart) and sent_back[0].tool_use_id == "c1"
    assert sent_back[0].is_error and sent_back[0].content.startswith("Not run: it came beside")
    assert isinstance(sent_back[1], TextPart) and "does not match" in sent_back[1].text
    assert output.metadata.tools_called == []
