from __future__ import annotations

import asyncio

import pytest
from pydantic import JsonValue

from layer0 import DeleteMemoryEffect, DispatchFailed, Scope, SessionScope, WriteMemoryEffect
from layer0.testing import InMemoryStore
from neuron_orch_local import BatchStateStore

from ._doubles import BatchStore, FlakyStore, ScriptTurn, trusting, user

SCOPE = SessionScope(id="s")


def write(key: str, value: int) -> WriteMemoryEffect:
    return WriteMemoryEffect(scope=SCOPE, key=key, value=value)


async def test_a_store_failing_on_the_second_write_leaves_none_applied() -> None:
    store = FlakyStore(fail_on=3)  # the 1st write below is the test's own setup
    await store.write(SCOPE, "a", 0)
    orchestrator = trusting(
        {"agent": ScriptTurn(write("a", 1), write("b", 2), write("c", 3))}, store
    )
    with pytest.raises(DispatchFailed, match=r"were not applied \(none of 3\): OSError") as caught:
        await orchestrator.dispatch("agent", user())
    assert isinstance(caught.value.__cause__, OSError)
    assert await store.read(SCOPE, "a") == 0
    assert await store.read(SCOPE, "b") is None
    assert await store.read(SCOPE, "c") is None


async def test_a_failed_batch_restores_deleted_keys_too() -> None:
    store = FlakyStore(fail_on=4)
    await store.write(SCOPE, "gone", "kept")
    await store.write(SCOPE, "a", 0)
    turn = ScriptTurn(DeleteMemoryEffect(scope=SCOPE, key="gone"), write("a", 1), write("b", 2))
    orchestrator = trusting({"agent": turn}, store)
    with pytest.raises(DispatchFailed):
        await orchestrator.dispatch("agent", user())
    assert await store.read(SCOPE, "gone") == "kept"
    assert await store.read(SCOPE, "a") == 0
    assert await store.read(SCOPE, "b") is None


async def test_a_failed_restore_is_reported_with_the_keys_at_risk() -> None:
    store = FlakyStore(fail_on=2, keep_failing=True)
    orchestrator = trusting({"agent": ScriptTurn(write("a", 1), write("b", 2))}, store)
    with pytest.raises(
        DispatchFailed, match=r"restoring the keys already changed failed too .* 'a', 'b'"
    ) as caught:
        await orchestrator.dispatch("agent", user())
    assert isinstance(caught.value.__cause__, OSError)


async def test_a_read_failure_before_writing_applies_nothing() -> None:
    class Unreadable(FlakyStore):
        async def read(self, scope: Scope, key: str) -> JsonValue | None:
            raise OSError("cannot read")

    store = Unreadable(fail_on=99)
    orchestrator = trusting({"agent": ScriptTurn(write("a", 1), write("b", 2))}, store)
    with pytest.raises(DispatchFailed, match=r"none of 2\): OSError: cannot read"):
        await orchestrator.dispatch("agent", user())
    assert store.events == []


async def test_a_single_write_is_applied_directly() -> None:
    store = FlakyStore(fail_on=1)
    orchestrator = trusting({"agent": ScriptTurn(write("a", 1))}, store)
    with pytest.raises(DispatchFailed, match=r"none of 1"):
        await orchestrator.dispatch("agent", user())
    assert await InMemoryStore.read(store, SCOPE, "a") is None


async def test_a_batch_store_gets_all_memory_effects_of_a_turn_in_one_apply() -> None:
    store = BatchStore()
    assert isinstance(store, BatchStateStore)
    effects = (write("a", 1), DeleteMemoryEffect(scope=SCOPE, key="x"), write("b", 2))
    orchestrator = trusting({"agent": ScriptTurn(*effects)}, store)
    await orchestrator.dispatch("agent", user())
    assert store.batches == [list(effects)]
    assert store.events == []  # no single writes or deletes
    assert await store.read(SCOPE, "b") == 2


async def test_a_failing_batch_store_fails_the_dispatch_with_the_cause() -> None:
    store = BatchStore(fail=True)
    orchestrator = trusting({"agent": ScriptTurn(write("a", 1), write("b", 2))}, store)
    with pytest.raises(DispatchFailed, match=r"none of 2\): OSError: transaction rolled back"):
        await orchestrator.dispatch("agent", user())
    assert await store.read(SCOPE, "a") is None


def test_a_plain_store_is_not_a_batch_store() -> None:
    assert not isinstance(InMemoryStore(), BatchStateStore)


async def test_a_second_cancellation_in_the_middle_restores_the_keys_already_written() -> None:
    class StallingStore(InMemoryStore):
        """Stalls the write of key "b" until cancelled."""

        def __init__(self) -> None:
            super().__init__()
            self.stalled = asyncio.Event()

        async def write(self, scope: Scope, key: str, value: JsonValue) -> None:
            if key == "b":
                self.stalled.set()
                await asyncio.Event().wait()
            await super().write(scope, key, value)

    store = StallingStore()
    await store.write(SCOPE, "a", 0)
    orchestrator = trusting({"agent": ScriptTurn(write("a", 1), write("b", 2))}, store)
    running = asyncio.create_task(orchestrator.dispatch("agent", user(), workflow_id="w"))
    await store.stalled.wait()
    assert await store.read(SCOPE, "a") == 1
    # The first waits for the turn's memory to go in (its store does not answer)...
    running.cancel()
    await asyncio.sleep(0)  # one turn of the loop: the dispatch takes the first
    assert not running.done()
    # ... the second cuts the application short, which undoes what it wrote.
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert await store.read(SCOPE, "a") == 0
    assert await store.read(SCOPE, "b") is None
    assert orchestrator.workflow("w").status.value == "failed"
