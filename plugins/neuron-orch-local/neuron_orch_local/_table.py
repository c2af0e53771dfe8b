"""`WorkflowTable`: the in-process records of workflows, bounded in size.

Every method is synchronous and reads the current record before replacing
it, so on one event loop no update can be lost to another (a signal
arriving while a turn runs, say).
"""

from __future__ import annotations

import uuid
from dataclasses import replace

from layer0 import AgentId, DispatchFailed, SignalPayload, TurnOutput, WorkflowId, WorkflowNotFound

from .workflow import Delegation, WorkflowRecord, WorkflowStatus

__all__ = ["WorkflowTable"]


class WorkflowTable:
    """Workflow records by id, oldest first; finished ones are dropped past `max_records`."""

    def __init__(self, *, max_records: int) -> None:
        """Keep at most `max_records` records, besides those of running workflows."""
        self._records: dict[WorkflowId, WorkflowRecord] = {}
        self._max = max_records

    def __contains__(self, workflow_id: object) -> bool:
        return workflow_id in self._records

    def __len__(self) -> int:
        return len(self._records)

    def get(self, workflow_id: WorkflowId) -> WorkflowRecord:
        """Return the record of `workflow_id`; raises `WorkflowNotFound`."""
        try:
            return self._records[workflow_id]
        except KeyError:
            raise WorkflowNotFound(workflow_id) from None

    def open(
        self, workflow_id: WorkflowId | None, agent: AgentId, *, parent: WorkflowId | None
    ) -> WorkflowRecord:
        """Start a workflow, or continue a finished one (its inbox is kept).

        Raises:
            DispatchFailed: `workflow_id` names a workflow that is still running.
        """
        if workflow_id is None:
            # Random, not a counter: ids may name state scopes that outlive the process.
            workflow_id = str(uuid.uuid4())
        inbox: tuple[SignalPayload, ...] = ()
        previous = self._records.pop(workflow_id, None)
        if previous is not None:
            if previous.status is WorkflowStatus.RUNNING:
                self._records[workflow_id] = previous
                raise DispatchFailed(
                    f"workflow {workflow_id!r} is still running (agent {previous.agent!r}); "
                    "a workflow runs one dispatch at a time"
                )
            inbox = previous.inbox
        record = WorkflowRecord(workflow_id=workflow_id, agent=agent, parent=parent, inbox=inbox)
        self._records[workflow_id] = record
        return record

    def ran(self, workflow_id: WorkflowId, agent: AgentId) -> None:
        """Note that `agent` is now running in the workflow."""
        record = self.get(workflow_id)
        self._put(replace(record, agent=agent, route=(*record.route, agent)))

    def produced(self, workflow_id: WorkflowId, output: TurnOutput) -> None:
        """Keep `output` as the workflow's last output."""
        self._put(replace(self.get(workflow_id), output=output))

    def delegated(self, workflow_id: WorkflowId, delegation: Delegation) -> None:
        """Add the result of one of the workflow's delegations."""
        record = self.get(workflow_id)
        self._put(replace(record, delegations=(*record.delegations, delegation)))

    def deliver(self, workflow_id: WorkflowId, payload: SignalPayload) -> None:
        """Put `payload` in the workflow's inbox; raises `WorkflowNotFound`."""
        record = self.get(workflow_id)
        self._put(replace(record, inbox=(*record.inbox, payload)))

    def finish(self, workflow_id: WorkflowId, *, error: BaseException | None = None) -> None:
        """Mark the workflow completed, or failed with `error`; then drop the oldest if full."""
        record = self.get(workflow_id)
        if error is None:
            self._put(replace(record, status=WorkflowStatus.COMPLETED))
        else:
            text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
            self._put(replace(record, status=WorkflowStatus.FAILED, error=text))
        self._evict()

    def _put(self, record: WorkflowRecord) -> None:
        self._records[record.workflow_id] = record

    def _evict(self) -> None:
        excess = len(self._records) - self._max
        if excess <= 0:
            return
        # Oldest first, and the oldest are nearly always finished: this stops early.
        doomed: list[WorkflowId] = []
        for workflow_id, record in self._records.items():
            if record.status is not WorkflowStatus.RUNNING:
                doomed.append(workflow_id)
                if len(doomed) == excess:
                    break
        for workflow_id in doomed:
            del self._records[workflow_id]
