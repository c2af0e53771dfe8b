"""A choice of output types: the model answers as one of them, and the answer says which."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, JsonValue
from typing_extensions import TypedDict

from layer0 import CustomBlock, CustomExit, TurnInput, TurnOutput
from neuron_tool import ToolRegistry, tool
from neuron_turn import (
    NeuronTurn,
    NeuronTurnConfig,
    OutputDelta,
    OutputSpec,
    OutputTypeError,
    OutputValidationError,
    ToolChoice,
    ToolResultPart,
    UnsupportedStrictOutputError,
    output_kind,
    output_validator,
    output_value,
)
from neuron_turn.testing import SchemaProvider, ScriptedProvider

from .support import answer, ask, call, calls, json_values


class Refund(BaseModel):
    """Money goes back to the customer."""

    amount: float


class Escalation(BaseModel):
    """A person takes the case over."""

    reason: str


class Approve(BaseModel):
    """The request is approved."""

    note: str


class Reject(BaseModel):
    """The request is rejected."""

    note: str


CHOICE: list[type[Any]] = [Refund, Escalation]


def _turn(script: list[Any], output_type: Any = CHOICE, **config: Any) -> tuple[NeuronTurn, Any]:
    provider = ScriptedProvider(script)
    settings = NeuronTurnConfig(model="m", **config)
    return NeuronTurn(provider, config=settings, output_type=output_type), provider


def kind_of(output: TurnOutput) -> JsonValue:
    """The kind a turn output's result names (None: not a choice's)."""
    blocks = output.message.root
    assert not isinstance(blocks, str)
    (block,) = [b for b in blocks if isinstance(b, CustomBlock)]
    assert isinstance(block.data, dict)
    return block.data.get("kind")


# --- the spec -----------------------------------------------------------------


@pytest.mark.parametrize("given", [[Refund, Escalation], (Refund, Escalation), Refund | Escalation])
def test_a_list_a_tuple_or_a_union_of_models_is_a_choice_with_a_tool_per_type(given: Any) -> None:
    spec = OutputSpec(given)

    tools = spec.tool_schemas()

    assert [m.name for m in spec.members] == ["Refund", "Escalation"]
    assert [t.name for t in tools] == ["final_answer_Refund", "final_answer_Escalation"]
    assert tools[0].input_schema == OutputSpec(Refund).schema
    assert tools[1].description == (
        "Give the final answer (Escalation: A person takes the case over.); "
        "this ends the conversation."
    )


def test_dataclasses_and_typeddicts_make_a_choice_too() -> None:
    @dataclasses.dataclass
    class Parcel:
        weight: float

    class Letter(TypedDict):
        pages: int

    spec = OutputSpec([Parcel, Letter])

    assert [t.name for t in spec.tool_schemas()] == ["final_answer_Parcel", "final_answer_Letter"]
    assert spec.validate_json({"result": {"kind": "Letter", "data": {"pages": 2}}}) == {"pages": 2}


@pytest.mark.parametrize("whole", [int | str, Refund | None, [Refund, int], [Refund]])
def test_a_union_holding_another_type_is_asked_for_whole_through_one_tool(whole: Any) -> None:
    spec = OutputSpec(whole)

    assert spec.members == ()
    assert [t.name for t in spec.tool_schemas()] == ["final_answer"]


def test_the_native_schema_names_each_type_as_a_kind_beside_its_data() -> None:
    spec = OutputSpec(CHOICE)

    branches = spec.schema["properties"]["result"]["anyOf"]  # type: ignore[index,call-overload]

    assert spec.schema["required"] == ["result"] and not spec.wrapped
    assert [b["properties"]["kind"] for b in branches] == [
        {"type": "string", "enum": ["Refund"]},
        {"type": "string", "enum": ["Escalation"]},
    ]
    assert [b["properties"]["data"] for b in branches] == [
        {"$ref": "#/$defs/Refund"},
        {"$ref": "#/$defs/Escalation"},
    ]
    assert spec.provider_schema().strict is True  # every branch fits strict mode as it is


@pytest.mark.parametrize(
    ("answer_json", "says"),
    [
        ({"kind": "Refund"}, 'must be a JSON object {"result": {"kind": <\'Refund\' or'),
        ({"result": {"kind": "Gift", "data": {}}}, "the kind 'Gift' is none of 'Refund'"),
        ({"result": {"kind": "Refund", "data": {"reason": "x"}}}, "at amount: Field required"),
        ([1], '"data": <the answer of that kind>'),
    ],
)
def test_an_answer_not_of_the_choices_form_is_refused_naming_what_is_wrong(
    answer_json: JsonValue, says: str
) -> None:
    with pytest.raises(OutputValidationError) as refused:
        OutputSpec(CHOICE).validate_json(answer_json)

    assert says in str(refused.value)


def test_two_types_of_one_name_are_refused_as_the_model_could_not_tell_them_apart() -> None:
    first = type("Item", (BaseModel,), {"__annotations__": {"a": int}})
    second = type("Item", (BaseModel,), {"__annotations__": {"b": int}})

    with pytest.raises(OutputTypeError, match="two output types of the choice have the name"):
        OutputSpec([first, second])


def test_an_empty_list_of_types_is_refused() -> None:
    with pytest.raises(OutputTypeError, match="an empty list of output types"):
        OutputSpec([])


def test_a_choices_one_final_answer_tool_is_asked_for_by_name_and_refused_clearly() -> None:
    with pytest.raises(OutputTypeError, match="each answered through its own final-answer tool"):
        OutputSpec(CHOICE).tool_schema()


# --- tool mode ----------------------------------------------------------------


async def test_the_model_answers_through_one_types_tool_and_the_answer_is_of_that_type() -> None:
    turn, provider = _turn(
        [calls(call("c1", "final_answer_Escalation", reason="a broken screen"))],
        output_mode="tool",
    )

    output = await turn.execute(ask("My phone arrived broken."))

    assert turn.output_value(output) == Escalation(reason="a broken screen")
    assert kind_of(output) == "Escalation"
    sent = provider.requests[0]
    assert [t.name for t in sent.tools] == ["final_answer_Refund", "final_answer_Escalation"]
    assert sent.tool_choice == ToolChoice.REQUIRED


async def test_two_types_of_the_same_fields_read_back_as_the_one_the_model_chose() -> None:
    turn, _ = _turn(
        [calls(call("c1", "final_answer_Reject", note="late"))],
        [Approve, Reject],
        output_mode="tool",
    )

    output = await turn.execute(ask())
    wire = TurnOutput.model_validate_json(output.model_dump_json())

    assert output_value(wire, [Approve, Reject]) == Reject(note="late")
    assert output_value(wire, OutputSpec(Approve | Reject)) == Reject(note="late")


async def test_a_bad_answer_to_one_types_tool_goes_back_naming_that_tool() -> None:
    turn, provider = _turn(
        [
            calls(call("c1", "final_answer_Refund", amount="lots")),
            calls(call("c2", "final_answer_Refund", amount=12.5)),
        ],
        output_mode="tool",
    )

    output = await turn.execute(ask())

    assert turn.output_value(output) == Refund(amount=12.5)
    (error,) = [
        p for p in provider.requests[1].messages[-1].content if isinstance(p, ToolResultPart)
    ]
    assert error.is_error and error.content.endswith(
        "Call final_answer_Refund again with a corrected input."
    )


async def test_a_text_answer_in_tool_mode_is_asked_again_through_one_of_the_tools() -> None:
    turn, provider = _turn(
        [answer("I refund it."), calls(call("c2", "final_answer_Refund", amount=3))],
        output_mode="tool",
    )

    await turn.execute(ask())

    correction = provider.requests[1].messages[-1].content[-1].text
    assert correction.endswith(
        "Give it by calling one of final_answer_Refund, final_answer_Escalation."
    )


async def test_the_first_final_call_wins_and_the_others_are_not_run() -> None:
    turn, _ = _turn(
        [
            calls(
                call("c1", "final_answer_Escalation", reason="unsure"),
                call("c2", "final_answer_Refund", amount=1),
            )
        ],
        output_mode="tool",
    )

    output = await turn.execute(ask())

    assert turn.output_value(output) == Escalation(reason="unsure")


async def test_a_tool_named_as_one_types_final_answer_tool_is_refused() -> None:
    @tool
    async def final_answer_Refund(amount: float) -> str:
        """Shadow the choice's tool."""
        return "no"

    provider = ScriptedProvider([answer("never read")])
    turn = NeuronTurn(
        provider,
        tools=ToolRegistry([final_answer_Refund]),
        config=NeuronTurnConfig(output_mode="tool"),
        output_type=CHOICE,
    )

    with pytest.raises(Exception, match="'final_answer_Refund', the final-answer tool's name"):
        await turn.execute(ask())


