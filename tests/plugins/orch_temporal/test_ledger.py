"""The applied-effects ledger: each memory effect applied once, atomically on a batch store."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest
from pydantic import JsonValue

from layer0 import (
    HISTORY_KEY,
    DeleteMemoryEffect,
    HistoryAppend,
    Scope,
    SessionScope,
    WriteMemoryEffect,
)
from layer0.testing import InMemoryStore
from neuron_orch_temporal import APPLIED_SCOPE, BatchStateStore
from neuron_orch_temporal.ledger import applied_key, apply_once
from neuron_orch_temporal.messages import IndexedMemoryEffect, MemoryRequest
from neuron_state_sqlite import SqliteStore

SESSION = SessionScope(id="s")


def request(*effects: WriteMemoryEffect | DeleteMemoryEffect, turn: int = 0) -> MemoryRequest:
    return MemoryRequest(
        workflow_id="wf/t0/d1-a",
        run_id="run-1",
        turn=turn,
        agent="a",
        effects=tuple(IndexedMemoryEffect(index=2 * i, effect=e) for i, e in enumerate(effects)),
    )


WRITE_A = WriteMemoryEffect(scope=SESSION, key="a", value=1)
WRITE_B = WriteMemoryEffect(scope=SESSION, key="b", value=[2])
DELETE_A = DeleteMemoryEffect(scope=SESSION, key="a")


async def test_a_second_application_changes_nothing() -> None:
    store = InMemoryStore()
    assert await apply_once(store, request(WRITE_A, WRITE_B)) == 2
    await store.write(SESSION, "a", "changed since")
    assert await apply_once(store, request(WRITE_A, WRITE_B)) == 0
    assert await store.read(SESSION, "a") == "changed since"
    assert await store.list(APPLIED_SCOPE, "") == [
        "wf/t0/d1-a/run-1/t0/e0",
        "wf/t0/d1-a/run-1/t0/e2",
    ]


async def test_keys_name_workflow_run_turn_and_effect_index() -> None:
    assert applied_key(request(WRITE_A, turn=3), 4) == "wf/t0/d1-a/run-1/t3/e4"


async def test_an_interrupted_application_resumes_where_it_stopped() -> None:
    class FailsOnB(InMemoryStore):
        armed = True

        async def write(self, scope: Scope, key: str, value: JsonValue) -> None:
            if key == "b" and self.armed:
                self.armed = False
                raise ConnectionError("lost")
            await super().write(scope, key, value)

    store = FailsOnB()
    with pytest.raises(ConnectionError):
        await apply_once(store, request(WRITE_A, WRITE_B, DELETE_A))
    assert await apply_once(store, request(WRITE_A, WRITE_B, DELETE_A)) == 2
    assert await store.read(SESSION, "a") is None
    assert await store.read(SESSION, "b") == [2]


async def test_a_batch_store_applies_effects_and_their_keys_in_one_transaction(
    tmp_path: Path,
) -> None:
    class Recording(SqliteStore):
        batches: list[list[str]] = []

        async def apply(self, effects: Iterable[WriteMemoryEffect | DeleteMemoryEffect]) -> None:
            effects = list(effects)
            self.batches.append([e.key for e in effects])
            await super().apply(effects)

    async with Recording(tmp_path / "s.db") as store:
        assert isinstance(store, BatchStateStore)
        await apply_once(store, request(WRITE_A, WRITE_B))
        await apply_once(store, request(WRITE_A, WRITE_B))
        assert await store.read(SESSION, "b") == [2]
    assert Recording.batches == [["a", "b", "wf/t0/d1-a/run-1/t0/e0", "wf/t0/d1-a/run-1/t0/e2"]], (
        "one transaction, and none the second time"
    )


async def test_a_separate_ledger_keeps_the_keys_out_of_the_store() -> None:
    store, ledger = InMemoryStore(), InMemoryStore()
    await apply_once(store, request(WRITE_A), ledger=ledger)
    assert await store.list(APPLIED_SCOPE, "") == []
    assert await ledger.list(APPLIED_SCOPE, "") == ["wf/t0/d1-a/run-1/t0/e0"]
    assert await apply_once(store, request(WRITE_A), ledger=ledger) == 0


APPEND = HistoryAppend(
    session="s", turn_id="turn-1", messages=[{"role": "user", "content": "hi"}]
).effect()


@pytest.mark.parametrize("ledger", ["same store", "separate ledger"])
async def test_a_history_append_retried_is_appended_once(tmp_path: Path, ledger: str) -> None:
    async with SqliteStore(tmp_path / "state.db") as store:
        other = InMemoryStore() if ledger == "separate ledger" else None
        append_request = MemoryRequest(
            workflow_id="wf",
            run_id="run-1",
            turn=0,
            agent="a",
            effects=(
                IndexedMemoryEffect(index=0, effect=WRITE_A),
                IndexedMemoryEffect(index=1, effect=APPEND),
            ),
        )
        assert await apply_once(store, append_request, ledger=other) == 2
        if other is not None:
            await other.delete(APPLIED_SCOPE, "wf/run-1/t0/e1")  # as if the record was lost
        await apply_once(store, append_request, ledger=other)
        assert await store.read(SESSION, HISTORY_KEY) == [{"role": "user", "content": "hi"}]
