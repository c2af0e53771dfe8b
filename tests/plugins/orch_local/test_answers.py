"""Delegation that answers back: the child's output is the parent's `delegate` result."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from moneyed import Money

from layer0 import (
    DelegateEffect,
    Effect,
    EffectPolicy,
    LogEffect,
    LogLevel,
    NonRetryableError,
    TurnConfig,
    TurnInput,
    TurnMetadata,
    TurnOutput,
    usd,
)
from layer0.testing import InMemoryStore
from neuron_orch_local import DELEGATION_LOG, LocalOrchestrator, RetryPolicy
from neuron_turn import (
    AWAITING_APPROVAL,
    ApprovalPolicy,
    NeuronTurn,
    NeuronTurnConfig,
    ProviderResponse,
    RateLimitError,
    TextDelta,
    TokenUsage,
    ToolResultPart,
    ToolUsePart,
)
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from ._doubles import user


def delegate_call(agent: str, message: str, call_id: str = "c1") -> ToolUsePart:
    return ToolUsePart(call_id, "delegate", {"agent": agent, "message": message})


def agent(provider: ScriptedProvider, *grants: str, **config: object) -> NeuronTurn:
    policy = EffectPolicy(grants=grants)
    return NeuronTurn(
        provider,
        config=NeuronTurnConfig(model="scripted", effect_policy=policy, **config),  # type: ignore[arg-type]
    )


def priced(
    response: ProviderResponse, tokens_in: int, tokens_out: int, cost: str
) -> ProviderResponse:
    return ProviderResponse(
        content=response.content,
        stop_reason=response.stop_reason,
        usage=TokenUsage(input_tokens=tokens_in, output_tokens=tokens_out),
        model=response.model,
        cost=usd(cost),
    )


def results_sent(provider: ScriptedProvider, call: int) -> list[ToolResultPart]:
    """The tool results in the last message of the provider's `call`-th request (from 1)."""
    last = provider.requests[call - 1].messages[-1]
    return [part for part in last.content if isinstance(part, ToolResultPart)]


def orchestrate(agents: dict[str, NeuronTurn], **options: object) -> LocalOrchestrator:
    policies = {name: EffectPolicy.everything() for name in agents}
    return LocalOrchestrator(agents, InMemoryStore(), policies=policies, **options)  # type: ignore[arg-type]


async def test_the_childs_answer_is_the_delegate_result_and_its_costs_roll_up() -> None:
    calculator = ScriptedProvider([priced(text_response("391"), 10, 2, "0.001")])
    researcher = ScriptedProvider(
        [
            priced(tool_call_response(delegate_call("calculator", "17 * 23")), 20, 5, "0.002"),
            priced(text_response("17 * 23 = 391"), 30, 6, "0.003"),
        ]
    )
    orchestrator = orchestrate(
        {"researcher": agent(researcher, "delegate:calculator"), "calculator": agent(calculator)}
    )

    result = await orchestrator.run("researcher", user("What is 17 * 23?"))

    assert results_sent(researcher, 2) == [ToolResultPart("c1", "391", is_error=False)]
    assert result.output.message.as_text() == "17 * 23 = 391"
    metadata = result.output.metadata
    assert (metadata.tokens_in, metadata.tokens_out) == (60, 13)
    assert metadata.cost == Money("0.006", "USD")
    [delegation] = result.delegations
    assert delegation.agent == "calculator"
    assert delegation.output.message.as_text() == "391"
    assert orchestrator.workflow(delegation.workflow_id).parent == result.workflow_id
    asked = calculator.requests[0].messages[-1].content
    assert [getattr(p, "text", None) for p in asked] == ["17 * 23"]
    assert not any(isinstance(e, DelegateEffect) for e in result.output.effects)
    [record] = [e for e in result.output.effects if isinstance(e, LogEffect)]
    assert record.data == {
        DELEGATION_LOG: {
            "agent": "calculator",
            "workflow_id": delegation.workflow_id,
            "exit_reason": "complete",
            "tokens_in": 10,
            "tokens_out": 2,
            "cost": "0.001",
        }
    }