async def test_a_tool_of_the_turns_own_is_offered_beside_the_choices_tools() -> None:
    @tool
    async def order_total(order: str) -> float:
        """What an order cost."""
        return 12.5

    provider = ScriptedProvider(
        [
            calls(call("c1", "order_total", order="A7")),
            calls(call("c2", "final_answer_Refund", amount=12.5)),
        ]
    )
    turn = NeuronTurn(
        provider,
        tools=ToolRegistry([order_total]),
        config=NeuronTurnConfig(output_mode="tool"),
        output_type=CHOICE,
    )

    output = await turn.execute(ask())

    assert turn.output_value(output) == Refund(amount=12.5)
    offered = [t.name for t in provider.requests[0].tools]
    assert offered == ["order_total", "final_answer_Refund", "final_answer_Escalation"]


async def test_a_strict_choice_over_a_provider_without_strict_mode_names_every_tool() -> None:
    with pytest.raises(UnsupportedStrictOutputError) as refused:
        NeuronTurn(ScriptedProvider([]), output_type=OutputSpec(CHOICE, mode="tool", strict=True))

    assert "tools 'final_answer_Refund', 'final_answer_Escalation' to be strict" in str(
        refused.value
    )


async def test_a_strict_choice_over_a_provider_with_strict_mode_sends_each_tool_strict() -> None:
    provider = ScriptedProvider(
        [calls(call("c1", "final_answer_Refund", amount=2))], takes_strict_tools=True
    )
    turn = NeuronTurn(provider, output_type=OutputSpec(CHOICE, mode="tool", strict=True))

    await turn.execute(ask())

    assert [t.strict for t in provider.requests[0].tools] == [True, True]


