from __future__ import annotations

import pytest

from layer0 import (
    AgentNotFound,
    DelegateEffect,
    DispatchFailed,
    HandoffEffect,
    QueryPayload,
    RetryableError,
    SessionScope,
    TextBlock,
    Turn,
    TurnInput,
    TurnOutput,
    WriteMemoryEffect,
)
from layer0.testing import EchoTurn, InMemoryStore
from neuron_orch_local import HANDOFF_KEY, RetryPolicy, WorkflowStatus

from ._doubles import FailingTurn, FunctionTurn, ScriptTurn, output, trusting, user


def delegate(agent: str, message: str = "task") -> DelegateEffect:
    return DelegateEffect(agent=agent, input=TurnInput(message=message, trigger="task"))


def handoff(agent: str, state: object = None) -> HandoffEffect:
    return HandoffEffect.model_validate({"agent": agent, "state": state})


async def test_delegate_runs_the_agent_in_a_child_workflow_and_records_its_output() -> None:
    orchestrator = trusting(
        {"a": ScriptTurn(delegate("b", "sum 2 2"), delegate("b", "sum 3 3")), "b": EchoTurn()},
        InMemoryStore(),
    )
    result = await orchestrator.run("a", user())
    assert [(d.agent, d.output.message.as_text()) for d in result.delegations] == [
        ("b", "sum 2 2"),
        ("b", "sum 3 3"),
    ]
    child = orchestrator.workflow(result.delegations[0].workflow_id)
    assert child.parent == result.workflow_id
    assert child.status is WorkflowStatus.COMPLETED
    assert orchestrator.workflow(result.workflow_id).delegations == result.delegations
    answer = await orchestrator.query(
        result.workflow_id, QueryPayload(query_type="delegations", params=None)
    )
    assert isinstance(answer, list) and len(answer) == 2
    assert answer[0] == {
        "agent": "b",
        "workflow_id": child.workflow_id,
        "output": result.delegations[0].output.model_dump(mode="json"),
    }


async def test_delegate_to_an_unknown_agent_names_both_agents() -> None:
    orchestrator = trusting({"a": ScriptTurn(delegate("ghost"))}, InMemoryStore())
    with pytest.raises(
        AgentNotFound, match=r"agent 'a' .* delegates to unknown agent 'ghost'; available: a"
    ) as caught:
        await orchestrator.dispatch("a", user())
    assert caught.value.agent == "ghost"


async def test_delegation_deeper_than_max_depth_fails_naming_the_route() -> None:
    turns = {
        "a": ScriptTurn(delegate("b")),
        "b": ScriptTurn(delegate("c")),
        "c": ScriptTurn(delegate("d")),
        "d": ScriptTurn(),
    }
    orchestrator = trusting(turns, InMemoryStore(), max_depth=2)
    with pytest.raises(
        DispatchFailed,
        match=r"too deep: 'd' would be at depth 3, max_depth is 2; route: a -> b -> c -> d",
    ):
        await orchestrator.dispatch("a", user())
    assert turns["d"].inputs == []


async def test_delegation_within_max_depth_succeeds() -> None:
    turns: dict[str, Turn] = {
        "a": ScriptTurn(delegate("b")),
        "b": ScriptTurn(delegate("c")),
        "c": EchoTurn(),
    }
    orchestrator = trusting(turns, InMemoryStore(), max_depth=2)
    result = await orchestrator.run("a", user())
    assert result.delegations[0].agent == "b"


async def test_max_depth_zero_allows_no_delegation() -> None:
    orchestrator = trusting(
        {"a": ScriptTurn(delegate("b")), "b": EchoTurn()}, InMemoryStore(), max_depth=0
    )
    with pytest.raises(DispatchFailed, match=r"max_depth is 0; route: a -> b"):
        await orchestrator.dispatch("a", user())


async def test_delegation_cycle_fails_naming_the_cycle() -> None:
    a, b = ScriptTurn(delegate("b")), ScriptTurn(delegate("a"))
    orchestrator = trusting({"a": a, "b": b}, InMemoryStore())
    with pytest.raises(
        DispatchFailed, match=r"delegation cycle: a -> b -> a \(agent 'b' delegates to 'a'"
    ):
        await orchestrator.dispatch("a", user())
    assert len(a.inputs) == 1


async def test_self_delegation_is_a_cycle() -> None:
    orchestrator = trusting({"a": ScriptTurn(delegate("a"))}, InMemoryStore())
    with pytest.raises(DispatchFailed, match=r"delegation cycle: a -> a"):
        await orchestrator.dispatch("a", user())


