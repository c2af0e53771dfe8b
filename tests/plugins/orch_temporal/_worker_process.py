"""A worker in its own process: `python _worker_process.py ADDRESS TASK_QUEUE DB AUDIT MARKER`.

Hosts a planner that writes its plan and delegates to `slow`. The first
time any process runs `slow`'s turn (MARKER does not exist yet), the turn
creates MARKER, prints `turn-started` and hangs, so the test can SIGKILL the
process in the middle of it; later runs declare three writes and answer.
The store is a SqliteStore on DB (shared with the test and the next
worker), wrapped so that every effect applied is also appended to AUDIT.
Prints `ready` once the worker polls.
"""

from __future__ import annotations

import asyncio
import builtins
import json
import sys
from collections.abc import Callable, Iterable
from datetime import timedelta
from pathlib import Path
from typing import Any

from pydantic import JsonValue, TypeAdapter

from layer0 import (
    HISTORY_KEY,
    DeleteMemoryEffect,
    EffectPolicy,
    HistoryAppend,
    Scope,
    SearchResult,
    TurnInput,
    TurnMetadata,
    TurnOutput,
    WriteMemoryEffect,
)
from neuron_orch_temporal import connect, create_worker
from neuron_state_sqlite import SqliteStore

sys.path.insert(0, str(Path(__file__).parent))
from agents import Calls, agent, two_step

_SCOPE: TypeAdapter[Scope] = TypeAdapter(Scope)

SLOW_WRITES = {"s1": "one", "s2": {"two": 2}, "s3": ["three"]}
"""What `slow` writes (to the global scope) once it gets to finish."""


class AuditedStore:
    """A SqliteStore that appends one JSON line per effect it applies to an audit file."""

    def __init__(self, inner: SqliteStore, audit: Path) -> None:
        self.inner = inner
        self.audit = audit

    async def read(self, scope: Scope, key: str) -> JsonValue | None:
        return await self.inner.read(scope, key)

    async def list(self, scope: Scope, prefix: str) -> builtins.list[str]:
        return await self.inner.list(scope, prefix)

    async def search(self, scope: Scope, query: str, limit: int) -> builtins.list[SearchResult]:
        return await self.inner.search(scope, query, limit)

    async def write(self, scope: Scope, key: str, value: JsonValue) -> None:
        await self.apply([WriteMemoryEffect(scope=scope, key=key, value=value)])

    async def delete(self, scope: Scope, key: str) -> None:
        await self.apply([DeleteMemoryEffect(scope=scope, key=key)])

    async def apply(
        self, effects: Iterable[WriteMemoryEffect | DeleteMemoryEffect | HistoryAppend]
    ) -> None:
        effects = builtins.list(effects)
        await self.inner.apply(effects)
        with self.audit.open("a", encoding="utf-8") as audit:
            for effect in effects:
                scope = _SCOPE.dump_python(effect.scope, mode="json")
                if isinstance(effect, HistoryAppend):
                    line = {"type": "append_history", "scope": scope, "key": HISTORY_KEY}
                else:
                    line = {"type": effect.type, "scope": scope, "key": effect.key}
                audit.write(json.dumps(line, sort_keys=True) + "\n")


class SlowTurn:
    """Hangs on its first run ever (see the module doc); declares three writes after."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    async def execute(self, input: TurnInput) -> TurnOutput:
        if not self.marker.exists():
            self.marker.touch()
            print("turn-started", flush=True)
            await asyncio.Event().wait()
        effects = [
            WriteMemoryEffect(scope="global", key=key, value=value)
            for key, value in SLOW_WRITES.items()
        ]
        return TurnOutput(
            message=f"slow done: {input.message.as_text()}",
            exit_reason="complete",
            metadata=TurnMetadata.zero(),
            effects=effects,
        )


def plan(text: str) -> Calls:
    return [
        ("write_memory", {"scope": "global", "key": "plan", "value": {"task": text}}),
        ("delegate", {"agent": "slow", "message": f"work on {text}"}),
    ]


async def host(
    address: str, task_queue: str, db: Path, audit: Path, agents: Callable[[AuditedStore], Any]
) -> None:
    """Host `agents(store)` over an audited SqliteStore on `db`; print `ready`, run until killed."""
    client = await connect(address)
    async with SqliteStore(db, busy_timeout=30.0) as sqlite:
        store = AuditedStore(sqlite, audit)
        # A dead worker's sticky queue is given up on after this, not the default 10 s.
        options = {"sticky_queue_schedule_to_start_timeout": timedelta(seconds=1)}
        worker = create_worker(
            client,
            agents=agents(store),
            store=store,
            task_queue=task_queue,
            worker_options=options,
            default_policy=EffectPolicy.everything(),
        )
        async with worker:
            print("ready", flush=True)
            await asyncio.Event().wait()


async def main(address: str, task_queue: str, db: Path, audit: Path, marker: Path) -> None:
    def agents(store: AuditedStore) -> dict[str, Any]:
        planner = agent(two_step(plan, lambda t: f"planned: {t}"), state=store)
        return {"planner": planner, "slow": SlowTurn(marker)}

    await host(address, task_queue, db, audit, agents)


if __name__ == "__main__":
    address, task_queue, db, audit, marker = sys.argv[1:6]
    asyncio.run(main(address, task_queue, Path(db), Path(audit), Path(marker)))