# --- native and prompted modes -------------------------------------------------


async def test_native_mode_sends_the_choices_schema_and_reads_the_kind() -> None:
    turn, provider = _turn(
        [answer('{"result": {"kind": "Reject", "data": {"note": "no stock"}}}')],
        [Approve, Reject],
        output_mode="native",
    )

    output = await turn.execute(ask())

    assert turn.output_value(output) == Reject(note="no stock")
    assert kind_of(output) == "Reject"
    assert provider.requests[0].output == OutputSpec([Approve, Reject]).provider_schema()


async def test_prompted_mode_corrects_an_unknown_kind_naming_the_kinds() -> None:
    turn, provider = _turn(
        [
            answer('{"result": {"kind": "Maybe", "data": {"note": "?"}}}'),
            answer('{"result": {"kind": "Approve", "data": {"note": "ok"}}}'),
        ],
        [Approve, Reject],
        output_mode="prompted",
    )

    output = await turn.execute(ask())

    assert turn.output_value(output) == Approve(note="ok")
    assert "the kind 'Maybe' is none of 'Approve', 'Reject'" in (
        provider.requests[1].messages[-1].content[-1].text
    )
    assert '"kind":{"type":"string","enum":["Approve"]}' in provider.requests[0].system


async def test_a_choice_that_never_validates_ends_output_invalid() -> None:
    turn, _ = _turn([answer("no"), answer("no"), answer("no")], output_mode="prompted")

    output = await turn.execute(ask())

    assert output.exit_reason == CustomExit(name="output_invalid")


# --- streamed, validators, stop tools -------------------------------------------


