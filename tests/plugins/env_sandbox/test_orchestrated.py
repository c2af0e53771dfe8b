"""`LocalOrchestrator` runs a placed agent in the sandbox and keeps its effects in the parent."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from layer0 import DispatchFailed, SessionScope, TurnInput
from neuron_env_sandbox import ChildFailedError, SandboxEnvironment
from neuron_orch_local import LocalOrchestrator, Placement
from neuron_state_sqlite import SqliteStore

from ._helpers import RECIPE, scripted


async def test_a_sandboxed_agents_history_is_written_by_the_orchestrator(tmp_path: Path) -> None:
    async with SqliteStore(tmp_path / "state.db") as store:
        recipe = RECIPE.model_copy(update={"tools": ("read_env",)})
        provider = scripted("read_env", {"name": "HOME"})
        sandbox = SandboxEnvironment(recipe, provider=provider, state=store)
        orchestrator = LocalOrchestrator({}, store, environments={"coder": Placement(sandbox)})
        output = await orchestrator.dispatch(
            "coder", TurnInput(message="where is home?", trigger="user", session="s1")
        )
        assert output.message.as_text() == "done"
        history = await store.read(SessionScope(id="s1"), "messages")
    assert isinstance(history, list) and len(history) == 4  # user, tool call, result, answer
    assert "/workspace" in str(history)


async def test_a_crash_in_the_sandbox_fails_the_dispatch_and_leaves_the_store_intact(
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
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_an_agent_cannot_be_both_in_process_and_placed() -> None:
    from layer0.testing import EchoTurn, InMemoryStore

    sandbox = SandboxEnvironment(RECIPE)
    with pytest.raises(ValueError, match="both `agents` and `environments`"):
        LocalOrchestrator(
            {"coder": EchoTurn()}, InMemoryStore(), environments={"coder": Placement(sandbox)}
        )
