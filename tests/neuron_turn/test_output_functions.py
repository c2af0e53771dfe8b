"""Output functions: the model calls a function for its answer; what it returns ends the turn."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Annotated, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, JsonValue

from layer0 import CustomExit, NonRetryableError, TurnOutput
from neuron_tool import ModelRetry, RunContext, tool
from neuron_turn import (
    NeuronTurn,
    NeuronTurnConfig,
    OutputDelta,
    OutputFunctionError,
    OutputSpec,
    OutputTypeError,
    OutputValidationError,
    TextOutput,
    ToolResultPart,
    output_kind,
    output_validator,
    output_value,
)
from neuron_turn.loop.output_functions import OutputCall
from neuron_turn.testing import ScriptedProvider

from .support import answer, ask, call, calls, json_values


class Refund(BaseModel):
    """Money goes back to the customer."""

    amount: float


@dataclass
class Shop:
    """What the output functions below may reach: the caller's deps."""

    prices: dict[str, float]
    ran: list[str]


async def order_total(ctx: RunContext[Shop], items: list[str]) -> float:
    """Add up the prices of the items the customer named.

    Args:
        items: The items' names, as the shop lists them.
    """
    unknown = [item for item in items if item not in ctx.deps.prices]
    if unknown:
        raise ModelRetry(f"no such items: {', '.join(unknown)}")
    ctx.deps.ran.append("order_total")
    return sum(ctx.deps.prices[item] for item in items)


def shout(text: str) -> str:
    """Say it loud."""
    return text.upper()


def whisper(text: str) -> str:
    """Say it softly."""
    return text.lower()


def _turn(script: list[Any], output_type: Any, **config: Any) -> tuple[NeuronTurn[Any], Any]:
    provider = ScriptedProvider(script)
    settings = NeuronTurnConfig(model="m", **config)
    return NeuronTurn(provider, config=settings, output_type=output_type), provider


def _shop() -> Shop:
    return Shop(prices={"tea": 3.5, "cake": 4.0}, ran=[])


# --- what the model is asked for ---------------------------------------------


def test_the_model_is_asked_for_the_functions_arguments_described_by_its_docstring() -> None:
    spec = OutputSpec(order_total)

    (tool,) = spec.tool_schemas()

    assert tool.name == "final_answer"
    assert tool.input_schema["properties"] == {
        "items": {
            "description": "The items' names, as the shop lists them.",
            "items": {"type": "string"},
            "type": "array",
        }
    }
    assert tool.input_schema["required"] == ["items"]  # the run context is the turn's to give
    assert "Add up the prices of the items the customer named." in (tool.description or "")
    assert spec.name == "order_total"


def test_functions_and_types_in_a_list_are_a_choice_with_a_tool_each() -> None:
    spec = OutputSpec([Refund, shout, order_total])

    tools = spec.tool_schemas()

    assert [t.name for t in tools] == [
        "final_answer_Refund",
        "final_answer_shout",
        "final_answer_order_total",
    ]
    assert [m.name for m in spec.members] == ["Refund", "shout", "order_total"]
    branches = spec.schema["properties"]["result"]["anyOf"]  # type: ignore[index,call-overload]
    assert [b["properties"]["kind"]["enum"] for b in branches] == [
        ["Refund"],
        ["shout"],
        ["order_total"],
    ]
    assert branches[1]["description"] == "Say it loud."


def test_a_bound_method_is_an_output_function_too() -> None:
    class Desk:
        def file(self, title: str) -> Refund:
            """File a refund by its title's length."""
            return Refund(amount=len(title))

    spec = OutputSpec(Desk().file)

    assert spec.tool_schema().input_schema["required"] == ["title"]
    assert spec.name == "file"


def test_a_lambda_is_refused_as_it_has_no_name_for_the_model() -> None:
    with pytest.raises(OutputTypeError, match=r"has no name .* not lambda"):
        OutputSpec(lambda text: text)


def test_a_function_without_a_return_annotation_is_refused_naming_why() -> None:
    def guess(text: str):  # type: ignore[no-untyped-def]
        return text

    with pytest.raises(OutputTypeError, match="'guess' has no return annotation"):
        OutputSpec(guess)


def test_a_function_the_model_could_not_be_told_of_is_refused() -> None:
    def spread(*words: str) -> str:
        return " ".join(words)

    with pytest.raises(OutputTypeError, match=r"'spread': \*args parameters cannot be described"):
        OutputSpec([spread, Refund])


def test_a_choice_beside_a_function_takes_only_records_functions_and_str() -> None:
    with pytest.raises(OutputTypeError, match="int'> cannot be a choice beside an output function"):
        OutputSpec([shout, int])


