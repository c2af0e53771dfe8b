"""A worker in its own process: `python _approval_worker.py ADDRESS TASK_QUEUE DB TOOL_LOG AUDIT`.

Hosts `cleaner` (see `agents.cleaner_agent`: its `delete_file` calls need
approval; every tool run appends a line to TOOL_LOG) over a SqliteStore on
DB that also appends one line per effect applied to AUDIT. Prints `ready`
once the worker polls, then runs until killed.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _worker_process import host
from agents import cleaner_agent


async def main(address: str, task_queue: str, db: Path, tool_log: Path, audit: Path) -> None:
    await host(
        address,
        task_queue,
        db,
        audit,
        lambda store: {"cleaner": cleaner_agent(tool_log, state=store)},
    )


if __name__ == "__main__":
    address, task_queue, db, tool_log, audit = sys.argv[1:6]
    asyncio.run(main(address, task_queue, Path(db), Path(tool_log), Path(audit)))