async def test_a_delegation_cycle_is_a_tool_error_for_the_model_and_nothing_runs() -> None:
    a = ScriptedProvider(
        [tool_call_response(delegate_call("b", "help")), text_response("b could not help")]
    )
    b = ScriptedProvider(
        [tool_call_response(delegate_call("a", "back to you")), text_response("no luck")]
    )
    orchestrator = orchestrate({"a": agent(a, "delegate"), "b": agent(b, "delegate")})

    result = await orchestrator.run("a", user())

    [refused] = results_sent(b, 2)
    assert refused.is_error
    assert "delegation cycle: a -> b -> a" in refused.content
    assert len(a.requests) == 2  # `a` never ran a second time inside `b`
    assert results_sent(a, 2) == [ToolResultPart("c1", "no luck", is_error=False)]
    assert result.output.message.as_text() == "b could not help"


async def test_a_delegation_past_max_depth_is_a_tool_error() -> None:
    a = ScriptedProvider([tool_call_response(delegate_call("b", "go")), text_response("done")])
    b = ScriptedProvider([tool_call_response(delegate_call("c", "go")), text_response("c?")])
    c = ScriptedProvider([])
    orchestrator = orchestrate(
        {"a": agent(a, "delegate"), "b": agent(b, "delegate"), "c": agent(c)}, max_depth=1
    )

    await orchestrator.run("a", user())

    [refused] = results_sent(b, 2)
    assert (
        refused.is_error and "too deep: 'c' would be at depth 2, max_depth is 1" in refused.content
    )
    assert c.requests == []


async def test_an_unknown_agent_is_a_tool_error_listing_the_agents() -> None:
    a = ScriptedProvider([tool_call_response(delegate_call("ghost", "boo")), text_response("ok")])
    orchestrator = orchestrate({"a": agent(a, "delegate"), "b": agent(ScriptedProvider([]))})

    await orchestrator.run("a", user())

    [refused] = results_sent(a, 2)
    assert refused == ToolResultPart(
        "c1", "Error: there is no agent 'ghost'; available: a, b", is_error=True
    )


async def test_a_delegation_outside_the_orchestrators_policy_is_refused() -> None:
    # The turn's own config grants every effect; the orchestrator's policy for it does not.
    a = ScriptedProvider([tool_call_response(delegate_call("b", "x")), text_response("ok")])
    b = ScriptedProvider([])
    orchestrator = LocalOrchestrator(
        {"a": agent(a, "*"), "b": agent(b)}, InMemoryStore(), default_policy=EffectPolicy()
    )

    result = await orchestrator.run("a", user())

    [refused] = results_sent(a, 2)
    assert refused.is_error and refused.content.startswith("Refused: ")
    assert b.requests == [] and result.delegations == ()


async def test_a_child_that_fails_is_a_tool_error_naming_its_error() -> None:
    a = ScriptedProvider(
        [tool_call_response(delegate_call("b", "x")), text_response("carried on without b")]
    )
    b = ScriptedProvider([NonRetryableError("invalid x-api-key")])
    orchestrator = orchestrate(
        {"a": agent(a, "delegate"), "b": agent(b)}, retry=RetryPolicy(max_attempts=1)
    )

    result = await orchestrator.run("a", user())

    [failed] = results_sent(a, 2)
    assert failed.is_error
    assert failed.content.startswith("Error: agent 'b' failed: agent 'b' failed in workflow ")
    assert "invalid x-api-key" in failed.content
    assert result.output.message.as_text() == "carried on without b"


async def test_a_child_that_stops_early_is_reported_as_such() -> None:
    a = ScriptedProvider([tool_call_response(delegate_call("b", "x")), text_response("ok")])
    b = ScriptedProvider([tool_call_response(ToolUsePart("t1", "nothing", {}))])
    orchestrator = orchestrate({"a": agent(a, "delegate"), "b": agent(b, max_turns=1)})

    await orchestrator.run("a", user())

    [partial] = results_sent(a, 2)
    assert partial.is_error
    assert partial.content.startswith("Agent 'b' stopped before finishing (max_turns): ")


async def test_a_child_that_pauses_for_approval_is_reported_with_the_calls_that_did_not_run() -> (
    None
):
    a = ScriptedProvider([tool_call_response(delegate_call("b", "tidy")), text_response("ok")])
    b = ScriptedProvider(
        [tool_call_response(ToolUsePart("t1", "delete_file", {"path": "old.log"}))]
    )
    held = ApprovalPolicy.of(["delete_*"])
    orchestrator = orchestrate({"a": agent(a, "delegate"), "b": agent(b, approval=held)})

    result = await orchestrator.run("a", user())

    [paused] = results_sent(a, 2)
    assert paused.is_error
    assert paused.content == (
        'Agent \'b\' stopped before finishing: its calls delete_file({"path": "old.log"}) '
        "need a person's approval, which a delegated task cannot wait for, so they did not run"
    )
    assert result.output.message.as_text() == "ok"


