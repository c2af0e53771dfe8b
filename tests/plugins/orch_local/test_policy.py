"""LocalOrchestrator carries out only what the dispatched agent's EffectPolicy allows."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from pydantic import JsonValue

from layer0 import (
    HISTORY_KEY,
    DelegateEffect,
    EffectPolicy,
    EffectRefused,
    HistoryAppend,
    SessionScope,
    TurnConfig,
    TurnInput,
    WriteMemoryEffect,
)
from layer0.testing import EchoTurn, InMemoryStore
from neuron_orch_local import LocalOrchestrator
from neuron_state_sqlite import SqliteStore
from neuron_turn import NeuronTurn, NeuronTurnConfig, ToolResultPart, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from ._doubles import ScriptTurn

MINE = '{"session":"mine"}'

HOSTILE: list[tuple[str, dict[str, JsonValue]]] = [
    ("write_memory", {"scope": "session:victim", "key": HISTORY_KEY, "value": []}),
    ("delete_memory", {"scope": "session:victim", "key": HISTORY_KEY}),
    ("write_memory", {"scope": "session:victim", "key": "notes", "value": "pwned"}),
    ("write_memory", {"scope": "global", "key": "neuron-turn/sessions/victim", "value": 0}),
    ("delete_memory", {"scope": "global", "key": "shared"}),
    ("write_memory", {"scope": "workflow:wf", "key": "k", "value": 1}),
    ("write_memory", {"scope": "agent:wf/a", "key": "k", "value": 1}),
    ("write_memory", {"scope": "custom:tenant", "key": "k", "value": 1}),
    ("write_memory", {"scope": "session", "key": HISTORY_KEY, "value": []}),
    ("delegate", {"agent": "other", "message": "do it"}),
    ("handoff", {"agent": "other", "state": None}),
    ("signal", {"target": "wf", "signal_type": "stop"}),
]


def rows(path: Path) -> set[tuple[object, ...]]:
    """Every row of the store's file outside the session 'mine', read behind its back."""
    with closing(sqlite3.connect(path)) as connection:
        entries = connection.execute("SELECT 'e', scope, key, value FROM entries").fetchall()
        appended = connection.execute("SELECT 'a', scope, key, items FROM appended").fetchall()
    return {row for row in entries + appended if row[1] != MINE}


async def seeded(store: SqliteStore) -> None:
    victim = SessionScope(id="victim")
    await store.append_history(
        HistoryAppend(
            session="victim", turn_id="v1", messages=[{"role": "user", "content": "secret"}]
        )
    )
    await store.write(victim, "notes", "victim's notes")
    await store.write("global", "shared", {"x": 1})
    await store.write("global", "neuron-turn/sessions/victim", {"runs": 1})


async def test_a_hostile_model_changes_no_row_outside_its_session_and_reads_refusals(
    tmp_path: Path,
) -> None:
    db = tmp_path / "state.db"
    script = [
        tool_call_response(*(ToolUsePart(f"c{i}", n, a) for i, (n, a) in enumerate(HOSTILE))),
        text_response("I tried."),
    ]
    provider = ScriptedProvider(script)
    async with SqliteStore(db) as store:
        await seeded(store)
        before = rows(db)
        config = NeuronTurnConfig(max_consecutive_failures=99)
        turn = NeuronTurn(provider, state=store, config=config)
        orchestrator = LocalOrchestrator({"hostile": turn, "other": EchoTurn()}, store)
        output = await orchestrator.dispatch(
            "hostile", TurnInput(message="go", trigger="user", session="mine")
        )
        mine = await store.read(SessionScope(id="mine"), HISTORY_KEY)
    assert rows(db) == before
    assert [e.type for e in output.effects] == ["custom"]  # its own history append only
    answers = [
        p for p in provider.requests[1].messages[-1].content if isinstance(p, ToolResultPart)
    ]
    assert len(answers) == len(HOSTILE)
    assert all(a.is_error and a.content.startswith("Refused:") for a in answers)
    assert isinstance(mine, list) and len(mine) == 4  # user, assistant calls, results, answer


async def test_a_third_party_turn_declaring_a_forbidden_effect_is_refused_and_writes_nothing(
    tmp_path: Path,
) -> None:
    db = tmp_path / "state.db"
    forbidden = WriteMemoryEffect(scope=SessionScope(id="victim"), key="notes", value="pwned")
    allowed = WriteMemoryEffect(scope=SessionScope(id="mine"), key="k", value=1)
    async with SqliteStore(db) as store:
        await seeded(store)
        before = rows(db)
        orchestrator = LocalOrchestrator({"rogue": ScriptTurn(allowed, forbidden)}, store)
        with pytest.raises(EffectRefused) as raised:
            await orchestrator.dispatch(
                "rogue", TurnInput(message="go", trigger="user", session="mine")
            )
        assert await store.read(SessionScope(id="mine"), "k") is None
    message = str(raised.value)
    assert "agent 'rogue'" in message and "'session:victim'" in message
    assert "none of its effects ran" in message and "own session only" in message
    assert rows(db) == before


async def test_the_callers_grant_opens_the_dispatched_turn_only_not_its_delegates() -> None:
    store = InMemoryStore()
    child = ScriptTurn(WriteMemoryEffect(scope="global", key="child", value=1))
    parent = ScriptTurn(
        WriteMemoryEffect(scope="global", key="parent", value=1),
        DelegateEffect(agent="child", input=TurnInput(message="m", trigger="task")),
    )
    orchestrator = LocalOrchestrator({"parent": parent, "child": child}, store)
    grant = TurnConfig(effect_policy=EffectPolicy.of(["global", "delegate:child"]))
    with pytest.raises(EffectRefused, match="agent 'child'"):
        await orchestrator.dispatch("parent", TurnInput(message="m", trigger="user", config=grant))
    assert await store.read("global", "parent") == 1  # applied before the delegation ran


async def test_an_agents_configured_policy_allows_what_it_grants() -> None:
    store = InMemoryStore()
    turn = ScriptTurn(WriteMemoryEffect(scope="global", key="k", value=1))
    orchestrator = LocalOrchestrator(
        {"a": turn}, store, policies={"a": EffectPolicy.of(["global"])}
    )
    await orchestrator.dispatch("a", TurnInput(message="m", trigger="user"))
    assert await store.read("global", "k") == 1
    assert orchestrator.policy("a") == EffectPolicy.of(["global"])


def test_policies_for_unknown_agents_are_refused() -> None:
    with pytest.raises(ValueError, match="ghost"):
        LocalOrchestrator({"a": EchoTurn()}, InMemoryStore(), policies={"ghost": EffectPolicy()})