async def test_delegating_back_to_an_agent_that_handed_off_is_no_cycle() -> None:
    def a_turn(input: TurnInput, call: int) -> TurnOutput:
        return output("a handed off", [handoff("b")]) if call == 1 else output("a helped")

    orchestrator = trusting(
        {"a": FunctionTurn(a_turn), "b": ScriptTurn(delegate("a"), reply="b done")},
        InMemoryStore(),
    )
    result = await orchestrator.run("a", user())
    assert result.route == ("a", "b")
    assert [(d.agent, d.output.message.as_text()) for d in result.delegations] == [
        ("a", "a helped")
    ]


async def test_a_child_failure_fails_the_parent_keeping_a_retryable_cause() -> None:
    error = RetryableError("overloaded")
    orchestrator = trusting(
        {"a": ScriptTurn(delegate("b")), "b": FailingTurn(error)},
        InMemoryStore(),
        retry=RetryPolicy(max_attempts=1),
    )
    with pytest.raises(DispatchFailed, match=r"agent 'b' failed .*route: a -> b") as caught:
        await orchestrator.dispatch("a", user(), workflow_id="w")
    assert caught.value.__cause__ is error
    assert orchestrator.workflow("w").status is WorkflowStatus.FAILED


async def test_handoff_runs_the_next_agent_whose_output_becomes_the_result() -> None:
    b = ScriptTurn(reply="billing here")
    orchestrator = trusting(
        {"a": ScriptTurn(handoff("b", {"topic": "billing"})), "b": b}, InMemoryStore()
    )
    result = await orchestrator.run("a", user("my invoice", session="s", metadata={"trace": "t1"}))
    assert result.output.message.as_text() == "billing here"
    assert (result.agent, result.route) == ("b", ("a", "b"))
    (given,) = b.inputs
    assert given.trigger == "task"
    assert given.session == "s"
    assert given.metadata == {
        "trace": "t1",
        HANDOFF_KEY: {"from": "a", "state": {"topic": "billing"}},
    }
    text = given.message.as_text() or ""
    assert "'a'" in text and '{"topic": "billing"}' in text
    record = orchestrator.workflow(result.workflow_id)
    assert (record.agent, record.route, record.output) == ("b", ("a", "b"), result.output)


async def test_handoff_without_a_session_carries_the_original_message() -> None:
    b = ScriptTurn()
    orchestrator = trusting({"a": ScriptTurn(handoff("b")), "b": b}, InMemoryStore())
    await orchestrator.dispatch("a", user("the question"))
    blocks = b.inputs[0].message.blocks
    assert isinstance(blocks[0], TextBlock) and "'a'" in blocks[0].text
    assert "state" not in blocks[0].text
    assert blocks[1:] == [TextBlock(text="the question")]
    assert b.inputs[0].metadata == {HANDOFF_KEY: {"from": "a", "state": None}}


async def test_handoff_runs_after_the_other_effects_so_the_next_agent_reads_the_history() -> None:
    store = InMemoryStore()
    scope = SessionScope(id="s")
    seen: list[object] = []

    async def b_execute(input: TurnInput) -> TurnOutput:
        seen.append(await store.read(scope, "messages"))
        return output("b")

    class B:
        async def execute(self, input: TurnInput) -> TurnOutput:
            return await b_execute(input)

    history = WriteMemoryEffect(scope=scope, key="messages", value=["from a"])
    orchestrator = trusting({"a": ScriptTurn(handoff("b"), history), "b": B()}, store)
    await orchestrator.dispatch("a", user(session="s"))
    assert seen == [["from a"]]


async def test_handoff_ping_pong_stops_at_max_depth() -> None:
    orchestrator = trusting(
        {"a": ScriptTurn(handoff("b")), "b": ScriptTurn(handoff("a"))},
        InMemoryStore(),
        max_depth=3,
    )
    with pytest.raises(
        DispatchFailed,
        match=r"route: a -> b \(handoff\) -> a \(handoff\) -> b \(handoff\) -> a \(handoff\)",
    ):
        await orchestrator.dispatch("a", user())


async def test_handoff_to_an_unknown_agent_fails_before_anything_runs() -> None:
    store = InMemoryStore()
    write = WriteMemoryEffect(scope="global", key="k", value=1)
    orchestrator = trusting({"a": ScriptTurn(write, handoff("ghost"))}, store)
    with pytest.raises(AgentNotFound, match=r"hands off to unknown agent 'ghost'"):
        await orchestrator.dispatch("a", user())
    assert await store.read("global", "k") is None
