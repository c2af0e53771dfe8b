"""The SDK's request handler, checking a message before any task is made of it.

A message the agent cannot take (a part it refuses, too much of it, a bad
context id, a number JSON has no form for) or decisions that do not fit the
calls a task waits on are answered with a JSON-RPC error at once: no task is
created or changed, nothing runs.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Final

from a2a.server.context import ServerCallContext
from a2a.server.events import Event
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import TaskStore
from a2a.types import AgentCard, Message, SendMessageRequest, Task
from google.protobuf import json_format

from .errors import A2AError, NonFiniteNumberError
from .executor import A2AExecutor, _protocol_error

# Stands for the context id the SDK will make for a message that has none (a UUID).
_NEW_CONTEXT: Final = "new-context"


class CheckingRequestHandler(DefaultRequestHandler):
    """`DefaultRequestHandler` refusing what `A2AExecutor` would refuse, before a task exists."""

    def __init__(self, executor: A2AExecutor, task_store: TaskStore, card: AgentCard) -> None:
        """Handle requests for `executor`, keeping tasks in `task_store`."""
        super().__init__(agent_executor=executor, task_store=task_store, agent_card=card)
        self._executor = executor
        self._tasks = task_store

    async def on_message_send(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Message | Task:
        """Check the message, then handle it as the SDK does."""
        await self._check(params, context)
        result: Message | Task = await super().on_message_send(params, context)
        return result

    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event, None]:
        """Check the message, then stream its task's events as the SDK does."""
        await self._check(params, context)
        async for event in super().on_message_send_stream(params, context):
            yield event

    async def _check(self, params: SendMessageRequest, context: ServerCallContext) -> None:
        try:
            # The task keeps the message: what cannot be written out would fail every
            # later answer holding it (a ListTasks, for every client), not just this one.
            json_format.MessageToDict(params)
        except (json_format.Error, ValueError):
            refused = NonFiniteNumberError(
                "the request holds a number JSON has no form for (NaN or infinity);"
                " send finite numbers"
            )
            raise _protocol_error(refused) from None
        message = params.message
        task = None
        if message.task_id:
            task = await self._tasks.get(message.task_id, context)
            if task is None:
                return  # the SDK answers "task not found"
        context_id = message.context_id or (task.context_id if task else _NEW_CONTEXT)
        try:
            self._executor.turn_input(message, context_id, message.task_id, task)
            self._executor.check_capacity()
        except A2AError as exc:
            raise _protocol_error(exc) from None
