"""Turns and stores for the LocalOrchestrator tests."""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from pydantic import JsonValue

from layer0 import (
    HISTORY_KEY,
    Content,
    DeleteMemoryEffect,
    Effect,
    EffectPolicy,
    Scope,
    SessionScope,
    StateReader,
    StateStore,
    Turn,
    TurnInput,
    TurnMetadata,
    TurnOutput,
    WriteMemoryEffect,
)
from layer0.testing import InMemoryStore
from neuron_orch_local import LocalOrchestrator
from neuron_turn import ProviderRequest, ProviderResponse


def trusting(agents: Mapping[str, Turn], store: StateStore, **options: Any) -> LocalOrchestrator:
    """A LocalOrchestrator whose agents may declare every effect (for tests of effects)."""
    return LocalOrchestrator(agents, store, default_policy=EffectPolicy.everything(), **options)


def output(message: str = "done", effects: Iterable[Effect] = ()) -> TurnOutput:
    return TurnOutput(
        message=message,
        exit_reason="complete",
        metadata=TurnMetadata.zero(),
        effects=list(effects),
    )


def user(message: str = "hi", **fields: object) -> TurnInput:
    return TurnInput.model_validate({"message": message, "trigger": "user", **fields})


class ScriptTurn:
    """Answers `reply` with fixed effects; records its inputs (and, optionally, an event)."""

    def __init__(
        self,
        *effects: Effect,
        reply: str = "done",
        events: list[str] | None = None,
        name: str = "",
    ) -> None:
        self.effects = list(effects)
        self.reply = reply
        self.inputs: list[TurnInput] = []
        self.events = events
        self.name = name

    async def execute(self, input: TurnInput) -> TurnOutput:
        self.inputs.append(input)
        if self.events is not None:
            self.events.append(f"turn {self.name}")
        return output(self.reply, self.effects)


class FunctionTurn:
    """Answers with `fn(input, call_number)`; records its inputs."""

    def __init__(self, fn: Callable[[TurnInput, int], TurnOutput]) -> None:
        self.fn = fn
        self.inputs: list[TurnInput] = []

    async def execute(self, input: TurnInput) -> TurnOutput:
        self.inputs.append(input)
        return self.fn(input, len(self.inputs))


class FailingTurn:
    """Raises `error` from every execute."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    async def execute(self, input: TurnInput) -> TurnOutput:
        raise self.error


class GatedTurn:
    """Blocks each execute on its own gate; counts how many run at once.

    `entered` receives each input's message text when its execute starts;
    `release(text)` lets that one finish.
    """

    def __init__(self, *, fail: Sequence[str] = ()) -> None:
        self.active = 0
        self.peak = 0
        self.entered: asyncio.Queue[str] = asyncio.Queue()
        self.gates: dict[str, asyncio.Event] = {}
        self.fail = set(fail)

    def release(self, text: str) -> None:
        self.gates[text].set()

    async def execute(self, input: TurnInput) -> TurnOutput:
        text = Content.model_validate(input.message).as_text() or ""
        if text in self.fail:
            raise RuntimeError(f"{text} failed")
        gate = self.gates.setdefault(text, asyncio.Event())
        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            await self.entered.put(text)
            await gate.wait()
        finally:
            self.active -= 1
        return output(f"answer to {text}")


class RecordingStore(InMemoryStore):
    """An InMemoryStore that appends `write <key>` / `delete <key>` to `events`."""

    def __init__(self, events: list[str] | None = None) -> None:
        super().__init__()
        self.events = events if events is not None else []

    async def write(self, scope: Scope, key: str, value: JsonValue) -> None:
        self.events.append(f"write {key}")
        await super().write(scope, key, value)

    async def delete(self, scope: Scope, key: str) -> None:
        self.events.append(f"delete {key}")
        await super().delete(scope, key)


class FlakyStore(RecordingStore):
    """Fails the `fail_on`-th write or delete (1-based); optionally every later one too."""

    def __init__(self, *, fail_on: int, keep_failing: bool = False) -> None:
        super().__init__()
        self.fail_on = fail_on
        self.keep_failing = keep_failing
        self.calls = 0

    def _maybe_fail(self) -> None:
        self.calls += 1
        if self.calls == self.fail_on or (self.keep_failing and self.calls > self.fail_on):
            raise OSError(f"disk full at call {self.calls}")

    async def write(self, scope: Scope, key: str, value: JsonValue) -> None:
        self._maybe_fail()
        await super().write(scope, key, value)

    async def delete(self, scope: Scope, key: str) -> None:
        self._maybe_fail()
        await super().delete(scope, key)


class BatchStore(RecordingStore):
    """A store with a batch `apply`, like SqliteStore; records each batch."""

    def __init__(self, *, fail: bool = False) -> None:
        super().__init__()
        self.batches: list[builtins.list[WriteMemoryEffect | DeleteMemoryEffect]] = []
        self.fail = fail

    async def apply(self, effects: Iterable[WriteMemoryEffect | DeleteMemoryEffect]) -> None:
        batch = list(effects)
        self.batches.append(batch)
        if self.fail:
            raise OSError("transaction rolled back")
        for effect in batch:
            if isinstance(effect, WriteMemoryEffect):
                await InMemoryStore.write(self, effect.scope, effect.key, effect.value)
            else:
                await InMemoryStore.delete(self, effect.scope, effect.key)


class NeverAnswers:
    """A model that never answers: `asked` is set at its first call, which waits until cancelled.

    For a turn stopped before any tool ran.
    """

    def __init__(self) -> None:
        self.asked = asyncio.Event()

    async def respond(self, request: ProviderRequest) -> ProviderResponse:
        self.asked.set()
        await asyncio.Event().wait()  # until cancelled
        raise AssertionError("unreachable")


async def session_roles(store: StateReader, session: str = "s1") -> list[str]:
    """The roles of the messages in the session's stored history, oldest first."""
    history = await store.read(SessionScope(id=session), HISTORY_KEY)
    assert isinstance(history, list)
    return [message["role"] for message in history]  # type: ignore[index,call-overload,misc]