async def test_a_streamed_choice_yields_partials_of_the_type_the_model_chose() -> None:
    provider = ScriptedProvider(
        [calls(call("c1", "final_answer_Escalation", reason="a broken screen, twice"))],
        chunk_size=4,
    )
    turn = NeuronTurn(provider, config=NeuronTurnConfig(output_mode="tool"), output_type=CHOICE)

    async with turn.stream(TurnInput(message="?", trigger="user")) as stream:
        events = [event async for event in stream]

    grown = [e.value for e in events if isinstance(e, OutputDelta)]
    assert grown and all(isinstance(value, Escalation) for value in grown)
    assert grown[-1] == Escalation(reason="a broken screen, twice")


async def test_a_validators_answer_of_another_type_is_stored_as_that_kind() -> None:
    @output_validator
    async def cap(ctx: Any, value: Refund | Escalation) -> Refund | Escalation:
        if isinstance(value, Refund) and value.amount > 100:
            return Escalation(reason="a refund over 100 needs a person")
        return value

    turn, _ = _turn(
        [calls(call("c1", "final_answer_Refund", amount=500))],
        output_mode="tool",
        output_validators=[cap],
    )

    output = await turn.execute(ask())

    assert kind_of(output) == "Escalation"
    assert turn.output_value(output) == Escalation(reason="a refund over 100 needs a person")


async def test_a_stop_tools_result_of_one_type_is_the_answer_of_that_type() -> None:
    @tool
    async def refund_order(order: str) -> Refund:
        """Refund an order in full."""
        return Refund(amount=12.5)

    provider = ScriptedProvider([calls(call("c1", "refund_order", order="A7"))])
    turn = NeuronTurn(
        provider,
        tools=ToolRegistry([refund_order]),
        config=NeuronTurnConfig(output_mode="tool", stop_at_tools=["refund_order"]),
        output_type=CHOICE,
    )

    output = await turn.execute(ask())

    assert turn.output_value(output) == Refund(amount=12.5)
    assert kind_of(output) == "Refund"


async def test_a_result_stored_without_a_kind_reads_back_as_the_first_type_that_takes_it() -> None:
    one_type, _ = _turn(
        [calls(call("c1", "final_answer", reason="x"))], Escalation, output_mode="tool"
    )
    output = await one_type.execute(ask())

    assert kind_of(output) is None
    assert output_value(output, Refund | Escalation) == Escalation(reason="x")


async def test_the_schema_provider_answers_a_choice_through_its_first_types_tool() -> None:
    provider = SchemaProvider()
    turn = NeuronTurn(provider, config=NeuronTurnConfig(output_mode="tool"), output_type=CHOICE)

    output = await turn.execute(ask())

    assert isinstance(turn.output_value(output), Refund)
    assert len(provider.requests) == 1
    assert provider._calls == 1  # one call, to the first type's tool alone


_JSON = json_values()
_ANSWERS = st.one_of(
    _JSON,
    st.fixed_dictionaries(
        {
            "result": st.fixed_dictionaries(
                {"kind": st.sampled_from(["Refund", "Escalation"]) | _JSON, "data": _JSON}
            )
        }
    ),
)


@settings(max_examples=300, deadline=None)
@given(
    value=_ANSWERS,
    tool=st.sampled_from(["final_answer_Refund", "final_answer_Escalation"]),
    text=st.booleans(),
)
def test_any_answer_to_a_choice_validates_or_is_refused_naming_why_never_a_crash(
    value: JsonValue, tool: str, text: bool
) -> None:
    spec = OutputSpec([*CHOICE, str] if text else CHOICE)
    member = spec.final_spec(tool)
    assert member is not None
    checks = (spec.validate_json, spec.validate_partial, member.validate_json)
    for check, answered in (*((c, value) for c in checks), (spec.validate_text, json.dumps(value))):
        try:
            result = check(answered)
        except OutputValidationError as exc:
            assert str(exc)
        else:
            assert isinstance(result, Refund | Escalation | str) and (
                text or not isinstance(result, str)
            )


def test_each_branch_of_the_native_schema_is_described_as_its_type_is() -> None:
    branches = OutputSpec(CHOICE).schema["properties"]["result"]["anyOf"]  # type: ignore[index,call-overload]

    assert [b.get("description") for b in branches] == [
        "Money goes back to the customer.",
        "A person takes the case over.",
    ]