def test_text_beside_a_function_cannot_be_asked_for_natively() -> None:
    with pytest.raises(OutputTypeError, match="native output"):
        OutputSpec([shout, str], mode="native")


def test_a_function_named_as_a_type_of_the_choice_is_refused() -> None:
    def Refund(amount: float) -> float:  # the clash is the point
        return amount

    with pytest.raises(OutputTypeError, match="have the name 'Refund'"):
        OutputSpec([Refund, globals()["Refund"]])


# --- a turn that answers by a function -----------------------------------------


async def test_the_function_runs_on_the_models_arguments_and_its_result_is_the_answer() -> None:
    shop = _shop()
    turn, provider = _turn(
        [calls(call("c1", "final_answer", items=["tea", "cake"]))], order_total, output_mode="tool"
    )

    output = await turn.execute(ask("Tea and cake, please."), deps=shop)

    assert output.exit_reason == "complete"
    assert turn.output_value(output) == 7.5
    assert output.message.as_text() == "7.5"
    wire = TurnOutput.model_validate_json(output.model_dump_json())
    assert output_value(wire, order_total) == 7.5
    assert shop.ran == ["order_total"]
    assert len(provider.requests) == 1  # the function's result ends the turn: no second call


async def test_model_retry_sends_the_answer_back_with_its_hint_and_the_model_corrects_it() -> None:
    shop = _shop()
    turn, provider = _turn(
        [
            calls(call("c1", "final_answer", items=["tea", "scone"])),
            calls(call("c2", "final_answer", items=["tea"])),
        ],
        order_total,
        output_mode="tool",
    )

    output = await turn.execute(ask(), deps=shop)

    assert turn.output_value(output) == 3.5
    sent_back = provider.requests[1].messages[-1].content[0]
    assert isinstance(sent_back, ToolResultPart) and sent_back.is_error
    assert "no such items: scone" in sent_back.content
    assert shop.ran == ["order_total"]


async def test_a_function_sending_back_past_the_retries_ends_the_turn_output_invalid() -> None:
    turn, _ = _turn(
        [calls(call("c1", "final_answer", items=["scone"]))],
        order_total,
        output_mode="tool",
        output_retries=0,
    )

    output = await turn.execute(ask(), deps=_shop())

    assert output.exit_reason == CustomExit(name="output_invalid")


async def test_arguments_that_do_not_fit_are_sent_back_and_the_function_is_not_run() -> None:
    shop = _shop()
    turn, provider = _turn(
        [
            calls(call("c1", "final_answer", items="tea")),
            calls(call("c2", "final_answer", items=["cake"], extra=1)),
            calls(call("c3", "final_answer", items=["cake"])),
        ],
        order_total,
        output_mode="tool",
    )

    output = await turn.execute(ask(), deps=shop)

    assert turn.output_value(output) == 4.0
    errors = [request.messages[-1].content[0] for request in provider.requests[1:]]
    assert ["items: Input should be a valid list" in e.content for e in errors] == [True, False]  # type: ignore[union-attr]
    assert "extra: Extra inputs are not permitted" in errors[1].content  # type: ignore[union-attr]
    assert shop.ran == ["order_total"]


async def test_a_function_raising_fails_the_turn_naming_the_function() -> None:
    def broken(text: str) -> str:
        raise KeyError(text)

    turn, _ = _turn([calls(call("c1", "final_answer", text="x"))], broken, output_mode="tool")

    with pytest.raises(OutputFunctionError, match=r"output function 'broken' failed: KeyError"):
        await turn.execute(ask())


async def test_a_turn_error_from_a_function_is_raised_as_it_is() -> None:
    def refuse(text: str) -> str:
        raise NonRetryableError("the ledger is closed")

    turn, _ = _turn([calls(call("c1", "final_answer", text="x"))], refuse, output_mode="tool")

    with pytest.raises(NonRetryableError, match="the ledger is closed") as raised:
        await turn.execute(ask())

    assert not isinstance(raised.value, OutputFunctionError)


async def test_a_sync_function_runs_off_the_event_loops_thread() -> None:
    threads: list[int] = []

    def where(text: str) -> str:
        threads.append(threading.get_ident())
        return text

    turn, _ = _turn([calls(call("c1", "final_answer", text="x"))], where, output_mode="tool")

    await turn.execute(ask())

    assert threads and threads[0] != threading.get_ident()


