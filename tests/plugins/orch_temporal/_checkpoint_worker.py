"""A worker in its own process: `python _checkpoint_worker.py ADDRESS QUEUE DB TOOL_LOG MARKER`.

Hosts `reader`: it calls `read_file` (which appends a line to TOOL_LOG),
then, the first time any process gets there (MARKER does not exist yet),
creates MARKER, prints `stalled` and hangs before its next model call, after
the tool round's checkpoint was heartbeated, so the test can SIGKILL the
process there; later, given the read's result, it answers with how many
messages it saw. Prints `ready` once the worker polls.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from neuron_turn import (
    NeuronTurn,
    NeuronTurnConfig,
    ProviderRequest,
    ProviderResponse,
    ToolResultPart,
    ToolUsePart,
)
from neuron_turn.testing import FunctionProvider, text_response, tool_call_response

sys.path.insert(0, str(Path(__file__).parent))
from _worker_process import AuditedStore, host
from agents import file_tools


def reader(tool_log: Path, marker: Path, store: AuditedStore) -> NeuronTurn:
    async def respond(request: ProviderRequest) -> ProviderResponse:
        if not any(isinstance(p, ToolResultPart) for m in request.messages for p in m.content):
            return tool_call_response(ToolUsePart("c1", "read_file", {"path": "notes.txt"}))
        if not marker.exists():
            marker.touch()
            print("stalled", flush=True)
            await asyncio.Event().wait()  # until this process is killed
        return text_response(f"read it; {len(request.messages)} messages")

    config = NeuronTurnConfig(model="fn")
    return NeuronTurn(
        FunctionProvider(respond), tools=file_tools(tool_log), state=store, config=config
    )


async def main(address: str, task_queue: str, db: Path, tool_log: Path, marker: Path) -> None:
    audit = db.with_suffix(".audit")
    await host(
        address, task_queue, db, audit, lambda store: {"reader": reader(tool_log, marker, store)}
    )


if __name__ == "__main__":
    address, task_queue, db, tool_log, marker = sys.argv[1:6]
    asyncio.run(main(address, task_queue, Path(db), Path(tool_log), Path(marker)))
