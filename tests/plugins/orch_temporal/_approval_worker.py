"""A worker in its own process: `python _approval_worker.py ADDRESS TASK_QUEUE DB TOOL_LOG AUDIT`.

Hosts `cleaner` (see `agents.cleaner_agent`: its `delete_file` calls need
approval; every tool run appends a line to TOOL_LOG) over a SqliteStore on
DB that also appends one line per effect applied to AUDIT. Prints `ready`
once the worker polls, then runs until killed.
"""

from __future__ import annotations

import asyncio
import sys
from datetime import timedelta
from pathlib import Path

from layer0 import EffectPolicy
from neuron_orch_temporal import connect, create_worker
from neuron_state_sqlite import SqliteStore

sys.path.insert(0, str(Path(__file__).parent))
from _worker_process import AuditedStore
from agents import cleaner_agent


async def main(address: str, task_queue: str, db: Path, tool_log: Path, audit: Path) -> None:
    client = await connect(address)
    async with SqliteStore(db, busy_timeout=30.0) as sqlite:
        store = AuditedStore(sqlite, audit)
        # A dead worker's sticky queue is given up on after this, not the default 10 s.
        options = {"sticky_queue_schedule_to_start_timeout": timedelta(seconds=1)}
        worker = create_worker(
            client,
            agents={"cleaner": cleaner_agent(tool_log, state=store)},
            store=store,
            task_queue=task_queue,
            worker_options=options,
            default_policy=EffectPolicy.everything(),
        )
        async with worker:
            print("ready", flush=True)
            await asyncio.Event().wait()


if __name__ == "__main__":
    address, task_queue, db, tool_log, audit = sys.argv[1:6]
    asyncio.run(main(address, task_queue, Path(db), Path(tool_log), Path(audit)))
