"""On Temporal, a turn whose store refuses its writes fails with them on the error, none lost."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from temporalio.testing import WorkflowEnvironment

from layer0 import (
    HISTORY_KEY,
    HistoryAppend,
    SessionScope,
    TurnInput,
    WriteFailed,
    WriteMemoryEffect,
)
from layer0.testing import InMemoryStore
from neuron_orch_local import MemoryEffect, MemoryNotAppliedError
from neuron_tool import tool
from neuron_turn import NeuronTurn, ToolUsePart
from neuron_turn.cli._unsaved import unsaved_of
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from .conftest import FAST, hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")


class FullDisk(InMemoryStore):
    """A store refusing every write to sessions while `full`, as a full disk does.

    It counts the batches refused: Temporal retries the write, not the turn.
    """

    def __init__(self) -> None:
        super().__init__()
        self.full = True
        self.refused = 0

    async def append_history(self, append: HistoryAppend) -> int:
        if self.full:
            self.refused += 1
            raise WriteFailed("database or disk is full")
        return await super().append_history(append)

    async def apply(self, effects: Sequence[MemoryEffect]) -> None:
        if self.full and any(isinstance(e, HistoryAppend) for e in effects):
            self.refused += 1
            raise WriteFailed("database or disk is full")
        await super().apply(effects)


async def test_a_refused_history_append_is_on_the_error_and_can_be_written_later(
    env: WorkflowEnvironment,
) -> None:
    ran: list[str] = []

    @tool
    async def restart(service: str) -> str:
        """Restart a service."""
        ran.append(service)
        return "restarted"

    store = FullDisk()
    script = [
        tool_call_response(ToolUsePart("c1", "restart", {"service": "web"})),
        text_response("Restarted web."),
    ]
    turn = NeuronTurn(ScriptedProvider(script), tools=[restart], state=store)
    ask = TurnInput(message="restart web", trigger="user", session="s1")

    async with hosting(env, {"a": turn}, store) as orchestrator:
        with pytest.raises(MemoryNotAppliedError, match="database or disk is full") as raised:
            await orchestrator.dispatch("a", ask, workflow_id="full-disk-1")

    error = raised.value
    assert "workflow full-disk-1" in str(error)
    # As LocalOrchestrator's: the turn's answer and how often the store was asked, too.
    assert error.output is not None and error.output.message.as_text() == "Restarted web."
    assert error.attempts == FAST.max_attempts
    unsaved = unsaved_of(error)  # what `neuron-turn run` keeps in a file of its own
    assert unsaved is not None and unsaved.effects == error.effects
    (append,) = [e for e in error.effects if isinstance(e, HistoryAppend)]
    assert [m["role"] for m in append.messages] == ["user", "assistant", "user", "assistant"]
    assert append.session == "s1"
    # The write was tried as often as the policy allows; the turn, and its tool, once.
    assert ran == ["web"] and store.refused == FAST.max_attempts
    assert await store.read(SessionScope(id="s1"), HISTORY_KEY) is None
    store.full = False
    await store.append_history(append)  # the disk has room again: nothing was lost
    assert await store.read(SessionScope(id="s1"), HISTORY_KEY) == append.messages


async def test_the_error_keeps_the_turns_memory_writes_beside_its_history(
    env: WorkflowEnvironment,
) -> None:
    store = FullDisk()
    value = {"odd": ["é\u2028", None, 1.5]}
    script = [
        tool_call_response(ToolUsePart("c1", "write_memory", {"key": "note", "value": value})),
        text_response("Noted."),
    ]
    turn = NeuronTurn(ScriptedProvider(script), state=store)
    ask = TurnInput(message="note it", trigger="user", session="s2")
    async with hosting(env, {"a": turn}, store) as orchestrator:
        with pytest.raises(MemoryNotAppliedError) as raised:
            await orchestrator.dispatch("a", ask)
    write, append = raised.value.effects
    assert write == WriteMemoryEffect(scope=SessionScope(id="s2"), key="note", value=value)
    assert isinstance(append, HistoryAppend) and len(append.messages) == 4
