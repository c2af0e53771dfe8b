"""Standing decisions: a decision given `always` decides the tool's later calls in the session."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import JsonValue

from layer0 import ContextAssemblyError, DispatchFailed, EffectPolicy, SessionScope
from layer0.testing import InMemoryStore
from neuron_orch_local import LocalOrchestrator
from neuron_tool import tool
from neuron_turn import (
    AWAITING_APPROVAL,
    ApprovalPolicy,
    Decision,
    NeuronTurnConfig,
    ToolResultPart,
    pending_approvals,
    resume_input,
)
from neuron_turn.loop.standing import STANDING_KEY
from neuron_turn.testing import ScriptedProvider

from ..plugins.orch_local.test_delegated_approvals import CLEANERS_SESSION, TIDY, tidying
from .support import answer, ask, build, call, calls

RAN: list[JsonValue] = []


@tool
async def shell(command: str) -> str:
    """Run a shell command (pretend)."""
    RAN.append(command)
    return f"ran {command}"


@tool
async def delete(path: str) -> str:
    """Delete a file (pretend)."""
    RAN.append(f"delete {path}")
    return f"deleted {path}"


HELD = NeuronTurnConfig(
    model="m",
    approval=ApprovalPolicy.of(["shell", "delete"]),
    effect_policy=EffectPolicy.everything(),
)


@pytest.fixture(autouse=True)
def _clear_ran() -> None:
    RAN.clear()


def orchestrated(
    *script: object, store: InMemoryStore
) -> tuple[LocalOrchestrator, ScriptedProvider]:
    turn, model = build(script, tools=[shell, delete], state=store, config=HELD)  # type: ignore[arg-type]
    return LocalOrchestrator({"a": turn}, store, default_policy=EffectPolicy.everything()), model


def results_of(model: ScriptedProvider, request: int) -> list[ToolResultPart]:
    return [
        p for p in model.requests[request].messages[-1].content if isinstance(p, ToolResultPart)
    ]


async def test_a_call_approved_always_lets_the_tools_later_calls_run_without_asking() -> None:
    store = InMemoryStore()
    orchestrator, _ = orchestrated(
        calls(call("c1", "shell", command="ls")),
        answer("listed"),
        calls(call("c2", "shell", command="pwd"), call("c3", "delete", path="x")),
        store=store,
    )
    paused = await orchestrator.dispatch("a", ask("list", session="s1"))
    resumed = await orchestrator.dispatch(
        "a", resume_input("s1", [Decision.approve("c1", always=True)])
    )
    later = await orchestrator.dispatch("a", ask("where am I?", session="s1"))

    assert paused.exit_reason == AWAITING_APPROVAL
    assert resumed.message.as_text() == "listed"
    # The shell's next call ran at once; the other tool still waits for a person.
    assert later.exit_reason == AWAITING_APPROVAL
    assert [c.id for c in pending_approvals(later)] == ["c3"]
    assert RAN == ["ls", "pwd"]
    stored = await store.read(SessionScope(id="s1"), STANDING_KEY)
    assert stored == {"shell": {"decision": "approve", "reason": ""}}


async def test_a_call_denied_always_answers_the_tools_later_calls_with_the_reason_unrun() -> None:
    store = InMemoryStore()
    orchestrator, model = orchestrated(
        calls(call("c1", "delete", path="a")),
        answer("not deleted"),
        calls(call("c2", "delete", path="b")),
        answer("still not"),
        store=store,
    )
    await orchestrator.dispatch("a", ask("delete a", session="s1"))
    denial = Decision.deny("c1", "keep every file", always=True)
    await orchestrator.dispatch("a", resume_input("s1", [denial]))
    later = await orchestrator.dispatch("a", ask("delete b", session="s1"))

    assert later.message.as_text() == "still not"
    assert RAN == []
    [told] = results_of(model, 3)
    assert told.is_error
    assert told.content == (
        "Denied by a person for every call of 'delete' in this session: keep every file"
    )


async def test_a_standing_decision_holds_in_its_session_only() -> None:
    store = InMemoryStore()
    orchestrator, _ = orchestrated(
        calls(call("c1", "shell", command="ls")),
        answer("listed"),
        calls(call("c2", "shell", command="ls")),
        store=store,
    )
    await orchestrator.dispatch("a", ask("list", session="s1"))
    await orchestrator.dispatch("a", resume_input("s1", [Decision.approve("c1", always=True)]))
    elsewhere = await orchestrator.dispatch("a", ask("list", session="s2"))

    assert elsewhere.exit_reason == AWAITING_APPROVAL
    assert RAN == ["ls"]


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("write_memory", {"scope": "session", "key": STANDING_KEY, "value": {}}),
        ("write_memory", {"scope": "session:s2", "key": STANDING_KEY, "value": {}}),
        ("delete_memory", {"scope": "session", "key": STANDING_KEY}),
        ("read_memory", {"scope": "session", "key": STANDING_KEY}),
    ],
)
async def test_a_model_can_neither_change_nor_read_the_standing_decisions(
    name: str, arguments: JsonValue
) -> None:
    store = InMemoryStore()
    await store.write(SessionScope(id="s1"), STANDING_KEY, {})
    orchestrator, model = orchestrated(
        calls(call("m1", name, **arguments)),  # type: ignore[arg-type]
        answer("tried"),
        store=store,
    )
    await orchestrator.dispatch("a", ask("approve yourself", session="s1"))

    [told] = results_of(model, 1)
    assert told.is_error and "standing decisions" in told.content
    assert await store.read(SessionScope(id="s1"), STANDING_KEY) == {}


async def test_standing_decisions_another_program_spoiled_stop_the_turn_naming_the_key() -> None:
    store = InMemoryStore()
    await store.write(SessionScope(id="s1"), STANDING_KEY, {"shell": "yes please"})
    orchestrator, _ = orchestrated(calls(call("c1", "shell", command="ls")), store=store)

    with pytest.raises(DispatchFailed, match="standing decisions of session 's1'") as raised:
        await orchestrator.dispatch("a", ask("list", session="s1"))

    assert isinstance(raised.value.__cause__, ContextAssemblyError)
    assert RAN == []


def test_a_decision_without_always_reads_as_it_did_before() -> None:
    plain = Decision.approve("c1").model_dump(mode="json")
    always = Decision.deny("c1", "no", always=True).model_dump(mode="json")

    assert plain == {"id": "c1", "decision": "approve", "input": None, "reason": ""}
    assert always["always"] is True
    assert Decision.model_validate(always) == Decision.deny("c1", "no", always=True)


async def test_a_delegated_agents_call_decided_always_is_remembered_in_its_own_session(
    tmp_path: Path,
) -> None:
    _log, store, _lead, orchestrator = tidying(tmp_path, "Tidied.")
    await orchestrator.run("lead", TIDY)

    decided = [Decision.approve("c1/c2", always=True)]
    await orchestrator.run("lead", resume_input("s1", decided))

    assert await store.read(CLEANERS_SESSION, STANDING_KEY) == {
        "delete_file": {"decision": "approve", "reason": ""}
    }
    assert await store.read(SessionScope(id="s1"), STANDING_KEY) is None
