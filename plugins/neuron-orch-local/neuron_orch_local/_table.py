"""`WorkflowTable`: the in-process records of workflows, bounded in size.

Entries are mutable and private; callers get immutable `WorkflowRecord`
snapshots. Every method but `next_signal` (which waits) is synchronous, so
on one event loop no update can be lost to another (a signal arriving while
a turn runs, say).
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field

from layer0 import AgentId, DispatchFailed, SignalPayload, TurnOutput, WorkflowId, WorkflowNotFound

from .workflow import Delegation, WorkflowRecord, WorkflowStatus

__all__ = ["WorkflowTable"]


@dataclass(slots=True)
class _Entry:
    """The live state behind a `WorkflowRecord` (same fields, lists where it grows)."""

    workflow_id: WorkflowId
    agent: AgentId
    parent: WorkflowId | None
    status: WorkflowStatus = WorkflowStatus.RUNNING
    route: list[AgentId] = field(default_factory=list)
    output: TurnOutput | None = None
    error: str | None = None
    inbox: list[SignalPayload] = field(default_factory=list)
    delegations: list[Delegation] = field(default_factory=list)
    consumed: int = 0
    """How many inbox signals, oldest first, turns have taken."""
    arrived: asyncio.Event | None = None
    """Set by a delivery while a turn of this workflow waits for a signal."""
    task: asyncio.Task[object] | None = None
    """The task running a dispatch's own workflow (None for a delegation's)."""
    cancelled: bool = False
    """Whether `cancel` stopped it."""
    ended: asyncio.Event | None = None
    """Set when it finishes, while `cancel` waits for that."""

    def snapshot(self) -> WorkflowRecord:
        return WorkflowRecord(
            workflow_id=self.workflow_id,
            agent=self.agent,
            status=self.status,
            parent=self.parent,
            route=tuple(self.route),
            output=self.output,
            error=self.error,
            inbox=tuple(self.inbox),
            delegations=tuple(self.delegations),
        )


class WorkflowTable:
    """Workflow records by id, oldest first; finished ones are dropped past `max_records`."""

    def __init__(self, *, max_records: int) -> None:
        """Keep at most `max_records` records, besides those of running workflows."""
        self._entries: dict[WorkflowId, _Entry] = {}
        self._max = max_records

    def __contains__(self, workflow_id: object) -> bool:
        return workflow_id in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, workflow_id: WorkflowId) -> WorkflowRecord:
        """Return a snapshot of the record of `workflow_id`; raises `WorkflowNotFound`."""
        return self._entry(workflow_id).snapshot()

    def open(
        self, workflow_id: WorkflowId | None, agent: AgentId, *, parent: WorkflowId | None
    ) -> WorkflowId:
        """Start a workflow, or continue a finished one (its inbox is kept); return its id.

        Raises:
            DispatchFailed: `workflow_id` names a workflow that is still running.
        """
        if workflow_id is None:
            # Random, not a counter: ids may name state scopes that outlive the process.
            workflow_id = str(uuid.uuid4())
        entry = _Entry(workflow_id=workflow_id, agent=agent, parent=parent)
        if parent is None:
            entry.task = asyncio.current_task()
        previous = self._entries.get(workflow_id)
        if previous is not None:
            if previous.status is WorkflowStatus.RUNNING:
                raise DispatchFailed(
                    f"workflow {workflow_id!r} is still running (agent {previous.agent!r}); "
                    "a workflow runs one dispatch at a time"
                )
            entry.inbox, entry.consumed = previous.inbox, previous.consumed
            del self._entries[workflow_id]  # re-inserted last: it is the newest again
        self._entries[workflow_id] = entry
        return workflow_id

    def ran(self, workflow_id: WorkflowId, agent: AgentId) -> None:
        """Note that `agent` is now running in the workflow."""
        entry = self._entry(workflow_id)
        entry.agent = agent
        entry.route.append(agent)

    def produced(self, workflow_id: WorkflowId, output: TurnOutput) -> None:
        """Keep `output` as the workflow's last output."""
        self._entry(workflow_id).output = output

    def delegated(self, workflow_id: WorkflowId, delegation: Delegation) -> None:
        """Add the result of one of the workflow's delegations."""
        self._entry(workflow_id).delegations.append(delegation)

    def deliver(self, workflow_id: WorkflowId, payload: SignalPayload) -> None:
        """Put `payload` in the workflow's inbox; raises `WorkflowNotFound`."""
        entry = self._entry(workflow_id)
        entry.inbox.append(payload)
        if entry.arrived is not None:
            entry.arrived.set()

    async def next_signal(
        self, workflow_id: WorkflowId, *, timeout: float | None
    ) -> SignalPayload | None:
        """Take the oldest signal no turn has taken, waiting up to `timeout` seconds for one.

        Returns None when none came in time.
        """
        entry = self._entry(workflow_id)
        if entry.consumed >= len(entry.inbox):
            entry.arrived = asyncio.Event()
            try:
                async with asyncio.timeout(timeout):
                    await entry.arrived.wait()
            except TimeoutError:
                return None
            finally:
                entry.arrived = None
        entry.consumed += 1
        return entry.inbox[entry.consumed - 1]

    def finish(self, workflow_id: WorkflowId, *, error: BaseException | None = None) -> None:
        """Mark the workflow completed, or failed with `error`; then drop the oldest if full."""
        entry = self._entry(workflow_id)
        if error is None:
            entry.status = WorkflowStatus.COMPLETED
        else:
            entry.status = WorkflowStatus.FAILED
            entry.error = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        entry.task = None
        if entry.ended is not None:
            entry.ended.set()
        if len(self._entries) > self._max:
            self._evict(len(self._entries) - self._max)

    async def cancel(self, workflow_id: WorkflowId) -> bool:
        """Cancel the task of the running workflow `workflow_id`, wait for its end.

        Returns False, changing nothing, when it has ended.

        Raises:
            WorkflowNotFound: no workflow `workflow_id`.
            DispatchFailed: it is a delegation's, which runs in the task of the
                workflow that started it, or it is the caller's own.
        """
        entry = self._entry(workflow_id)
        if entry.status is not WorkflowStatus.RUNNING:
            return False
        if entry.task is None:
            raise DispatchFailed(
                f"workflow {workflow_id!r} was started by workflow {entry.parent!r}, in its "
                "task; cancel the workflow its dispatch started"
            )
        if entry.task is asyncio.current_task():
            raise DispatchFailed(f"workflow {workflow_id!r} cannot cancel itself")
        entry.cancelled = True
        entry.ended = entry.ended or asyncio.Event()
        entry.task.cancel()
        await entry.ended.wait()
        return True

    def cancelled(self, workflow_id: WorkflowId) -> bool:
        """Whether `cancel` stopped the workflow `workflow_id`."""
        return self._entry(workflow_id).cancelled

    def _entry(self, workflow_id: WorkflowId) -> _Entry:
        try:
            return self._entries[workflow_id]
        except KeyError:
            raise WorkflowNotFound(workflow_id) from None

    def _evict(self, excess: int) -> None:
        # Oldest first, and the oldest are nearly always finished: this stops early.
        doomed: list[WorkflowId] = []
        for workflow_id, entry in self._entries.items():
            if entry.status is not WorkflowStatus.RUNNING:
                doomed.append(workflow_id)
                if len(doomed) == excess:
                    break
        for workflow_id in doomed:
            del self._entries[workflow_id]
