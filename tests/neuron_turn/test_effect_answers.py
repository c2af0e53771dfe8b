"""An orchestrator answering effect-tool calls while the turn waits (`neuron_turn.answering`)."""

from __future__ import annotations

from layer0 import (
    DelegateEffect,
    Effect,
    HookPoint,
    LogEffect,
    LogLevel,
    SkipTool,
    WriteMemoryEffect,
    usd,
)
from layer0.testing import RecordingHook
from neuron_hooks import HookRegistry
from neuron_turn import EffectAnswer, ToolResultPart, answering

from .support import TRUSTING, answer, ask, build, call, calls, dollars

RECORD = LogEffect(level=LogLevel.INFO, message="ran it", data=None)


class Answerer:
    """Answers delegations with a fixed text and cost; leaves other effects alone."""

    def __init__(self) -> None:
        self.seen: list[Effect] = []

    async def __call__(self, effect: Effect) -> EffectAnswer | None:
        self.seen.append(effect)
        if not isinstance(effect, DelegateEffect):
            return None
        return EffectAnswer(
            text=f"{effect.agent} says 42",
            effects=(RECORD,),
            tokens_in=7,
            tokens_out=3,
            cost=usd("0.25"),
        )


def results(request_messages: object) -> list[ToolResultPart]:
    last = request_messages[-1]  # type: ignore[index]
    return [p for p in last.content if isinstance(p, ToolResultPart)]


async def test_an_answered_effect_is_the_tool_result_and_its_totals_are_added() -> None:
    turn, provider = build(
        [calls(call("c1", "delegate", agent="calc", message="6 * 7"), cost="0.5"), answer("42")],
        config=TRUSTING,
    )
    answerer = Answerer()

    with answering(answerer):
        output = await turn.execute(ask())

    assert results(provider.requests[1].messages) == [ToolResultPart("c1", "calc says 42")]
    assert output.effects == [RECORD]  # the record stands for the delegation carried out
    assert (output.metadata.tokens_in, output.metadata.tokens_out) == (27, 13)
    assert output.metadata.cost == dollars("0.75")


async def test_effects_the_answerer_leaves_alone_are_declared_as_usual() -> None:
    turn, provider = build(
        [calls(call("c1", "write_memory", scope="global", key="k", value=1)), answer("ok")],
        config=TRUSTING,
    )
    with answering(Answerer()):
        output = await turn.execute(ask())
    assert results(provider.requests[1].messages) == [ToolResultPart("c1", "Memory written.")]
    assert output.effects == [WriteMemoryEffect(scope="global", key="k", value=1)]


async def test_an_error_answer_is_a_tool_error() -> None:
    async def refuse(effect: Effect) -> EffectAnswer:
        return EffectAnswer(text="Error: no such agent", is_error=True)

    turn, provider = build(
        [calls(call("c1", "delegate", agent="ghost", message="x")), answer("ok")], config=TRUSTING
    )
    with answering(refuse):
        output = await turn.execute(ask())
    assert results(provider.requests[1].messages) == [
        ToolResultPart("c1", "Error: no such agent", is_error=True)
    ]
    assert output.effects == []
    assert [c.success for c in output.metadata.tools_called] == [False]


async def test_a_call_a_hook_skips_never_reaches_the_answerer() -> None:
    hooks = HookRegistry()
    hooks.add(RecordingHook({HookPoint.PRE_TOOL_USE}, action=SkipTool(reason="not now")))
    turn, _ = build(
        [calls(call("c1", "delegate", agent="calc", message="x")), answer("ok")],
        config=TRUSTING,
        hooks=hooks,
    )
    answerer = Answerer()
    with answering(answerer):
        await turn.execute(ask())
    assert answerer.seen == []


async def test_without_an_answerer_a_delegation_is_only_declared() -> None:
    turn, provider = build(
        [calls(call("c1", "delegate", agent="calc", message="x")), answer("ok")], config=TRUSTING
    )
    output = await turn.execute(ask())
    assert results(provider.requests[1].messages) == [ToolResultPart("c1", "Delegation requested.")]
    assert isinstance(output.effects[0], DelegateEffect)
