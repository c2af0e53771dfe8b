"""A turn whose store refuses its writes fails its dispatch with them on the error, none lost."""

from __future__ import annotations

import pytest

from layer0 import (
    HISTORY_KEY,
    HistoryAppend,
    HistoryConflict,
    LogEffect,
    SessionScope,
    TurnInput,
    WriteFailed,
    WriteMemoryEffect,
)
from layer0.testing import InMemoryStore
from neuron_orch_local import (
    LocalOrchestrator,
    MemoryNotAppliedError,
    RetryPolicy,
)
from neuron_tool import tool
from neuron_turn import NeuronTurn, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from .test_retries import FakeClock


class FullDisk(InMemoryStore):
    """A store refusing history appends while `full`, as a full disk does."""

    def __init__(self, refusals: int | None = None, error: WriteFailed | None = None) -> None:
        super().__init__()
        self.full = True
        self.refusals = refusals
        """How many writes to refuse before taking them (None: while `full`)."""
        self.error = error or WriteFailed("database or disk is full")
        self.asked = 0

    def _refuse(self) -> None:
        self.asked += 1
        if self.refusals is not None:
            self.full = self.refusals >= self.asked
        if self.full:
            raise self.error

    async def append_history(self, append: HistoryAppend) -> int:
        self._refuse()
        return await super().append_history(append)


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

    once = RetryPolicy(max_attempts=1)
    with pytest.raises(MemoryNotAppliedError, match="database or disk is full") as raised:
        await LocalOrchestrator({"a": turn}, store, retry=once).dispatch("a", ask)

    (append,) = [e for e in raised.value.effects if isinstance(e, HistoryAppend)]
    assert [m["role"] for m in append.messages] == ["user", "assistant", "user", "assistant"]
    assert ran == ["web"] and await store.read(SessionScope(id="s1"), HISTORY_KEY) is None
    store.full = False
    await store.append_history(append)  # the disk has room again: nothing was lost
    assert await store.read(SessionScope(id="s1"), HISTORY_KEY) == append.messages


def _restarting_turn(store: FullDisk, ran: list[str]) -> NeuronTurn:
    @tool
    async def restart(service: str) -> str:
        """Restart a service."""
        ran.append(service)
        return "restarted"

    script = [
        tool_call_response(ToolUsePart("c1", "restart", {"service": "web"})),
        text_response("Restarted web."),
    ]
    return NeuronTurn(ScriptedProvider(script), tools=[restart], state=store)


ASK = TurnInput(message="restart web", trigger="user", session="s1")


async def test_a_store_refusing_twice_is_asked_again_and_the_turns_tool_runs_once() -> None:
    ran: list[str] = []
    store, clock = FullDisk(refusals=2), FakeClock()
    orchestrator = LocalOrchestrator(
        {"a": _restarting_turn(store, ran)}, store, clock=clock, randomness=lambda: 0.0
    )

    output = await orchestrator.dispatch("a", ASK)

    assert output.message.root == "Restarted web." and ran == ["web"]
    assert store.asked == 3 and clock.sleeps == [1.0, 2.0]  # the default policy's waits
    history = await store.read(SessionScope(id="s1"), HISTORY_KEY)
    assert isinstance(history, list) and len(history) == 4


async def test_a_store_refusing_every_attempt_fails_naming_them_with_the_answer_kept() -> None:
    ran: list[str] = []
    store, clock = FullDisk(), FakeClock()
    orchestrator = LocalOrchestrator({"a": _restarting_turn(store, ran)}, store, clock=clock)

    with pytest.raises(MemoryNotAppliedError, match="in 3 attempts") as raised:
        await orchestrator.dispatch("a", ASK)

    assert raised.value.attempts == 3 and store.asked == 3 and ran == ["web"]
    assert raised.value.output is not None
    assert raised.value.output.message.root == "Restarted web."
    assert isinstance(raised.value.__cause__, WriteFailed)


async def test_a_history_conflict_is_not_asked_again() -> None:
    store = FullDisk(error=HistoryConflict("s1", expected=0, found=2))
    clock = FakeClock()
    orchestrator = LocalOrchestrator({"a": _restarting_turn(store, [])}, store, clock=clock)

    with pytest.raises(MemoryNotAppliedError) as raised:
        await orchestrator.dispatch("a", ASK)

    assert store.asked == 1 and clock.sleeps == [] and raised.value.attempts == 1
    assert "attempts" not in str(raised.value)


async def test_apply_memory_writes_a_refused_turns_effects_later_and_twice_keeps_one_copy() -> None:
    store = FullDisk()
    orchestrator = LocalOrchestrator(
        {"a": _restarting_turn(store, [])}, store, retry=RetryPolicy(max_attempts=1)
    )
    with pytest.raises(MemoryNotAppliedError) as raised:
        await orchestrator.dispatch("a", ASK)

    with pytest.raises(MemoryNotAppliedError, match="apply_memory"):
        await orchestrator.apply_memory(raised.value.effects)  # still full
    store.full = False
    await orchestrator.apply_memory(raised.value.effects)
    await orchestrator.apply_memory(raised.value.effects)

    history = await store.read(SessionScope(id="s1"), HISTORY_KEY)
    assert isinstance(history, list) and len(history) == 4


async def test_apply_memory_refuses_an_effect_that_is_no_memory_write_writing_nothing() -> None:
    store = InMemoryStore()
    orchestrator = LocalOrchestrator({}, store)
    write = WriteMemoryEffect(scope=SessionScope(id="s1"), key="k", value=1)

    with pytest.raises(TypeError, match="not LogEffect"):
        await orchestrator.apply_memory([write, LogEffect(level="info", message="x")])  # type: ignore[list-item]

    assert await store.read(SessionScope(id="s1"), "k") is None