async def test_deps_of_another_type_than_the_function_asks_for_fail_the_turn_naming_them() -> None:
    turn, _ = _turn(
        [calls(call("c1", "final_answer", items=["tea"]))], order_total, output_mode="tool"
    )

    with pytest.raises(OutputFunctionError, match=r"order_total.*Shop"):
        await turn.execute(ask(), deps="not a shop")


# --- a choice holding functions -------------------------------------------------


async def test_the_model_chooses_a_function_and_the_kind_names_it() -> None:
    choice = [Refund, shout, order_total]
    turn, _ = _turn(
        [calls(call("c1", "final_answer_order_total", items=["cake"]))], choice, output_mode="tool"
    )

    output = await turn.execute(ask(), deps=_shop())

    assert output_kind(output) == "order_total"
    assert output_value(output, choice) == 4.0
    assert output_value(output) == 4.0


async def test_two_functions_returning_one_type_keep_the_kind_the_model_chose() -> None:
    turn, _ = _turn(
        [calls(call("c1", "final_answer_whisper", text="Hello"))],
        [shout, whisper],
        output_mode="tool",
    )

    output = await turn.execute(ask())

    assert (turn.output_value(output), output_kind(output)) == ("hello", "whisper")


@pytest.mark.parametrize("mode", ["prompted", "native"])
async def test_a_text_answer_naming_a_functions_kind_runs_that_function(mode: str) -> None:
    turn, _ = _turn(
        [answer('{"result": {"kind": "order_total", "data": {"items": ["tea", "tea"]}}}')],
        [Refund, order_total],
        output_mode=mode,
    )

    output = await turn.execute(ask(), deps=_shop())

    assert (turn.output_value(output), output_kind(output)) == (7.0, "order_total")


async def test_a_type_chosen_beside_functions_runs_none_of_them() -> None:
    shop = _shop()
    turn, _ = _turn(
        [calls(call("c1", "final_answer_Refund", amount=2))],
        [Refund, order_total],
        output_mode="tool",
    )

    output = await turn.execute(ask(), deps=shop)

    assert turn.output_value(output) == Refund(amount=2)
    assert shop.ran == []


async def test_beside_str_plain_text_is_the_answer_and_a_call_runs_the_function() -> None:
    spoken, _ = _turn([answer("just text")], [shout, str], output_mode="tool")
    called, provider = _turn(
        [calls(call("c1", "final_answer", text="loud"))], [shout, str], output_mode="tool"
    )

    text = await spoken.execute(ask())
    loud = await called.execute(ask())

    assert (spoken.output_value(text), output_kind(text)) == ("just text", "text")
    assert (called.output_value(loud), output_kind(loud)) == ("LOUD", "shout")
    assert [t.name for t in provider.requests[0].tools] == ["final_answer"]


# --- with the rest of the loop ------------------------------------------------------


async def test_output_validators_see_what_the_function_returned() -> None:
    seen: list[Any] = []

    @output_validator
    async def no_free_orders(ctx: RunContext[Any], total: float) -> float:
        seen.append(total)
        if total == 0:
            raise ModelRetry("an order costs something")
        return total

    turn, _ = _turn(
        [
            calls(call("c1", "final_answer", items=[])),
            calls(call("c2", "final_answer", items=["tea"])),
        ],
        order_total,
        output_mode="tool",
        output_validators=[no_free_orders],
    )

    output = await turn.execute(ask(), deps=_shop())

    assert turn.output_value(output) == 3.5
    assert seen == [0, 3.5]


async def test_a_streamed_function_answer_yields_no_partial_arguments_as_the_answer() -> None:
    events: list[Any] = []
    turn, _ = _turn([calls(call("c1", "final_answer", text="hey"))], shout, output_mode="tool")

    async with turn.stream(ask()) as stream:
        events.extend([event async for event in stream])
    output = stream.output

    assert turn.output_value(output) == "HEY"
    assert not [e for e in events if isinstance(e, OutputDelta)]


async def test_arguments_of_the_wrong_type_past_the_retries_end_the_turn_never_running_it() -> None:
    ran: list[str] = []

    async def keep(text: str) -> str:
        ran.append(text)
        return text

    turn, _ = _turn(
        [calls(call("c1", "final_answer", text=1))], keep, output_mode="tool", output_retries=0
    )

    output = await turn.execute(ask())

    assert output.exit_reason == CustomExit(name="output_invalid")
    assert ran == []


_JSON = json_values()
_ANSWERS = st.one_of(
    _JSON,
    st.fixed_dictionaries({"items": st.lists(st.text(max_size=4), max_size=3) | _JSON}),
    st.fixed_dictionaries(
        {
            "result": st.fixed_dictionaries(
                {"kind": st.sampled_from(["order_total", "shout"]) | _JSON, "data": _JSON}
            )
        }
    ),
)


