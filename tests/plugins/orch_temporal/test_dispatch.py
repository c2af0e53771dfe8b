from __future__ import annotations

import logging

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment

from layer0 import (
    AgentNotFound,
    CustomEffect,
    DispatchFailed,
    LogEffect,
    QueryPayload,
    SignalPayload,
    TurnInput,
    TurnMetadata,
    TurnOutput,
    WorkflowNotFound,
    usd,
)
from layer0.testing import InMemoryStore
from neuron_orch_temporal import EffectContext, TurnPolicy, UnknownQueryError

from .agents import COST, Calls, DeclaringTurn, handoff_agents, planner_agents
from .conftest import FAST, hosting

ONE_WAY = FAST.model_copy(update={"answer_delegations": False})
"""Delegations declared by the turn and run after it, in child workflows of its workflow."""

pytestmark = pytest.mark.asyncio(loop_scope="session")


def task(text: str) -> TurnInput:
    return TurnInput(message=text, trigger="user")


class CountingTurn:
    """Answers `done` and counts its executions."""

    def __init__(self, effects: list[object] | None = None) -> None:
        self.calls = 0
        self.effects = effects or []

    async def execute(self, input: TurnInput) -> TurnOutput:
        self.calls += 1
        return TurnOutput(
            message="done",
            exit_reason="complete",
            metadata=TurnMetadata.zero(),
            effects=self.effects,
        )


async def test_planner_delegates_to_two_agents_concurrently_and_their_writes_land(
    env: WorkflowEnvironment,
) -> None:
    store = InMemoryStore()
    async with hosting(env, planner_agents(store), store, policy=ONE_WAY) as orchestrator:
        result = await orchestrator.run("planner", task("the moon"), workflow_id="plan-1")
        history = await env.client.get_workflow_handle("plan-1").fetch_history()
    assert result.output.message.as_text() == "planned: the moon"
    assert result.output.metadata.cost == usd("0.00060")
    assert result.route == ("planner",)
    assert [(d.agent, d.workflow_id) for d in result.delegations] == [
        ("researcher", "plan-1/t0/d1-researcher"),
        ("writer", "plan-1/t0/d2-writer"),
    ]
    assert [d.output.message.as_text() for d in result.delegations] == [
        "researched: research the moon",
        "drafted: draft the moon",
    ]
    assert await store.read("global", "plan") == {"task": "the moon"}
    assert await store.read("global", "research") == "research the moon"
    assert await store.read("global", "draft") == "draft the moon"
    kinds = [event.event_type for event in history.events]
    started = [
        i
        for i, k in enumerate(kinds)
        if k == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED
    ]
    done = [
        i
        for i, k in enumerate(kinds)
        if k == EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED
    ]
    assert len(started) == 2 and max(started) < min(done), "both children start before either ends"


async def test_costs_cross_the_engine_as_decimal_strings(env: WorkflowEnvironment) -> None:
    store = InMemoryStore()
    async with hosting(env, planner_agents(store), store) as orchestrator:
        await orchestrator.dispatch("researcher", task("x"), workflow_id="wire-1")
        history = await env.client.get_workflow_handle("wire-1").fetch_history()
    payloads = [
        payload.data
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
        for payload in event.activity_task_completed_event_attributes.result.payloads
    ]
    # Two model calls at COST each: the scale survives, no float on the way.
    assert COST == usd("0.00030")
    assert any(b'"cost":"0.00060"' in data for data in payloads)
    assert not any(b'"cost":0' in data for data in payloads)


async def test_handoff_runs_as_a_child_whose_output_becomes_the_result(
    env: WorkflowEnvironment,
) -> None:
    store = InMemoryStore()
    async with hosting(env, handoff_agents(store), store) as orchestrator:
        result = await orchestrator.run("triage", task("refund please"), workflow_id="hand-1")
        status = await orchestrator.query("hand-1", QueryPayload(query_type="status", params=None))
    assert result.agent == "billing"
    assert result.route == ("triage", "billing")
    text = result.output.message.as_text() or ""
    assert text.startswith("billing got: The conversation was handed off to you by agent 'triage'.")
    assert 'Handoff state: {"reason": "refund"}' in text
    assert isinstance(status, dict)
    assert status["route"] == ["triage", "billing"]
    assert status["agent"] == "billing"
    assert status["status"] == "completed"


