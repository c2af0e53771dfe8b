"""The order of one iteration, every stop reason and every exit reason."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from layer0 import (
    Continue,
    CustomExit,
    Halt,
    HookAction,
    HookContext,
    HookPoint,
    ModelError,
    ObserverHalt,
    TurnConfig,
)
from neuron_hooks import FunctionHook, HookRegistry
from neuron_tool import ToolRegistry, tool
from neuron_turn import (
    NeuronTurn,
    NeuronTurnConfig,
    ProviderMessage,
    ProviderRequest,
    ProviderResponse,
)
from neuron_turn.testing import FunctionProvider, ScriptedProvider, text_response

from .support import TRUSTING, answer, ask, build, call, calls, dollars


def _recording_hooks(events: list[str]) -> HookRegistry:
    async def record(ctx: HookContext) -> HookAction:
        events.append(ctx.point.value)
        return Continue()

    hooks = HookRegistry()
    hooks.add(FunctionHook(record, points=list(HookPoint)))
    return hooks


class _RecordingContext:
    def __init__(self, events: list[str]) -> None:
        self.events = events

    def token_estimate(self, messages: Sequence[ProviderMessage]) -> int:
        return 0

    def should_compact(self, messages: Sequence[ProviderMessage], limit: int) -> bool:
        self.events.append("compact?")
        return False

    async def compact(self, messages: Sequence[ProviderMessage]) -> list[ProviderMessage]:
        return list(messages)


async def test_steps_of_an_iteration_run_in_the_documented_order() -> None:
    events: list[str] = []
    script = iter([calls(call("c1", "noted")), answer("done")])

    def respond(request: ProviderRequest) -> ProviderResponse:
        events.append("provider")
        return next(script)

    @tool
    async def noted() -> str:
        """Note the call."""
        events.append("tool")
        return "ok"

    turn = NeuronTurn(
        FunctionProvider(respond),
        tools=ToolRegistry([noted]),
        hooks=_recording_hooks(events),
        context=_RecordingContext(events),
    )
    output = await turn.execute(ask())
    assert output.exit_reason == "complete"
    # The context step also runs once before the first call: a stored history
    # may already be over the limit.
    assert events == [
        "compact?",
        "pre_inference",
        "provider",
        "post_inference",
        "pre_tool_use",
        "tool",
        "post_tool_use",
        "exit_check",
        "compact?",
        "pre_inference",
        "provider",
        "post_inference",
    ]


async def test_limits_are_checked_before_the_exit_check_hook() -> None:
    events: list[str] = []
    turn, _ = build([calls(call("c1", "add", a=1, b=2))], hooks=_recording_hooks(events))
    output = await turn.execute(ask(config=TurnConfig(max_turns=1)))
    assert output.exit_reason == "max_turns"
    assert "exit_check" not in events


async def test_end_turn_completes_with_the_model_content() -> None:
    turn, _ = build([answer("the answer")])
    output = await turn.execute(ask())
    assert output.exit_reason == "complete"
    assert output.message.as_text() == "the answer"
    assert output.metadata.turns_used == 1


async def test_max_tokens_stop_raises_model_error_output_truncated() -> None:
    turn, _ = build([text_response("cut", stop_reason="max_tokens")])
    with pytest.raises(ModelError, match=r"output truncated \(max_tokens\)"):
        await turn.execute(ask())


async def test_content_filter_stop_raises_model_error_content_filtered() -> None:
    turn, _ = build([text_response("", stop_reason="content_filter")])
    with pytest.raises(ModelError, match="content filtered"):
        await turn.execute(ask())


async def test_tool_use_stop_without_tool_calls_raises_model_error() -> None:
    turn, _ = build([text_response("hm", stop_reason="tool_use")])
    with pytest.raises(ModelError, match="asked for no tool"):
        await turn.execute(ask())


async def test_tool_use_stop_runs_tools_and_calls_the_model_again() -> None:
    turn, provider = build([calls(call("c1", "add", a=2, b=3)), answer("5")])
    output = await turn.execute(ask())
    assert output.message.as_text() == "5"
    last = provider.requests[1].messages[-1]
    assert last.role == "user"
    assert last.content[0].content == "5"  # type: ignore[union-attr]


async def test_max_turns_exit_keeps_what_was_declared() -> None:
    script = [calls(call("c1", "write_memory", scope="global", key="k", value=1))]
    turn, _ = build(script, config=TRUSTING)
    output = await turn.execute(ask(config=TurnConfig(max_turns=1)))
    assert output.exit_reason == "max_turns"
    assert [effect.type for effect in output.effects] == ["write_memory"]


async def test_budget_exhausted_when_cost_reaches_max_cost() -> None:
    script = [calls(call("c1", "add", a=1, b=1), cost="0.50"), answer("never")]
    turn, provider = build(script)
    output = await turn.execute(ask(config=TurnConfig(max_cost=dollars("0.50"))))
    assert output.exit_reason == "budget_exhausted"
    assert output.metadata.cost == dollars("0.50")
    assert len(provider.requests) == 1


@pytest.mark.parametrize("point", list(HookPoint))
async def test_halt_from_each_hook_point_exits_observer_halt(point: HookPoint) -> None:
    async def halt(ctx: HookContext) -> HookAction:
        return Halt(reason=f"stop at {ctx.point.value}")

    hooks = HookRegistry()
    hooks.add(FunctionHook(halt, points=[point]))
    turn, _ = build([calls(call("c1", "add", a=1, b=2)), answer("done")], hooks=hooks)
    output = await turn.execute(ask())
    assert output.exit_reason == ObserverHalt(reason=f"stop at {point.value}")


async def test_circuit_breaker_after_consecutive_failed_tool_calls() -> None:
    script = [calls(call("c1", "nope")), calls(call("c2", "nope2")), answer("never")]
    config = NeuronTurnConfig(max_consecutive_failures=2)
    turn, _ = build(script, config=config)
    output = await turn.execute(ask())
    assert output.exit_reason == "circuit_breaker"
    assert [r.success for r in output.metadata.tools_called] == [False, False]


async def test_a_success_resets_the_failure_count() -> None:
    script = [
        calls(call("c1", "nope")),
        calls(call("c2", "add", a=1, b=1)),
        calls(call("c3", "nope")),
        answer("fine"),
    ]
    turn, _ = build(script, config=NeuronTurnConfig(max_consecutive_failures=2))
    assert (await turn.execute(ask())).exit_reason == "complete"


async def test_handoff_ends_the_turn_after_its_round() -> None:
    script = [calls(call("c1", "handoff", agent="closer", state={"stage": 2})), answer("never")]
    turn, provider = build(script, config=TRUSTING)
    output = await turn.execute(ask())
    assert output.exit_reason == CustomExit(name="handoff")
    assert len(provider.requests) == 1


async def test_same_call_repeated_past_the_threshold_is_stuck_detected() -> None:
    same = [calls(call(f"c{i}", "add", a=1, b=1)) for i in range(4)]
    turn, provider = build([*same, answer("never")])
    output = await turn.execute(ask())
    assert output.exit_reason == CustomExit(name="stuck_detected")
    assert len(provider.requests) == 4


async def test_same_call_up_to_the_threshold_is_allowed() -> None:
    same = [calls(call(f"c{i}", "add", a=1, b=1)) for i in range(3)]
    turn, _ = build([*same, answer("ok")])
    assert (await turn.execute(ask())).exit_reason == "complete"


async def test_exit_reason_serialises_as_the_protocol_says() -> None:
    script = [calls(call("c1", "handoff", agent="closer", state=None))]
    turn, _ = build(script, config=TRUSTING)
    output = await turn.execute(ask())
    assert output.model_dump(mode="json")["exit_reason"] == {"custom": "handoff"}


@tool
async def shout(text: str) -> str:
    """Say it louder."""
    return text.upper()


async def test_tools_given_as_a_list_make_the_turns_registry_and_run() -> None:
    model = ScriptedProvider([calls(call("c1", "shout", text="hi")), answer("done")])
    turn = NeuronTurn(model, tools=[shout])

    await turn.execute(ask("go"))

    assert turn.tools.names() == ["shout"]
    assert "HI" in str(model.requests[1].messages[-1].content)


@pytest.mark.parametrize("tools", [shout, "shout"])
def test_tools_that_are_neither_a_registry_nor_a_list_are_refused_saying_so(tools: object) -> None:
    with pytest.raises(TypeError, match=r"takes a ToolRegistry or a list of tools; got"):
        NeuronTurn(FunctionProvider(lambda request: answer("x")), tools=tools)  # type: ignore[arg-type]
