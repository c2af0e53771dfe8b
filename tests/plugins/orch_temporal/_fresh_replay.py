"""Replay in a fresh process: `python _fresh_replay.py WORKFLOW_ID=HISTORY.json...`.

Nothing here uses a layer0 model before the replays, so their first uses
(decoding the recorded turn outputs, say) happen inside the workflow
sandbox, as in a worker that restarts and picks up running workflows.
Prints `ok WORKFLOW_ID` or `failed WORKFLOW_ID: ERROR` per history; exits 1
if any failed. It ends as `neuron-turn` does, past the Temporal runtime's
teardown crash (neuron_turn/cli/_process_end.py).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from neuron_orch_temporal import DATA_CONVERTER, AgentWorkflow
from neuron_turn.cli._process_end import end_process


async def main(histories: list[tuple[str, Path]]) -> int:
    replayer = Replayer(workflows=[AgentWorkflow], data_converter=DATA_CONVERTER)
    failed = 0
    for workflow_id, path in histories:
        history = WorkflowHistory.from_json(workflow_id, path.read_text(encoding="utf-8"))
        result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
        if result.replay_failure is None:
            print(f"ok {workflow_id}", flush=True)
        else:
            failed += 1
            print(f"failed {workflow_id}: {result.replay_failure}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    pairs = [arg.split("=", 1) for arg in sys.argv[1:]]
    end_process(asyncio.run(main([(workflow_id, Path(path)) for workflow_id, path in pairs])))
