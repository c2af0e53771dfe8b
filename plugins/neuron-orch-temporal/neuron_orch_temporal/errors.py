"""Errors of neuron-orch-temporal beyond the layer0 ones.

layer0.OrchError
└── layer0.DispatchFailed
    ├── NoWorkerError              no worker picked the dispatch up in time
    │   ├── CancellationPendingError   nor a workflow's cancellation
    │   ├── DecisionsPendingError      nor the decisions sent to a paused workflow
    │   └── QueryUnansweredError       no worker answered a query about a workflow
    ├── ServerUnavailableError     the Temporal server cannot be reached
    ├── PayloadTooLargeError       a turn's input, output or result is larger than a payload may be
    └── StoredPayloadError         a payload kept out of the history cannot be read back
        ├── StoredPayloadMissingError  its file is gone (or the reference names none)
        └── StoredPayloadCorruptError  its file does not hold what it was written with

layer0.OrchError
└── PruneRefusedError          a prune of the payload directory removed nothing
    ├── PayloadDirectoryError      the directory is missing, not a directory, or unreadable
    └── RetentionTooShortError     `older_than` is shorter than any history is kept

`query` raises neuron-orch-local's `UnknownQueryError` for a query type it
does not answer, as `LocalOrchestrator` does.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from layer0 import DispatchFailed, OrchError

__all__ = [
    "CancellationPendingError",
    "DecisionsPendingError",
    "NoWorkerError",
    "PayloadDirectoryError",
    "PayloadTooLargeError",
    "PruneRefusedError",
    "QueryUnansweredError",
    "RetentionTooShortError",
    "ServerUnavailableError",
    "StoredPayloadCorruptError",
    "StoredPayloadError",
    "StoredPayloadMissingError",
]


class NoWorkerError(DispatchFailed):
    """No worker picked a dispatch up in time; the message says how to start one."""

    def __init__(self, *, workflow_id: str, task_queue: str, address: str, waited: float) -> None:
        self.workflow_id = workflow_id
        self.task_queue = task_queue
        start = f"start one with `neuron-turn worker --address {address} --task-queue {task_queue}`"
        super().__init__(self._message(waited, start))

    def _message(self, waited: float, start: str) -> str:
        return (
            f"no worker picked up workflow {self.workflow_id!r} on task queue "
            f"{self.task_queue!r} within {waited:g} s; {start} (the workflow was "
            "terminated, so it will not run later)"
        )


class CancellationPendingError(NoWorkerError):
    """A workflow is cancelled, but no worker took the cancellation in time to end it.

    It ends when a worker starts, keeping what its turn did; the message says
    how to start one.
    """

    def _message(self, waited: float, start: str) -> str:
        return (
            f"workflow {self.workflow_id!r} is cancelled, but no worker took the cancellation "
            f"within {waited:g} s; it ends, keeping what its turn did, once a worker polls "
            f"task queue {self.task_queue!r}: {start}"
        )


class DecisionsPendingError(NoWorkerError):
    """A paused workflow was sent decisions, but no worker took them in time to resume it.

    Temporal keeps them for the workflow's next worker, which resumes the
    turn with them; the message says how to start one, and
    `TemporalOrchestrator.result` waits for the end.
    """

    def _message(self, waited: float, start: str) -> str:
        return (
            f"workflow {self.workflow_id!r} was sent the decisions, but no worker took them "
            f"within {waited:g} s; the next worker to poll task queue {self.task_queue!r} "
            f"takes them and resumes the turn, so do not send them again: {start}"
        )


class QueryUnansweredError(NoWorkerError):
    """No worker answered a query about a workflow: only a worker answers one.

    The message names the query, and says how to start a worker.
    """

    def __init__(
        self, *, query: str, workflow_id: str, task_queue: str, address: str, waited: float
    ) -> None:
        self.query = query
        super().__init__(
            workflow_id=workflow_id, task_queue=task_queue, address=address, waited=waited
        )

    def _message(self, waited: float, start: str) -> str:
        return (
            f"no worker answered query {self.query!r} about workflow {self.workflow_id!r} "
            f"within {waited:g} s: a worker polling task queue {self.task_queue!r} answers "
            f"it, and none is, or it is busy; {start}"
        )


class ServerUnavailableError(DispatchFailed):
    """The Temporal server at the given address cannot be reached."""

    def __init__(self, address: str, reason: str) -> None:
        self.address = address
        super().__init__(
            f"cannot reach a Temporal server at {address}: {reason} "
            "(start one with `temporal server start-dev`, or pass its address)"
        )


class PayloadTooLargeError(DispatchFailed):
    """A turn's input, output or result is larger than Temporal carries in one payload (2 MiB).

    For an output, raised by the worker before it hands it back: past the
    limit the server refuses it, and the activity would be retried, running
    the turn's tools again, only to be refused again. Not retried: the same
    turn gives the same output. For a result, the same for a turn's output with
    the outputs of the delegations it waited on, and by the workflow for what
    it returns (else its completion is refused, again and again, and its
    caller waits for ever). For an input, raised when the server refuses to
    start the workflow, and by the workflow for a later turn's input or a
    child's that grew past it (a signal's payload, decisions, a handoff's
    state). None happens with large payloads kept out of the history
    (`neuron_orch_temporal.large_payloads`).
    """

    def __init__(
        self, agent: str, size: int | None, limit: int | None, *, part: str = "output"
    ) -> None:
        self.agent = agent
        self.size = size
        self.limit = limit
        self.part = part
        """`"output"` or `"input"`: which of the turn's payloads it is; `"result"`: what a
        turn or workflow returns with the outputs of the delegations it ran."""
        measured = (
            f"is {size:,} bytes of JSON, more than the {limit:,} a Temporal payload may carry"
            if size is not None and limit is not None
            else "is larger than the Temporal server takes in one payload"
        )
        if part == "result":
            what = "result (its output and the outputs of the agents it delegated to)"
            why = "the answers of the agents it delegated to make it so"
            smaller = "have those agents answer shorter"
        else:
            what = part
            why = (
                "the files in it (images and documents a message sent or a tool returned) "
                "make it so"
            )
            smaller = "send smaller files"
        super().__init__(
            f"agent {agent!r}: the turn's {what} {measured}; {why}: keep large payloads "
            "out of the history (`storage=directory_storage(DIR)`, `--payload-dir DIR`), "
            f"{smaller}, or run this agent with the local orchestrator"
        )


class StoredPayloadError(DispatchFailed):
    """A payload Temporal's history refers to cannot be read back from where it was kept."""