@settings(max_examples=300, deadline=None)
@given(value=_ANSWERS, text=st.booleans())
def test_any_answer_to_a_function_is_a_call_or_is_refused_naming_why_never_a_crash(
    value: JsonValue, text: bool
) -> None:
    one = OutputSpec(order_total)
    choice = OutputSpec([order_total, shout, str] if text else [order_total, shout])
    specs = (one, choice)
    for check, answered in (
        *((c, value) for spec in specs for c in (spec.validate_json, spec.validate_partial)),
        *((spec.validate_text, json.dumps(value)) for spec in specs),
    ):
        try:
            result = check(answered)
        except OutputValidationError as exc:
            assert str(exc)
        else:
            assert isinstance(result, OutputCall) or (text and isinstance(result, str))


# --- specs named in a choice (pydantic-ai's ToolOutput(Fruit, name=...)) ---------------


def test_a_spec_in_a_choice_keeps_its_name_description_and_tool_name() -> None:
    spec = OutputSpec(
        [
            OutputSpec(Refund, name="refund", description="Pay the customer back."),
            OutputSpec(shout, tool_name="say_it_loud"),
            order_total,
        ]
    )

    tools = spec.tool_schemas()

    assert [m.name for m in spec.members] == ["refund", "shout", "order_total"]
    assert [t.name for t in tools] == [
        "final_answer_refund",
        "say_it_loud",
        "final_answer_order_total",
    ]
    assert "Pay the customer back." in (tools[0].description or "")


async def test_a_named_spec_is_answered_and_read_back_by_its_own_kind() -> None:
    choice = [OutputSpec(Refund, name="refund"), OutputSpec(Refund, name="credit"), shout]
    turn, _ = _turn(
        [calls(call("c1", "final_answer_credit", amount=5))], choice, output_mode="tool"
    )

    output = await turn.execute(ask())

    assert output_kind(output) == "credit"
    assert output_value(output, choice) == Refund(amount=5)


async def test_a_raw_schema_spec_beside_a_function_is_answered_as_json() -> None:
    ticket = OutputSpec.json_schema(
        {"type": "object", "properties": {"team": {"type": "string"}}, "required": ["team"]},
        name="ticket",
    )
    choice = [ticket, shout, str]
    turn, _ = _turn(
        [answer('{"result": {"kind": "ticket", "data": {"team": "billing"}}}')],
        [ticket, shout],
        output_mode="prompted",
    )

    output = await turn.execute(ask())

    assert (output_value(output), output_kind(output)) == ({"team": "billing"}, "ticket")
    assert OutputSpec(choice).validate_value("plain words") == "plain words"
    assert OutputSpec(choice).validate_value({"team": "x"}) == {"team": "x"}


def test_a_choice_or_one_spec_alone_in_a_list_is_refused_naming_what_to_give() -> None:
    with pytest.raises(OutputTypeError, match="is itself a choice"):
        OutputSpec([OutputSpec([Refund, shout]), order_total])
    with pytest.raises(OutputTypeError, match="give the OutputSpec itself"):
        OutputSpec([OutputSpec(Refund)])


# --- TextOutput: a text answer made the answer by a function ------------------------


def words(text: str) -> list[str]:
    """Split the answer into its words."""
    if not text.strip():
        raise ModelRetry("say something")
    return text.split()


@pytest.mark.parametrize("mode", ["tool", "prompted"])
async def test_a_text_answer_goes_through_the_text_function_and_its_result_is_the_answer(
    mode: str,
) -> None:
    turn, provider = _turn(
        [answer("  "), answer("tea and cake")], TextOutput(words), output_mode=mode
    )

    output = await turn.execute(ask())

    assert turn.output_value(output) == ["tea", "and", "cake"]
    assert (output_kind(output), output.message.as_text()) == ("text", '["tea","and","cake"]')
    assert provider.requests[0].tools == [] and provider.requests[0].system is None
    assert "say something" in provider.requests[1].messages[-1].content[0].text  # type: ignore[union-attr]


async def test_a_call_named_final_answer_is_no_way_around_the_text_function() -> None:
    turn, provider = _turn(
        [calls(call("c1", "final_answer", response=["forged"])), answer("plain words")],
        TextOutput(words),
        output_mode="tool",
    )

    output = await turn.execute(ask())

    assert turn.output_value(output) == ["plain", "words"]
    refused = provider.requests[1].messages[-1].content[0]
    assert isinstance(refused, ToolResultPart) and refused.is_error


