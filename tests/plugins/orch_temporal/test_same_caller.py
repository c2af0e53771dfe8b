"""The same caller code on LocalOrchestrator and TemporalOrchestrator: same outputs, same store."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import JsonValue
from temporalio.testing import WorkflowEnvironment

from layer0 import (
    APPEND_HISTORY,
    CustomEffect,
    Effect,
    EffectPolicy,
    HistoryAppend,
    LogEffect,
    OrchError,
    Orchestrator,
    Scope,
    SessionScope,
    StateStore,
    TurnInput,
    TurnOutput,
)
from neuron_orch_local import DELEGATION_LOG, LocalOrchestrator
from neuron_state_sqlite import SqliteStore

from .agents import handoff_agents, planner_agents
from .conftest import hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")

SCOPES: list[Scope] = ["global", SessionScope(id="trip"), SessionScope(id="help")]


async def caller(orchestrator: Orchestrator) -> list[TurnOutput | OrchError]:
    """The caller's code: it knows only `layer0.Orchestrator`."""
    first = await orchestrator.dispatch(
        "planner", TurnInput(message="the moon", trigger="user", session="trip")
    )
    second = await orchestrator.dispatch(
        "planner", TurnInput(message="and mars", trigger="user", session="trip")
    )
    many = await orchestrator.dispatch_many(
        [
            ("researcher", TurnInput(message="tides", trigger="task")),
            ("nobody", TurnInput(message="hello?", trigger="task")),
            ("writer", TurnInput(message="a poem", trigger="task")),
        ]
    )
    handed = await orchestrator.dispatch(
        "triage", TurnInput(message="refund please", trigger="user", session="help")
    )
    return [first, second, *many, handed]


def comparable(result: TurnOutput | OrchError) -> object:
    """An output without its wall-clock durations and turn ids; an error as its class."""
    if not isinstance(result, TurnOutput):
        return type(result)
    metadata = result.metadata
    calls = [call.model_copy(update={"duration": 0}) for call in metadata.tools_called]
    timeless = metadata.model_copy(update={"duration": 0, "tools_called": calls})
    effects = [_without_turn_id(effect) for effect in result.effects]
    return result.model_copy(update={"metadata": timeless, "effects": effects})


def _without_turn_id(effect: Effect) -> Effect:
    if isinstance(effect, CustomEffect) and effect.effect_type == APPEND_HISTORY:
        append = HistoryAppend.from_effect(effect)
        return append.model_copy(update={"turn_id": "-"}).effect()
    if isinstance(effect, LogEffect) and isinstance(effect.data, dict):
        record = effect.data.get(DELEGATION_LOG)
        if isinstance(record, dict):
            # Workflow ids are the orchestrators' own: random here, derived there.
            data = {DELEGATION_LOG: {**record, "workflow_id": "-"}}
            return effect.model_copy(update={"message": "-", "data": data})
    return effect


async def contents(store: StateStore) -> dict[str, dict[str, JsonValue]]:
    return {
        repr(scope): {key: await store.read(scope, key) for key in await store.list(scope, "")}
        for scope in SCOPES
    }


async def test_the_same_caller_code_gets_the_same_outputs_and_store(
    env: WorkflowEnvironment, tmp_path: Path
) -> None:
    async with SqliteStore(tmp_path / "local.db") as store:
        local = LocalOrchestrator(
            {**planner_agents(store), **handoff_agents(store)},
            store,
            default_policy=EffectPolicy.everything(),
        )
        local_results = await caller(local)
        local_store = await contents(store)

    async with SqliteStore(tmp_path / "temporal.db") as store:
        agents = {**planner_agents(store), **handoff_agents(store)}
        async with hosting(env, agents, store) as temporal:
            # dispatch_many waits on several results at once: real time (temporal-notes 4.2).
            with env.auto_time_skipping_disabled():
                temporal_results = await caller(temporal)
        temporal_store = await contents(store)

    assert [comparable(r) for r in temporal_results] == [comparable(r) for r in local_results]
    assert temporal_store == local_store
    assert local_store["'global'"]["plan"] == {"task": "and mars"}
    assert len(local_store[repr(SessionScope(id="trip"))]["messages"]) > 4  # type: ignore[arg-type]
