"""`LocalOrchestrator` runs a placed agent in the sandbox and keeps its effects in the parent."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from layer0 import (
    DispatchFailed,
    EffectPolicy,
    ModelCallEntry,
    SessionScope,
    ToolCallEntry,
    TurnConfig,
    TurnInput,
    TurnOutput,
)
from neuron_env_sandbox import ChildFailedError, SandboxEnvironment
from neuron_orch_local import LocalOrchestrator, Placement
from neuron_state_sqlite import SqliteStore
from neuron_turn import INTERRUPTED, RateLimitError, ToolResultPart, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from ..orch_local.test_retries import FakeClock
from ._helpers import RECIPE, scripted


async def _where_is_home(store: SqliteStore) -> TurnOutput:
    """Dispatch the placed agent `coder`, which reads $HOME in the sandbox, on session s1."""
    recipe = RECIPE.model_copy(update={"tools": ("read_env",)})
    provider = scripted("read_env", {"name": "HOME"})
    sandbox = SandboxEnvironment(recipe, provider=provider, state=store)
    orchestrator = LocalOrchestrator({}, store, environments={"coder": Placement(sandbox)})
    return await orchestrator.dispatch(
        "coder", TurnInput(message="where is home?", trigger="user", session="s1")
    )


async def test_a_sandboxed_agents_history_is_written_by_the_orchestrator(tmp_path: Path) -> None:
    async with SqliteStore(tmp_path / "state.db") as store:
        output = await _where_is_home(store)
        assert output.message.as_text() == "done"
        history = await store.read(SessionScope(id="s1"), "messages")
    assert isinstance(history, list) and len(history) == 4  # user, tool call, result, answer
    assert "/workspace" in str(history)


async def test_a_sandboxed_turn_is_recorded_in_the_orchestrators_store_with_its_timeline(
    tmp_path: Path,
) -> None:
    async with SqliteStore(tmp_path / "state.db") as store:
        output = await _where_is_home(store)
        [summary] = await store.turn_summaries(session="s1")
        record = await store.turn_record(summary.turn_id)
    assert record is not None and record.status == "executed"
    assert (record.agent, record.session) == ("coder", "s1")
    assert record.output == output  # the caller's output: the timeline effect taken out
    assert [entry.kind for entry in record.timeline] == ["model_call", "tool_call", "model_call"]
    first, call, last = record.timeline
    assert isinstance(first, ModelCallEntry) and first.stop_reason == "tool_use"
    assert isinstance(call, ToolCallEntry) and call.name == "read_env" and not call.is_error
    assert call.input == {"name": "HOME"} and "/workspace" in call.output  # run inside
    assert isinstance(last, ModelCallEntry) and last.call == 2
    assert summary.title == "where is home?"


async def test_a_sandboxed_turn_reads_its_sessions_memory_and_no_other_scope_even_if_granted(
    tmp_path: Path,
) -> None:
    def call(id: str, name: str, **arguments: str) -> ToolUsePart:
        return ToolUsePart(id, name, dict(arguments))

    provider = ScriptedProvider(
        [
            tool_call_response(call("w", "write_memory", key="plan", value="paint the fence")),
            text_response("noted"),
            tool_call_response(
                call("r", "read_memory", key="plan"),
                call("s", "search_memory", query="fence"),
                call("g", "read_memory", scope="global", key="secret"),
            ),
            text_response("painting"),
        ]
    )
    # The caller grants reading global memory; the sandbox serves its session only.
    grant = TurnConfig(effect_policy=EffectPolicy.of(["read:global"]))
    async with SqliteStore(tmp_path / "state.db") as store:
        await store.write("global", "secret", "the vault code is 7741")
        recipe = RECIPE.model_copy(update={"tools": (), "effect_tools": True})
        sandbox = SandboxEnvironment(recipe, provider=provider, state=store)
        orchestrator = LocalOrchestrator({}, store, environments={"coder": Placement(sandbox)})
        for message in ("remember the plan", "what was the plan?"):
            output = await orchestrator.dispatch(
                "coder", TurnInput(message=message, trigger="user", session="s1", config=grant)
            )
        written = await store.read(SessionScope(id="s1"), "plan")
    assert written == "paint the fence"  # by the orchestrator, from the child's effect
    assert output.message.as_text() == "painting"
    read, found, refused = provider.requests[3].messages[-1].content
    assert isinstance(read, ToolResultPart) and not read.is_error
    assert json.loads(read.content)["value"] == "paint the fence"
    assert isinstance(found, ToolResultPart) and not found.is_error
    assert [hit["key"] for hit in json.loads(found.content)["results"]] == ["plan"]
    assert isinstance(refused, ToolResultPart) and refused.is_error
    assert refused.content == (
        "Error: reading memory in scope 'global' failed: StateError: this turn runs in a "
        "sandbox, which serves only the memory of its own session (here: session 's1'), "
        "whatever else the caller granted"
    )
    assert "7741" not in refused.content


async def test_a_crash_in_the_sandbox_fails_the_dispatch_is_recorded_and_leaves_the_store_intact(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state.db"
    scope = SessionScope(id="s1")
    async with SqliteStore(path) as store:
        await store.write(scope, "messages", [])
        recipe = RECIPE.model_copy(update={"tools": ("crash",)})
        sandbox = SandboxEnvironment(recipe, provider=scripted("crash", {}), state=store)
        orchestrator = LocalOrchestrator({}, store, environments={"coder": Placement(sandbox)})
        with pytest.raises(DispatchFailed, match="agent 'coder' failed") as caught:
            await orchestrator.dispatch(
                "coder", TurnInput(message="go", trigger="user", session="s1")
            )
        assert isinstance(caught.value.__cause__, ChildFailedError)
        assert await store.read(scope, "messages") == []
        [summary] = await store.turn_summaries(session="s1")
        record = await store.turn_record(summary.turn_id)
    assert record is not None and record.status == "failed"
    assert record.error is not None and record.error.startswith("DispatchFailed: ")
    assert "ChildFailedError: SandboxEnvironment: the child was killed by SIGKILL" in record.error
    assert record.output is None and record.timeline == []  # died with the child
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_an_agent_cannot_be_both_in_process_and_placed() -> None:
    from layer0.testing import EchoTurn, InMemoryStore

    sandbox = SandboxEnvironment(RECIPE)
    with pytest.raises(ValueError, match="both `agents` and `environments`"):
        LocalOrchestrator(
            {"coder": EchoTurn()}, InMemoryStore(), environments={"coder": Placement(sandbox)}
        )


async def test_a_sandboxed_turn_rate_limited_after_its_tool_ran_goes_on_without_running_it_again(
    tmp_path: Path,
) -> None:
    call = ToolUsePart("call-1", "read_env", {"name": "HOME"})
    limited = RateLimitError("429 slow down", provider="scripted", retry_after=2.0)
    provider = ScriptedProvider([tool_call_response(call), limited, text_response("done")])
    recipe = RECIPE.model_copy(update={"tools": ("read_env",)})
    clock = FakeClock()
    async with SqliteStore(tmp_path / "state.db") as store:
        sandbox = SandboxEnvironment(recipe, provider=provider, state=store)
        environments = {"coder": Placement(sandbox)}
        orchestrator = LocalOrchestrator({}, store, environments=environments, clock=clock)
        output = await orchestrator.dispatch(
            "coder", TurnInput(message="where is home?", trigger="user", session="s1")
        )
        history = await store.read(SessionScope(id="s1"), "messages")
        summaries = await store.turn_summaries(session="s1")
    assert output.message.as_text() == "done" and clock.sleeps == [2.0]
    # The third model call went on from the sandbox's tool result, asked once.
    continued = provider.requests[2].messages
    assert [m.role for m in continued] == ["user", "assistant", "user"]
    assert isinstance(continued[2].content[0], ToolResultPart)
    assert isinstance(history, list) and len(history) == 4  # user, tool call, result, answer
    reasons = [s.exit_reason for s in summaries]
    assert len(reasons) == 2 and "complete" in reasons and INTERRUPTED in reasons
