"""`BoundedTaskStore`: the A2A tasks a server keeps in memory, finished ones within bounds.

The SDK's `InMemoryTaskStore` keeps every task, with its messages and files, for
the server's life: any client holding the token could grow the server's memory
without end by sending message after message. This store keeps every task that
may still change (submitted, working, waiting for input or for authorization)
and, of the finished ones (completed, failed, cancelled, rejected), the newest
within a count and a size: past either, the oldest finished task is dropped,
and `GetTask` then answers that it is not found, as for a task never made.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Final

from a2a.server.context import ServerCallContext
from a2a.server.tasks import InMemoryTaskStore, TaskStore
from a2a.types import ListTasksRequest, ListTasksResponse, Task, TaskState

__all__ = ["BoundedTaskStore"]

_FINISHED: Final = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
    }
)


class BoundedTaskStore(TaskStore):
    """Tasks in memory: all that may still change, and the newest finished ones within bounds.

    Raises:
        ValueError: a bound is below 1.
    """

    def __init__(self, *, max_finished: int = 1_000, max_finished_bytes: int = 64 << 20) -> None:
        """Keep at most `max_finished` finished tasks, of `max_finished_bytes` in all."""
        if max_finished < 1 or max_finished_bytes < 1:
            raise ValueError(
                "max_finished and max_finished_bytes must be 1 or more; "
                f"got {max_finished} and {max_finished_bytes}"
            )
        self.max_finished = max_finished
        self.max_finished_bytes = max_finished_bytes
        self._tasks = InMemoryTaskStore()
        self._finished: OrderedDict[str, int] = OrderedDict()
        """Each finished task's id and size in bytes, oldest first."""
        self._finished_bytes = 0

    async def save(self, task: Task, context: ServerCallContext) -> None:
        """Save `task`; if it finished, drop the oldest other finished tasks past the bounds."""
        await self._tasks.save(task, context)
        self._forget_size(task.id)
        if task.status.state in _FINISHED:
            size = task.ByteSize()
            self._finished[task.id] = size
            self._finished_bytes += size
            await self._drop_oldest(keep=task.id, context=context)

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        """The task `task_id`, or None (never made, or dropped as an old finished one)."""
        return await self._tasks.get(task_id, context)

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        """The tasks kept, as the SDK's store lists them."""
        return await self._tasks.list(params, context)

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        """Delete the task `task_id`."""
        await self._tasks.delete(task_id, context)
        self._forget_size(task_id)

    def _forget_size(self, task_id: str) -> None:
        size = self._finished.pop(task_id, None)
        if size is not None:
            self._finished_bytes -= size

    async def _drop_oldest(self, *, keep: str, context: ServerCallContext) -> None:
        """Drop the oldest finished tasks but `keep` until both bounds hold (or only it is left)."""
        while (
            len(self._finished) > self.max_finished
            or self._finished_bytes > self.max_finished_bytes
        ):
            oldest = next(iter(self._finished))
            if oldest == keep:
                return  # the task just saved stays, however large: its request reads it back
            await self.delete(oldest, context)
