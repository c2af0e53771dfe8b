"""A turn whose store refuses its writes fails its dispatch with them on the error, none lost."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from layer0 import HISTORY_KEY, HistoryAppend, SessionScope, TurnInput, WriteFailed
from layer0.testing import InMemoryStore
from neuron_orch_local import LocalOrchestrator, MemoryEffect, MemoryNotAppliedError
from neuron_tool import tool
from neuron_turn import NeuronTurn, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response


class FullDisk(InMemoryStore):
    """A store refusing every write while `full`, as a full disk does."""

    def __init__(self) -> None:
        super().__init__()
        self.full = True

    async def append_history(self, append: HistoryAppend) -> int:
        if self.full:
            raise WriteFailed("database or disk is full")
        return await super().append_history(append)

    async def apply(self, effects: Sequence[MemoryEffect]) -> None:
        if self.full:
            raise WriteFailed("database or disk is full")
        await super().apply(effects)


async def test_a_refused_history_append_is_on_the_error_and_can_be_written_later() -> None:
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

    with pytest.raises(MemoryNotAppliedError, match="database or disk is full") as raised:
        await LocalOrchestrator({"a": turn}, store).dispatch("a", ask)

    (append,) = [e for e in raised.value.effects if isinstance(e, HistoryAppend)]
    assert [m["role"] for m in append.messages] == ["user", "assistant", "user", "assistant"]
    assert ran == ["web"] and await store.read(SessionScope(id="s1"), HISTORY_KEY) is None
    store.full = False
    await store.append_history(append)  # the disk has room again: nothing was lost
    assert await store.read(SessionScope(id="s1"), HISTORY_KEY) == append.messages
