"""Output types a call asks for: by name in an input's options, or per `run` (pydantic-ai's)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, JsonValue

from layer0 import NonRetryableError, TurnInput
from neuron_turn import (
    Decision,
    NeuronTurn,
    OutputDelta,
    OutputSpec,
    OutputTypeError,
    TextOutput,
    output_kind,
    output_value,
    resume_input,
)
from neuron_turn.testing import ScriptedProvider

from .support import answer, call, calls


class Refund(BaseModel):
    order: str
    amount_eur: float


class Escalation(BaseModel):
    reason: str


def _asking(**options: JsonValue) -> TurnInput:
    return TurnInput(message="refund A7", trigger="user", metadata={"neuron_turn": options})


def _turn(*script: Any, **kwargs: Any) -> NeuronTurn[Any]:
    named = {"refund": Refund, "triage": [Refund, Escalation]}
    return NeuronTurn(ScriptedProvider(list(script)), named_output_types=named, **kwargs)


async def test_an_input_naming_an_output_type_gets_its_answer_typed_and_the_model_its_schema() -> (
    None
):
    turn = _turn(answer('{"order": "A7", "amount_eur": 12.5}'))

    output = await turn.execute(_asking(output_type="refund"))

    assert output_value(output, turn.named_outputs["refund"]) == Refund(order="A7", amount_eur=12.5)
    asked = turn.provider.requests[0].prompted_output  # type: ignore[attr-defined]
    assert asked.name == "Refund" and set(asked.schema["properties"]) == {"order", "amount_eur"}


async def test_a_named_choice_answers_with_its_kind() -> None:
    turn = _turn(answer('{"result": {"kind": "Escalation", "data": {"reason": "fraud"}}}'))

    output = await turn.execute(_asking(output_type="triage"))

    assert output_kind(output) == "Escalation"
    assert output_value(output, turn.named_outputs["triage"]) == Escalation(reason="fraud")


async def test_a_named_type_with_output_text_takes_a_plain_answer_too() -> None:
    turn = _turn(answer("I need the order number first."))

    output = await turn.execute(_asking(output_type="refund", output_text=True))

    assert output_value(output) == "I need the order number first."
    assert output_kind(output) == "text"


@pytest.mark.parametrize(
    ("options", "match"),
    [
        (
            {"output_type": "refnd"},
            r"output_type 'refnd' is not one this turn knows; it knows "
            r"\['refund', 'triage'\]; did you mean 'refund'\?",
        ),
        ({"output_type": 7}, r"output_type must be the name of an output type, not 7"),
        (
            {"output_type": "refund", "output_schema": {"type": "object"}},
            r"output_schema cannot be given with it",
        ),
        (
            {"output_type": "refund", "output_mode": "tool", "output_strict": True},
            r"output_mode and output_strict cannot be given with it",
        ),
    ],
)
async def test_an_input_asking_for_a_named_type_wrongly_fails_before_any_model_call(
    options: dict[str, JsonValue], match: str
) -> None:
    turn = _turn()

    with pytest.raises(NonRetryableError, match=match):
        await turn.execute(_asking(**options))

    assert turn.provider.requests == []  # type: ignore[attr-defined]


async def test_a_turn_without_named_types_says_how_to_give_them() -> None:
    turn = NeuronTurn(ScriptedProvider([]))

    with pytest.raises(
        NonRetryableError, match=r"knows no output types by name .*named_output_types"
    ):
        await turn.execute(_asking(output_type="refund"))


def test_a_named_type_that_cannot_be_one_is_refused_naming_it() -> None:
    with pytest.raises(OutputTypeError, match=r"output type 'bad': no JSON Schema"):
        NeuronTurn(ScriptedProvider([]), named_output_types={"bad": object()})
    with pytest.raises(OutputTypeError, match=r"name must be a non-empty string, not ''"):
        NeuronTurn(ScriptedProvider([]), named_output_types={"": int})


async def test_run_with_an_output_type_answers_in_it_for_that_run_only() -> None:
    turn = _turn(answer('{"reason": "fraud"}'), answer("plain"))

    escalated = await turn.run("refund A7", output_type=Escalation)
    plain = await turn.run("thanks")

    assert escalated.output == Escalation(reason="fraud")
    assert plain.output == "plain"
    assert turn.provider.requests[1].prompted_output is None  # type: ignore[attr-defined]


async def test_run_with_a_name_answers_in_the_named_type() -> None:
    turn = _turn(answer('{"order": "A7", "amount_eur": 12.5}'))

    result = await turn.run("refund A7", output_type="refund")

    assert result.output == Refund(order="A7", amount_eur=12.5)


async def test_run_with_a_text_output_per_call_gives_what_its_function_makes() -> None:
    def shout(text: str) -> str:
        return text.upper()

    turn = _turn(answer("a7"))

    result = await turn.run("order?", output_type=TextOutput(shout))

    assert result.output == "A7"


async def test_run_with_an_output_type_and_metadata_asking_for_one_is_refused() -> None:
    turn = _turn()

    for metadata in (
        {"neuron_turn": {"output_type": "refund"}},
        {"neuron_turn": {"output_schema": {"type": "object"}}},
    ):
        with pytest.raises(OutputTypeError, match=r"ask for the output one way"):
            await turn.run("refund A7", output_type="triage", metadata=metadata)
        with pytest.raises(OutputTypeError, match=r"ask for the output one way"):
            await turn.run("refund A7", output_type=Refund, metadata=metadata)
    assert turn.provider.requests == []  # type: ignore[attr-defined]


async def test_a_name_asked_by_run_holds_across_an_approval_pause() -> None:
    from layer0.testing import InMemoryStore
    from neuron_orch_local import LocalOrchestrator
    from neuron_tool import tool
    from neuron_turn import ApprovalPolicy, NeuronTurnConfig

    @tool
    def refund_order(order: str) -> str:
        """Refund an order."""
        return f"refunded {order}"

    store = InMemoryStore()
    script = [
        calls(call("c1", "refund_order", order="A7")),
        answer('{"order": "A7", "amount_eur": 12.5}'),
    ]
    turn = _turn(
        *script,
        tools=[refund_order],
        state=store,
        config=NeuronTurnConfig(approval=ApprovalPolicy.of(["refund_order"])),
    )
    orchestrator = LocalOrchestrator({"a": turn}, store)
    paused = await orchestrator.dispatch(
        "a",
        TurnInput(
            message="refund A7",
            trigger="user",
            session="s1",
            metadata={"neuron_turn": {"output_type": "refund"}},
        ),
    )
    assert paused.exit_reason.model_dump() == {"custom": "awaiting_approval"}

    done = await orchestrator.dispatch("a", resume_input("s1", [Decision.approve("c1")]))

    assert output_value(done, turn.named_outputs["refund"]) == Refund(order="A7", amount_eur=12.5)


def test_with_output_keeps_the_named_types() -> None:
    turn = _turn()

    assert dict(turn.with_output(Refund).named_outputs) == dict(turn.named_outputs)
    assert isinstance(turn.named_outputs["refund"], OutputSpec)


async def test_a_turn_from_plugins_knows_every_output_type_plugins_registered_by_name() -> None:
    from neuron_turn.plugins import PluginManager, hookspecs

    class Types:
        def __init__(self, types: dict[str, Any]) -> None:
            self.types = types

        @hookspecs.hookimpl
        def register_output_types(self, register: Any) -> None:
            for name, output_type in self.types.items():
                register(name, output_type)

    class Model:
        @hookspecs.hookimpl
        def register_providers(self, register: Any) -> None:
            reply = answer('{"reason": "fraud"}')
            register("scripted", lambda model: ScriptedProvider([reply]))

    manager = PluginManager()
    manager.register(Types({"refund": Refund, "shared": int, "mine": int}), name="one")
    manager.register(Types({"shared": str}), name="two")
    manager.register(Model(), name="scripted")

    turn = NeuronTurn.from_plugins(
        model="scripted:m", plugins=manager, named_output_types={"mine": Escalation}
    )

    # Two plugins' "shared" is no one's; a name of the caller's own is over a plugin's.
    assert sorted(turn.named_outputs) == ["mine", "refund"]
    assert (await turn.run("refund A7", output_type="mine")).output == Escalation(reason="fraud")


async def test_run_naming_a_type_with_output_text_in_its_metadata_gives_a_plain_answer() -> None:
    turn = NeuronTurn(
        ScriptedProvider([answer("I need the order number first.")]),
        named_output_types={"refund": Refund},
    )

    result = await turn.run(
        "refund it", output_type="refund", metadata={"neuron_turn": {"output_text": True}}
    )

    assert result.output == "I need the order number first."


def test_a_named_type_asked_for_with_output_text_keeps_the_mode_it_was_made_with() -> None:
    from neuron_turn.loop._output_round import read_call_options

    named = {"refund": OutputSpec(Refund, mode="tool")}

    options = read_call_options(
        {"neuron_turn": {"output_type": "refund", "output_text": True}}, named
    )

    assert options.output is not None and options.output.mode == "tool"


async def test_a_stream_asked_for_a_type_yields_its_partial_answers_and_ends_in_it() -> None:
    turn = NeuronTurn(ScriptedProvider([answer('{"order": "A7", "amount_eur": 12.5}')]))

    events = turn.stream("refund A7", output_type=Refund)
    partials = [event.value async for event in events if isinstance(event, OutputDelta)]

    assert partials and partials[-1] == Refund(order="A7", amount_eur=12.5)
    assert output_value(events.output, Refund) == Refund(order="A7", amount_eur=12.5)


async def test_a_stream_asks_for_a_named_type_and_refuses_a_second_way_of_asking() -> None:
    turn = _turn(answer('{"result": {"kind": "Escalation", "data": {"reason": "fraud"}}}'))

    events = turn.stream(TurnInput(message="hm", trigger="user"), output_type="triage")
    _ = [event async for event in events]
    assert output_kind(events.output) == "Escalation"

    with pytest.raises(OutputTypeError, match="ask for the output one way"):
        turn.stream(_asking(output_type="refund"), output_type=Refund)