# --- text or typed ---------------------------------------------------------------


class _NativeFirst(ScriptedProvider):
    """A scripted model whose provider prefers native output, as OpenAI's and Gemini's do."""

    output_modes = ("native", "tool", "prompted")


def test_a_choice_with_str_takes_text_and_asks_its_one_type_through_final_answer() -> None:
    spec = OutputSpec([Refund, str])

    assert spec.allows_text and [m.name for m in spec.members] == ["Refund"]
    assert [t.name for t in spec.tool_schemas()] == ["final_answer"]
    assert spec.schema == OutputSpec(Refund).schema
    both = OutputSpec([Refund, Escalation, str])
    assert both.allows_text
    assert [t.name for t in both.tool_schemas()] == [
        "final_answer_Refund",
        "final_answer_Escalation",
    ]


async def test_a_text_answer_is_the_answer_as_it_is_and_no_call_is_forced() -> None:
    turn, provider = _turn(
        [answer("Sorry to hear it; I have passed it on.")], [Refund, str], output_mode="tool"
    )

    output = await turn.execute(ask())

    assert turn.output_value(output) == "Sorry to hear it; I have passed it on."
    assert output.message.as_text() == "Sorry to hear it; I have passed it on."
    assert kind_of(output) == "text"
    sent = provider.requests[0]
    assert [t.name for t in sent.tools] == ["final_answer"] and sent.tool_choice is None
    wire = TurnOutput.model_validate_json(output.model_dump_json())
    assert output_value(wire, [Refund, str]) == "Sorry to hear it; I have passed it on."


async def test_a_structured_answer_beside_text_comes_through_the_tool() -> None:
    turn, _ = _turn(
        [calls(call("c1", "final_answer", amount=20))], [Refund, str], output_mode="tool"
    )

    output = await turn.execute(ask())

    assert turn.output_value(output) == Refund(amount=20.0)
    assert kind_of(output) == "Refund"


async def test_a_provider_preferring_native_output_asks_a_text_choice_through_tools() -> None:
    provider = _NativeFirst([answer("Done.")])
    turn = NeuronTurn(provider, output_type=[Refund, str])

    output = await turn.execute(ask())

    assert turn.output_value(output) == "Done."
    assert provider.requests[0].output is None
    assert [t.name for t in provider.requests[0].tools] == ["final_answer"]


def test_a_text_choice_asked_natively_is_refused_naming_why() -> None:
    with pytest.raises(OutputTypeError, match="takes plain text, which native output"):
        OutputSpec([Refund, str], mode="native")
    with pytest.raises(OutputTypeError, match=r"NeuronTurnConfig\.output_mode is native"):
        NeuronTurn(
            ScriptedProvider([]),
            config=NeuronTurnConfig(output_mode="native"),
            output_type=[Refund, str],
        )


@pytest.mark.parametrize(
    ("said", "value"),
    [
        ("I will look into it.", "I will look into it."),
        ('{"amount": 7}', Refund(amount=7.0)),
        ('```json\n{"amount": 7}\n```', Refund(amount=7.0)),
        ('"just a quoted line"', '"just a quoted line"'),
    ],
)
async def test_prompted_text_or_json_is_read_as_text_or_as_the_type(said: str, value: Any) -> None:
    turn, provider = _turn([answer(said)], [Refund, str], output_mode="prompted")

    output = await turn.execute(ask())

    assert turn.output_value(output) == value
    assert provider.requests[0].system.startswith("Give your final answer as plain text, or")


async def test_a_prompted_json_object_of_no_type_is_corrected_not_taken_as_text() -> None:
    turn, provider = _turn(
        [answer('{"amount": "lots"}'), answer('{"amount": 5}')],
        [Refund, str],
        output_mode="prompted",
    )

    output = await turn.execute(ask())

    assert turn.output_value(output) == Refund(amount=5.0)
    assert len(provider.requests) == 2


