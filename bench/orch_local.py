"""Overhead of `LocalOrchestrator.dispatch` over a bare `Turn.execute`; prints one JSON line.

Run with `python bench/orch_local.py [calls]`. The turn is `layer0.testing.EchoTurn`,
which never suspends and declares no effects, so the figures are the cost of
the orchestrator's own code: the workflow record, the chain, the (empty)
effect pass. Each figure is microseconds per call, as wall clock
(`perf_counter_ns`) and process CPU (`process_time_ns`). `dispatch_many`
runs batches of 100 tasks with the default `max_concurrency` of 8.

`sqlite_history` is what a chat turn costs the orchestrator on a real store:
the turn (`HistoryTurn`) declares an `append_history` effect of two messages,
as `NeuronTurn` does, and the dispatch appends it to a `SqliteStore` file
(default `synchronous="full"`, and `"normal"`) in one session; its overhead is
over the same turn's bare `execute`. `sqlite_sessions` runs 200 sessions at
once, each dispatching `SESSION_TURNS` turns in a row, and reports turns/s.
`execute_and_store_apply_us` is the turn plus a direct `SqliteStore.apply` of its
append (the store's commit and thread hand-off); `orchestrator_own_us` what the
dispatch costs above that. The dispatch also keeps the turn's record in the
same transaction (`apply_recorded`): `execute_and_store_apply_recorded_us` is
the turn plus that call with a record built beforehand, so
`orchestrator_code_us` is the dispatch's own Python code and nothing of the
store. Both stores' files are fresh per mode. `orch_local_postgres` is the same
on `PostgresStore`, on a throwaway PostgreSQL cluster on loopback (`fsync` off,
so it measures our code and the round trips, not the disk).
"""

from __future__ import annotations

import asyncio
import itertools
import tempfile
import time
from pathlib import Path
from typing import Any, Literal, TypeAlias

from _timing import Call, per_call_us, run, time_calls

from layer0 import HistoryAppend, TurnInput, TurnMetadata, TurnOutput
from layer0.testing import EchoTurn, InMemoryStore
from neuron_orch_local import LocalOrchestrator, TurnRecording
from neuron_state_postgres import PostgresStore
from neuron_state_postgres.testing import throwaway_server
from neuron_state_sqlite import SqliteStore

DEFAULT_CALLS = 5_000
WARMUP_CALLS = 500
BATCH = 100
INPUT = TurnInput(message="ping", trigger="user")
SESSION_INPUT = TurnInput(message="ping", trigger="user", session="bench")


SQLITE_CALLS = 1_000
Synchronous: TypeAlias = Literal["full", "normal"]
SESSIONS = 200
SESSION_TURNS = 10
_TURN_IDS = itertools.count()


class HistoryTurn:
    """Answers at once and declares its exchange as an `append_history` effect, as NeuronTurn."""

    async def execute(self, input: TurnInput) -> TurnOutput:
        """Return "pong" with an append of the user message and the answer."""
        assert input.session is not None
        append = HistoryAppend(
            session=input.session,
            turn_id=f"t{next(_TURN_IDS)}",
            messages=[
                {"role": "user", "content": input.message.model_dump(mode="json")},
                {"role": "assistant", "content": "pong"},
            ],
        )
        return TurnOutput(
            message="pong",
            exit_reason="complete",
            metadata=TurnMetadata.zero(),
            effects=[append.effect()],
        )


Store: TypeAlias = SqliteStore | PostgresStore


async def _history(store: Store, calls: int) -> dict[str, Any]:
    """A chat turn's dispatch on `store`, beside the bare turn and the store's own calls."""
    turn = HistoryTurn()
    orchestrator = LocalOrchestrator({"chat": turn}, store)
    execute = await _measure(lambda: turn.execute(SESSION_INPUT), calls, warmup=50)
    dispatch = await _measure(
        lambda: orchestrator.dispatch("chat", SESSION_INPUT), calls, warmup=50
    )

    async def apply() -> None:
        output = await turn.execute(SESSION_INPUT)
        await store.apply([HistoryAppend.from_effect(output.effects[0])])  # type: ignore[arg-type]

    applied = await _measure(apply, calls, warmup=50)
    output = await turn.execute(SESSION_INPUT)
    recording = TurnRecording.start(store, "chat", "bench", SESSION_INPUT)
    assert recording is not None
    recording.returned(output)
    record = recording.record("executed")

    async def apply_recorded() -> None:
        output = await turn.execute(SESSION_INPUT)
        append = HistoryAppend.from_effect(output.effects[0])  # type: ignore[arg-type]
        await store.apply_recorded([append], record.model_copy(update={"turn_id": append.turn_id}))

    recorded = await _measure(apply_recorded, calls, warmup=50)
    return {
        "execute_us": execute,
        "dispatch_us": dispatch,
        "dispatch_overhead_us": _minus(dispatch, execute),
        "execute_and_store_apply_us": applied,
        "orchestrator_own_us": _minus(dispatch, applied),
        "execute_and_store_apply_recorded_us": recorded,
        "orchestrator_code_us": _minus(dispatch, recorded),
    }