async def test_queries_answer_status_output_inbox_and_delegations(env: WorkflowEnvironment) -> None:
    store = InMemoryStore()
    async with hosting(env, planner_agents(store), store, policy=ONE_WAY) as orchestrator:
        output = await orchestrator.dispatch("planner", task("q"), workflow_id="query-1")

        async def ask(kind: str) -> object:
            return await orchestrator.query("query-1", QueryPayload(query_type=kind, params=None))

        status, answer, inbox, delegations = [
            await ask(kind) for kind in ("status", "output", "inbox", "delegations")
        ]
    assert status == {
        "workflow_id": "query-1",
        "status": "completed",
        "agent": "planner",
        "exit_reason": "complete",
        "parent": None,
        "route": ["planner"],
        "error": None,
    }
    assert answer == output.model_dump(mode="json")
    assert inbox == []
    assert isinstance(delegations, list)
    assert [d["workflow_id"] for d in delegations] == [
        "query-1/t0/d1-researcher",
        "query-1/t0/d2-writer",
    ]


async def test_unknown_workflows_and_query_types_raise_layer0_errors(
    env: WorkflowEnvironment,
) -> None:
    store = InMemoryStore()
    async with hosting(env, {"counter": CountingTurn()}, store) as orchestrator:
        await orchestrator.dispatch("counter", task("x"), workflow_id="known-1")
        with pytest.raises(WorkflowNotFound):
            await orchestrator.query("nope", QueryPayload(query_type="status", params=None))
        with pytest.raises(WorkflowNotFound):
            await orchestrator.query("nope", QueryPayload(query_type="bogus", params=None))
        with pytest.raises(WorkflowNotFound):
            await orchestrator.signal("nope", SignalPayload(signal_type="x", data=None))
        with pytest.raises(WorkflowNotFound):
            await orchestrator.result("nope")
        with pytest.raises(
            UnknownQueryError, match="supported: delegations, inbox, output, status"
        ):
            await orchestrator.query("known-1", QueryPayload(query_type="bogus", params=None))


async def test_unknown_agents_raise_agent_not_found(env: WorkflowEnvironment) -> None:
    store = InMemoryStore()

    def delegate_to_ghost(text: str) -> Calls:
        return [
            ("write_memory", {"scope": "global", "key": "k", "value": 1}),
            ("delegate", {"agent": "ghost", "message": "boo"}),
        ]

    # Declared unchecked: a model delegating to a ghost is told so as it calls.
    agents = {"boss": DeclaringTurn(delegate_to_ghost)}
    async with hosting(env, agents, store, policy=ONE_WAY) as orchestrator:
        with pytest.raises(AgentNotFound, match="no agent named 'nobody'; available: boss"):
            await orchestrator.dispatch("nobody", task("x"))
        with pytest.raises(AgentNotFound, match="delegates to unknown agent 'ghost'") as caught:
            await orchestrator.dispatch("boss", task("x"))
    assert caught.value.agent == "ghost"
    assert await store.read("global", "k") is None, "no effect runs when one cannot"


async def test_redispatch_with_the_same_workflow_id_runs_nothing_again(
    env: WorkflowEnvironment,
) -> None:
    turn = CountingTurn()
    async with hosting(env, {"counter": turn, "other": CountingTurn()}, InMemoryStore()) as orch:
        first = await orch.run("counter", task("x"), workflow_id="idem-1")
        again = await orch.run("counter", task("x"), workflow_id="idem-1")
        with pytest.raises(DispatchFailed, match="already exists for agent 'counter', not 'other'"):
            await orch.dispatch("other", task("x"), workflow_id="idem-1")
    assert again == first
    assert turn.calls == 1