async def test_beside_types_text_goes_through_the_function_and_a_type_through_its_tool() -> None:
    choice = [Refund, TextOutput(words)]
    texted, _ = _turn([answer("no refund")], choice, output_mode="tool")
    refunded, _ = _turn([calls(call("c1", "final_answer", amount=3))], choice, output_mode="tool")

    text = await texted.execute(ask())
    refund = await refunded.execute(ask())

    assert (output_value(text, choice), output_kind(text)) == (["no", "refund"], "text")
    assert (output_value(refund, choice), output_kind(refund)) == (Refund(amount=3), "Refund")


async def test_a_text_function_taking_the_run_context_gets_it() -> None:
    def tagged(ctx: RunContext[Shop], text: str) -> str:
        return f"{len(ctx.deps.prices)}:{text}"

    turn, _ = _turn([answer("hi")], TextOutput(tagged), output_mode="prompted")

    output = await turn.execute(ask(), deps=_shop())

    assert turn.output_value(output) == "2:hi"


@pytest.mark.parametrize(
    ("output_type", "says"),
    [
        (TextOutput(shout), None),
        (TextOutput(order_total), "must take one str"),
        ([TextOutput(words), str], "give one way to take a text answer"),
        ([Refund, TextOutput(words), TextOutput(shout)], "give one way to take a text answer"),
    ],
)
def test_a_text_function_must_take_one_str_and_be_the_one_way_text_is_taken(
    output_type: Any, says: str | None
) -> None:
    if says is None:
        assert OutputSpec(output_type).text_only
        return
    with pytest.raises(OutputTypeError, match=says):
        OutputSpec(output_type)


def test_text_through_a_function_cannot_be_asked_for_natively() -> None:
    with pytest.raises(OutputTypeError, match="native output"):
        OutputSpec(TextOutput(words), mode="native")


# --- stop tools -------------------------------------------------------------------------


@tool
def quote(item: str) -> str:
    """The price list's line for an item."""
    return f"{item} costs 3.5" if item == "tea" else "[3.5, 4.0]"


async def test_a_stop_tools_text_goes_through_a_text_outputs_function() -> None:
    provider = ScriptedProvider([calls(call("c1", "quote", item="tea"))])
    settings = NeuronTurnConfig(model="m", stop_at_tools=frozenset({"quote"}))
    turn = NeuronTurn(provider, tools=[quote], config=settings, output_type=TextOutput(words))

    output = await turn.execute(ask())

    assert turn.output_value(output) == ["tea", "costs", "3.5"]
    assert len(provider.requests) == 1  # the stop tool's result ended the turn


@pytest.mark.parametrize(("item", "ends"), [("cake", "complete"), ("tea", "output_invalid")])
async def test_a_stop_tools_result_for_an_output_function_is_a_value_of_what_it_returns(
    item: str, ends: str
) -> None:
    def cheapest(prices: list[float]) -> list[float]:
        return sorted(prices)[:1]

    provider = ScriptedProvider([calls(call("c1", "quote", item=item))])
    settings = NeuronTurnConfig(model="m", stop_at_tools=frozenset({"quote"}))
    turn = NeuronTurn(provider, tools=[quote], config=settings, output_type=cheapest)

    output = await turn.execute(ask())

    if ends == "complete":
        assert turn.output_value(output) == [3.5, 4.0]  # the tool's value, the function unrun
    else:
        assert output.exit_reason == CustomExit(name="output_invalid")


def test_beside_a_raw_schema_a_typed_kinds_value_is_stored_as_its_json() -> None:
    ticket = OutputSpec.json_schema({"type": "object", "properties": {"t": {"type": "string"}}})
    spec = OutputSpec([ticket, Refund, shout])

    assert spec.dump(Refund(amount=2)) == {"amount": 2.0}
    assert spec.dump({"t": "x"}) == {"t": "x"}  # a raw kind's value is JSON as it is


async def test_text_a_text_functions_parameter_refuses_is_sent_back_never_run() -> None:
    ran: list[str] = []

    def code(text: Annotated[str, Field(pattern=r"^[A-Z]{3}$")]) -> str:
        ran.append(text)
        return text

    hostile = "\ud800" + "x" * 10_000  # a lone surrogate and far too long
    turn, provider = _turn([answer(hostile), answer("EUR")], TextOutput(code), output_mode="tool")

    output = await turn.execute(ask())

    assert (turn.output_value(output), ran) == ("EUR", ["EUR"])
    sent_back = provider.requests[1].messages[-1].content[0]
    assert "should match pattern" in sent_back.text  # type: ignore[union-attr]