class PausesWithoutCalls:
    """A hand-written turn that says it waits for approval but names no call it can read."""

    def __init__(self, effects: list[Effect]) -> None:
        self.effects = effects

    async def execute(self, input: TurnInput) -> TurnOutput:
        return TurnOutput(
            message="waiting",
            exit_reason=AWAITING_APPROVAL,
            metadata=TurnMetadata.zero(),
            effects=self.effects,
        )


@pytest.mark.parametrize(
    "effects",
    [[], [LogEffect(level=LogLevel.INFO, message="?", data={"awaiting_approval": [{"id": 1}]})]],
    ids=["none", "malformed"],
)
async def test_a_child_pausing_without_naming_calls_is_reported_with_its_answer(
    effects: list[Effect],
) -> None:
    a = ScriptedProvider([tool_call_response(delegate_call("b", "tidy")), text_response("ok")])
    policies = {"a": EffectPolicy.everything()}
    turns = {"a": agent(a, "delegate"), "b": PausesWithoutCalls(effects)}
    await LocalOrchestrator(turns, InMemoryStore(), policies=policies).run("a", user())

    [paused] = results_sent(a, 2)
    assert paused.content == (
        'Agent \'b\' stopped before finishing ({"custom": "awaiting_approval"}): waiting'
    )


async def test_the_childs_cost_counts_against_the_parents_budget() -> None:
    a = ScriptedProvider(
        [tool_call_response(delegate_call("b", "x")), text_response("never asked")]
    )
    b = ScriptedProvider([priced(text_response("expensive"), 1, 1, "1.00")])
    orchestrator = orchestrate({"a": agent(a, "delegate"), "b": agent(b)})

    output = await orchestrator.dispatch(
        "a", TurnInput(message="go", trigger="user", config=TurnConfig(max_cost="0.50"))
    )

    assert output.exit_reason == "budget_exhausted"
    assert output.metadata.cost == Money("1.00", "USD")
    assert len(a.requests) == 1


async def test_delegations_of_one_response_are_answered_each_with_its_own_child() -> None:
    calls: Sequence[ToolUsePart] = (
        delegate_call("b", "first", "c1"),
        delegate_call("c", "second", "c2"),
    )
    a = ScriptedProvider([tool_call_response(*calls), text_response("both back")])
    b = ScriptedProvider([text_response("one")])
    c = ScriptedProvider([text_response("two")])
    orchestrator = orchestrate({"a": agent(a, "delegate"), "b": agent(b), "c": agent(c)})

    result = await orchestrator.run("a", user())

    assert results_sent(a, 2) == [ToolResultPart("c1", "one"), ToolResultPart("c2", "two")]
    assert sorted(d.agent for d in result.delegations) == ["b", "c"]


async def test_a_streamed_dispatch_streams_the_childs_events_too() -> None:
    a = ScriptedProvider([tool_call_response(delegate_call("b", "x")), text_response("fine")])
    b = ScriptedProvider([text_response("from b")])
    orchestrator = orchestrate({"a": agent(a, "delegate"), "b": agent(b)})

    async with orchestrator.stream("a", user()) as events:
        items = [item async for item in events]

    texts = [(i.agent, i.event.text) for i in items if isinstance(i.event, TextDelta)]
    assert texts == [("b", "from b"), ("a", "fine")]


async def test_a_retried_turn_delegating_the_same_task_reuses_the_childs_answer() -> None:
    a = ScriptedProvider(
        [
            tool_call_response(delegate_call("b", "x")),
            RateLimitError("slow down", provider="scripted", retry_after=1.0),
            tool_call_response(delegate_call("b", "x")),
            text_response("done"),
        ]
    )
    b = ScriptedProvider([priced(text_response("from b"), 5, 1, "0.01")])

    class NoWait:
        def now(self) -> float:
            return 0.0

        async def sleep(self, seconds: float) -> None:
            self.slept = seconds

    clock = NoWait()
    orchestrator = orchestrate({"a": agent(a, "delegate"), "b": agent(b)}, clock=clock)

    result = await orchestrator.run("a", user())

    assert clock.slept == 1.0
    assert len(b.requests) == 1  # the child ran once, for both attempts
    assert results_sent(a, 4) == [ToolResultPart("c1", "from b")]
    assert result.output.metadata.cost == Money("0.01", "USD")  # counted once
    assert len(result.delegations) == 1