async def test_depth_limit_and_cycles_fail_before_any_effect(env: WorkflowEnvironment) -> None:
    store = InMemoryStore()

    def loop(text: str) -> Calls:
        return [
            ("write_memory", {"scope": "global", "key": "loop", "value": 1}),
            ("delegate", {"agent": "loop", "message": "again"}),
        ]

    def plan(text: str) -> Calls:
        return [
            ("write_memory", {"scope": "global", "key": "plan", "value": {"task": text}}),
            ("delegate", {"agent": "researcher", "message": f"research {text}"}),
        ]

    # Declared unchecked: a model going past the limits is told so as it calls.
    agents = {
        **planner_agents(store),
        "planner": DeclaringTurn(plan),
        "loop": DeclaringTurn(loop),
    }
    shallow = TurnPolicy(**{**ONE_WAY.model_dump(), "max_depth": 0})
    async with hosting(env, agents, store, policy=shallow) as orchestrator:
        with pytest.raises(DispatchFailed, match="dispatch chain too deep: 'researcher'"):
            await orchestrator.dispatch("planner", task("deep"))
    async with hosting(env, agents, store, policy=ONE_WAY) as orchestrator:
        with pytest.raises(DispatchFailed, match="delegation cycle: loop -> loop"):
            await orchestrator.dispatch("loop", task("x"))
    assert await store.read("global", "plan") is None
    assert await store.read("global", "loop") is None


async def test_dispatch_many_keeps_order_and_failures_stay_alone(
    env: WorkflowEnvironment,
) -> None:
    store = InMemoryStore()
    async with hosting(env, planner_agents(store), store) as orchestrator:
        with env.auto_time_skipping_disabled():
            results = await orchestrator.dispatch_many(
                [("researcher", task("a")), ("ghost", task("b")), ("writer", task("c"))]
            )
    assert isinstance(results[0], TurnOutput)
    assert results[0].message.as_text() == "researched: a"
    assert isinstance(results[1], AgentNotFound)
    assert isinstance(results[2], TurnOutput)
    assert results[2].message.as_text() == "drafted: c"


async def test_log_effects_go_to_the_workflow_logger(
    env: WorkflowEnvironment, caplog: pytest.LogCaptureFixture
) -> None:
    effect = LogEffect(level="warn", message="careful %s", data={"n": 1})
    async with hosting(env, {"logger": CountingTurn([effect])}, InMemoryStore()) as orch:
        with caplog.at_level(logging.WARNING, logger="temporalio.workflow"):
            await orch.dispatch("logger", task("x"), workflow_id="log-1")
    [record] = [r for r in caplog.records if "careful" in r.getMessage()]
    assert record.levelno == logging.WARNING
    assert record.getMessage().startswith("careful %s")
    assert record.__dict__["data"] == {"n": 1}
    assert record.__dict__["agent"] == "logger"
    assert record.__dict__["workflow_id"] == "log-1"


async def test_custom_effects_go_to_their_handler_and_unknown_types_fail(
    env: WorkflowEnvironment,
) -> None:
    seen: list[tuple[object, EffectContext]] = []

    async def notify(effect: CustomEffect, context: EffectContext) -> None:
        seen.append((effect.data, context))

    agents = {
        "notifier": CountingTurn([CustomEffect(effect_type="notify", data={"to": "ops"})]),
        "odd": CountingTurn([CustomEffect(effect_type="odd", data=None)]),
    }
    store = InMemoryStore()
    async with hosting(env, agents, store, custom_handlers={"notify": notify}) as orchestrator:
        await orchestrator.dispatch("notifier", task("x"), workflow_id="custom-1")
        with pytest.raises(DispatchFailed, match="type 'odd', which has no handler"):
            await orchestrator.dispatch("odd", task("x"))
    assert seen == [({"to": "ops"}, EffectContext(workflow_id="custom-1", agent="notifier"))]


async def test_a_failed_workflow_reports_its_error_in_status(env: WorkflowEnvironment) -> None:
    def ghost(text: str) -> Calls:
        return [("handoff", {"agent": "ghost", "state": None})]

    store = InMemoryStore()
    async with hosting(env, {"a": DeclaringTurn(ghost)}, store) as orchestrator:
        with pytest.raises(AgentNotFound):
            await orchestrator.dispatch("a", task("x"), workflow_id="failed-1")
        status = await orchestrator.query(
            "failed-1", QueryPayload(query_type="status", params=None)
        )
        description = await env.client.get_workflow_handle("failed-1").describe()
    assert isinstance(status, dict)
    assert status["status"] == "failed"
    assert str(status["error"]).startswith("AgentNotFound: agent 'a' (workflow failed-1) hands off")
    assert description.status == WorkflowExecutionStatus.FAILED