async def _sessions(store: Store) -> dict[str, Any]:
    """200 sessions at once on `store`, each dispatching `SESSION_TURNS` turns in a row."""
    orchestrator = LocalOrchestrator({"chat": HistoryTurn()}, store)

    async def session(index: int) -> None:
        one = TurnInput(message="ping", trigger="user", session=f"s{index}")
        for _ in range(SESSION_TURNS):
            await orchestrator.dispatch("chat", one)

    wall, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(session(index) for index in range(SESSIONS)))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    history = await store.read(
        HistoryAppend(session="s0", turn_id="x", messages=[1]).scope, "messages"
    )
    assert isinstance(history, list) and len(history) == 2 * SESSION_TURNS, history
    turns = SESSIONS * SESSION_TURNS
    return {
        "sessions": SESSIONS,
        "turns": turns,
        "turns_per_s": round(turns / wall),
        "cpu_us_per_turn": round(cpu / turns * 1e6, 1),
    }


async def _sqlite(calls: int) -> dict[str, Any]:
    calls = min(calls, SQLITE_CALLS)
    history, sessions = [], []
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        modes: tuple[Synchronous, ...] = ("full", "normal")
        for mode in modes:
            async with SqliteStore(directory / f"{mode}.db", synchronous=mode) as store:
                history.append({"synchronous": mode, **await _history(store, calls)})
        for mode in modes:
            async with SqliteStore(directory / f"many-{mode}.db", synchronous=mode) as store:
                sessions.append({"synchronous": mode, **await _sessions(store)})
    return {"bench": "orch_local_sqlite", "calls": calls, "history": history, "sessions": sessions}


async def _postgres(calls: int) -> dict[str, Any]:
    """As `_sqlite`, on a throwaway PostgreSQL cluster on loopback (fsync off: see its docs)."""
    calls = min(calls, SQLITE_CALLS)
    with throwaway_server() as server:
        async with PostgresStore(server.conninfo(), schema="history") as store:
            history = await _history(store, calls)
        async with PostgresStore(server.conninfo(), schema="sessions", max_size=20) as store:
            sessions = await _sessions(store)
    return {
        "bench": "orch_local_postgres",
        "calls": calls,
        "history": history,
        "sessions": sessions,
    }


async def _measure(call: Call, calls: int, warmup: int = WARMUP_CALLS) -> dict[str, float]:
    wall, cpu = await time_calls(call, calls, warmup)
    return {"wall": per_call_us(wall, calls), "cpu": per_call_us(cpu, calls)}


def _minus(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
    return {key: round(a[key] - b[key], 3) for key in a}


async def _run(calls: int) -> dict[str, Any]:
    turn = EchoTurn()
    orchestrator = LocalOrchestrator({"echo": turn}, InMemoryStore())
    execute = await _measure(lambda: turn.execute(INPUT), calls)
    dispatch = await _measure(lambda: orchestrator.dispatch("echo", INPUT), calls)
    session = await _measure(lambda: orchestrator.dispatch("echo", SESSION_INPUT), calls)
    tasks = [("echo", INPUT)] * BATCH
    batches = max(1, calls // BATCH)
    many = await _measure(lambda: orchestrator.dispatch_many(tasks), batches)
    return {
        "bench": "orch_local",
        "calls": calls,
        "execute_us": execute,
        "dispatch_us": dispatch,
        "dispatch_overhead_us": _minus(dispatch, execute),
        "dispatch_session_us": session,
        "dispatch_many": {
            "tasks": BATCH,
            "batches": batches,
            "per_batch_us": many,
            "per_task_us": {key: round(value / BATCH, 3) for key, value in many.items()},
        },
    }


if __name__ == "__main__":
    run([_run, _sqlite, _postgres], DEFAULT_CALLS)
