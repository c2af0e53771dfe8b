"""A turn record the store refuses does not run the turn again: the turn and its history go on."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from layer0 import HISTORY_KEY, SessionScope, TurnInput, TurnRecord, WriteFailed
from neuron_state_sqlite import SqliteStore
from neuron_tool import tool
from neuron_turn import NeuronTurn, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from .conftest import hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")


class RecordsRefused(SqliteStore):
    """A store whose turn records are refused (their table full, say); the rest is kept."""

    async def record_turn(self, record: TurnRecord) -> None:
        raise WriteFailed("database or disk is full")


async def test_a_refused_turn_record_neither_reruns_the_turn_nor_loses_its_history(
    env: WorkflowEnvironment, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ran: list[str] = []

    @tool
    async def restart(service: str) -> str:
        """Restart a service."""
        ran.append(service)
        return "restarted"

    script = [
        tool_call_response(ToolUsePart("c1", "restart", {"service": "web"})),
        text_response("Restarted web."),
    ]
    async with RecordsRefused(tmp_path / "state.db") as store:
        turn = NeuronTurn(ScriptedProvider(script), tools=[restart], state=store)
        ask = TurnInput(message="restart web", trigger="user", session="s1")
        async with hosting(env, {"a": turn}, store) as orchestrator:
            output = await orchestrator.dispatch("a", ask)
        history = await store.read(SessionScope(id="s1"), HISTORY_KEY)
    assert output.message.as_text() == "Restarted web."
    assert ran == ["web"]  # once: the record is not the turn
    assert isinstance(history, list) and len(history) == 4
    assert any(
        "turn record" in r.getMessage() and "disk is full" in r.getMessage() for r in caplog.records
    )