class StoredPayloadMissingError(StoredPayloadError):
    """No file holds a payload the history refers to (removed, or another directory)."""

    def __init__(self, what: str, directory: Path) -> None:
        self.directory = directory
        super().__init__(
            f"the payload kept out of Temporal's history as {what} is not in {directory}: "
            "every client and worker must be given the same payload directory, and its "
            "files kept as long as their workflows' histories"
        )


class StoredPayloadCorruptError(StoredPayloadError):
    """A payload's file does not hold the bytes it was written with."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        super().__init__(
            f"the payload kept in {path} is damaged ({reason}); it is not used: restore "
            "the file from a backup of the payload directory"
        )


class PruneRefusedError(OrchError):
    """A prune of the payload directory was refused before it removed anything."""


class PayloadDirectoryError(PruneRefusedError):
    """The payload directory to prune is missing, is not a directory, or cannot be read."""

    def __init__(self, directory: Path, reason: str) -> None:
        self.directory = directory
        super().__init__(
            f"cannot prune the payload directory {directory}: {reason}; give the directory "
            "the workers and clients were given (`--payload-dir`, `directory_storage`)"
        )


class RetentionTooShortError(PruneRefusedError):
    """`older_than` is shorter than the floor: it would remove payloads histories still use."""

    def __init__(self, older_than: timedelta, floor: timedelta) -> None:
        self.older_than = older_than
        self.floor = floor
        super().__init__(
            f"refusing to prune payloads unused for only {_span(older_than)}: the least is "
            f"{_span(floor)}. "
            "A payload is needed as long as its workflow's history is: give more than the "
            "namespace's retention period plus the longest a workflow runs"
        )


def _span(length: timedelta) -> str:
    """`length` as a person writes it (`1d 12h`), not as `str(timedelta)` does."""
    seconds = int(length.total_seconds())
    if seconds < 0:
        return "-" + _span(-length)
    parts = []
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return " ".join(parts) or "0s"