async def test_a_stop_tools_plain_text_is_a_text_answer() -> None:
    @tool
    async def hand_over(reason: str) -> str:
        """Pass the case to a person."""
        return "A person will call you today."

    provider = ScriptedProvider([calls(call("c1", "hand_over", reason="angry"))])
    turn = NeuronTurn(
        provider,
        tools=ToolRegistry([hand_over]),
        config=NeuronTurnConfig(output_mode="tool", stop_at_tools=["hand_over"]),
        output_type=[Refund, str],
    )

    output = await turn.execute(ask())

    assert turn.output_value(output) == "A person will call you today."
    assert kind_of(output) == "text"


# --- a choice of raw JSON Schemas, per call and on the wire ------------------------

REFUND_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "properties": {"amount": {"type": "number"}},
    "required": ["amount"],
}
ESCALATION_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "properties": {"reason": {"type": "string"}},
    "required": ["reason"],
}
RAW_CHOICE: list[JsonValue] = [
    {"name": "refund", "schema": REFUND_SCHEMA},
    {"name": "escalation", "schema": ESCALATION_SCHEMA},
]


async def test_an_inputs_list_of_schemas_is_a_choice_answered_and_named_by_kind() -> None:
    turn, provider = _turn(
        [calls(call("c1", "final_answer_escalation", reason="broken"))], None, output_mode="tool"
    )

    output = await turn.execute(ask(neuron_turn={"output_schema": RAW_CHOICE}))

    assert output_value(output) == {"reason": "broken"}
    assert output_kind(output) == "escalation"
    assert [t.name for t in provider.requests[0].tools] == [
        "final_answer_refund",
        "final_answer_escalation",
    ]
    assert provider.requests[0].tools[0].input_schema == REFUND_SCHEMA


async def test_a_prompted_choice_of_schemas_reads_the_kind_from_the_answer() -> None:
    said = '{"result": {"kind": "refund", "data": {"amount": 3}}}'
    turn, provider = _turn([answer(said)], None, output_mode="prompted")

    output = await turn.execute(ask(neuron_turn={"output_schema": RAW_CHOICE}))

    assert (output_value(output), output_kind(output)) == ({"amount": 3}, "refund")
    assert '"enum":["refund"]' in provider.requests[0].system


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ([{"name": "refund", "schema": REFUND_SCHEMA}], "needs two or more of them"),
        ([*RAW_CHOICE, {"name": "refund", "schema": {}}], "names the kind 'refund' twice"),
        ([*RAW_CHOICE, "gift"], 'output_schema[2] must be {"name": <a kind>, "schema": {...}}'),
        ([{"name": "a", "schema": REFUND_SCHEMA, "x": 1}, RAW_CHOICE[1]], "output_schema[0]"),
        ([{"name": "a", "schema": {"type": "string"}}, RAW_CHOICE[1]], "object at its root"),
        ([{"name": "a", "schema": {"type": 7}}, RAW_CHOICE[1]], "not a valid JSON Schema"),
    ],
)
async def test_a_malformed_choice_of_schemas_is_refused_before_any_call(
    given: JsonValue, says: str
) -> None:
    from layer0 import NonRetryableError

    turn, provider = _turn([answer("never read")], None)

    with pytest.raises(NonRetryableError) as refused:
        await turn.execute(ask(neuron_turn={"output_schema": given}))

    assert says in str(refused.value)
    assert provider.requests == []


def test_schemas_of_a_choice_share_defs_and_refuse_ones_that_disagree() -> None:
    def with_def(kind: str, shape: JsonValue) -> dict[str, JsonValue]:
        return {
            "type": "object",
            "properties": {kind: {"$ref": "#/$defs/Money"}},
            "$defs": {"Money": shape},
        }

    money: JsonValue = {"type": "number"}
    spec = OutputSpec.json_schema_choice({"a": with_def("a", money), "b": with_def("b", money)})
    assert spec.schema["$defs"] == {"Money": money}
    assert spec.validate_json({"result": {"kind": "b", "data": {"b": 2}}}) == {"b": 2}

    with pytest.raises(OutputTypeError, match="define 'Money' differently"):
        OutputSpec.json_schema_choice({"a": with_def("a", money), "b": with_def("b", {})})
