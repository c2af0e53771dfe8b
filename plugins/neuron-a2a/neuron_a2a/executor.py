"""`A2AExecutor`: one agent of a `layer0.Orchestrator` as an A2A agent executor.

Each A2A message becomes a `TurnInput` dispatched to the agent; the A2A
context is the neuron session (`session_prefix` + the context id), so a
conversation goes on across messages and tasks. The turn's answer becomes a
completed task with an artifact; a turn paused for approval becomes an
`input-required` task whose follow-up carries the decisions; any other end
maps to a task state saying why (see `neuron_a2a._convert.outcome`).

A context is never left stuck on a pause: a message on a context whose
session waits on calls no task lists any more (its task cancelled without
them denied, or forgotten when the server restarted) gets a new
`input-required` task listing them again, or resumes the session when it
holds their decisions; cancelling a task that waits for approval denies its
calls.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Final

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Message, Part, Task, TaskState, TaskStatus
from a2a.utils.errors import A2AError as ProtocolError
from a2a.utils.errors import (
    ContentTypeNotSupportedError,
    InvalidParamsError,
    UnsupportedOperationError,
)

from layer0 import AgentId, Orchestrator, SessionId, StateReader, TurnInput, TurnOutput
from neuron_tool.serving import error_text
from neuron_turn import (
    ApprovalError,
    Decision,
    ModelCallStart,
    PendingCall,
    TextDelta,
    ToolStart,
    answer_text,
    follow_dispatch,
    pending_approvals,
    resume_input,
)
from neuron_turn import waiting_calls as session_waits_on

from ._answer_stream import AnswerStream
from ._convert import (
    answer_parts,
    decisions_of,
    holds_decisions,
    message_content,
    outcome,
    pending_parts,
    session_of,
    text_part,
    waiting_calls,
)
from .errors import A2AError, InvalidDecisionsError, ServerBusyError, UnsupportedPartError
from .limits import MessageLimits

__all__ = ["A2AExecutor"]

_logger: Final = logging.getLogger("neuron_a2a")
_ANSWER_ARTIFACT: Final = "answer"
_CANCELLED: Final = "cancelled at the client's request"
_DENIED_ON_CANCEL: Final = "cancelled by the caller"
"""The reason a cancelled task's waiting calls are denied with: what the model reads."""
# The JSON-RPC method the SDK records for a blocking send: its answer is not streamed.
_BLOCKING_METHOD: Final = "SendMessage"


@dataclass(slots=True)
class _Run:
    """A dispatch running for a task: its asyncio task, and when its end has been reported."""

    task: asyncio.Task[TurnOutput]
    reported: asyncio.Event = field(default_factory=asyncio.Event)


class A2AExecutor(AgentExecutor):
    """Runs one agent of an orchestrator for A2A requests: a message in, a task out.

    Why: the a2a-sdk's request handler drives tasks, their store and the
    protocol; this is the part that knows neuron: messages to turns, turns'
    outputs to task states and artifacts, approvals to `input-required`.

    - A message's text parts are text, its images (PNG, JPEG, GIF, WebP) image
      blocks, its PDFs documents, its data parts their JSON as text; anything
      else is refused, naming the part (`message_content`).
    - The context id names the session: `session_prefix + contextId`, checked
      (1 to 128 of letters, digits, `._:-`), so a remote reaches only the
      sessions of its contexts, never another one of the store.
    - A turn paused for approval makes the task `input-required`, its status
      message listing the waiting calls in a data part
      `{"awaiting_approval": [{"id", "name", "input"}]}`; a follow-up message on
      the task holding `{"decisions": [...]}` resumes the turn (`decisions_of`).
    - With an orchestrator that streams (a `stream(agent, input)` method, as
      `LocalOrchestrator` and `TemporalOrchestrator` have), a streaming request
      gets the answer's text as artifact updates as it comes, then the whole
      answer replacing them; otherwise the answer comes whole.
    - A message on a context whose session waits on calls no task lists (a
      task cancelled before its calls could be denied, or tasks forgotten by a
      restart: they are kept in memory unless a `task_store` is given) gets a new
      `input-required` task listing them again, and nothing runs; a message
      holding their decisions resumes the session. This reads the session from
      `state`.
    - Cancelling a task cancels the dispatch running it. Cancelling a task
      waiting for approval denies its calls ("cancelled by the caller"): the
      core cannot record a denial without a turn, so the model reads them and
      answers once, into the session only; the context then takes new messages.
    """

    def __init__(
        self,
        orchestrator: Orchestrator,
        agent: AgentId,
        *,
        session_prefix: str = "a2a:",
        limits: MessageLimits | None = None,
        stream: bool = True,
        max_running: int = 32,
        state: StateReader | None = None,
    ) -> None:
        """Serve `agent` of `orchestrator`.

        Args:
            orchestrator: runs the turns (any `layer0.Orchestrator`).
            agent: the agent dispatched to.
            session_prefix: put before a context id to make its session's id, so the
                sessions of A2A contexts are apart from the store's other sessions
                ("" to use the context id itself).
            limits: what one message may carry (default: `MessageLimits()`).
            stream: stream answers to streaming requests when the orchestrator can.
            max_running: the most dispatches running at once; a message past them is
                refused (`ServerBusyError`), so a flood of messages cannot start
                unbounded work.
            state: the store the agent's sessions are kept in, read to learn what a
                paused session waits on (default: the orchestrator's `store`, as
                `LocalOrchestrator` has; None without one: a message on a paused
                session then fails with the turn's `AwaitingApprovalError`).
        """
        if max_running < 1:
            raise ValueError("max_running must be at least 1")
        self._orchestrator = orchestrator
        self._agent = agent
        self._prefix = session_prefix
        self._limits = MessageLimits() if limits is None else limits
        self._stream = stream
        self._runs: dict[str, _Run] = {}
        self._max_running = max_running
        self._running = 0  # counted from the check on, before the dispatch's task exists
        found = getattr(orchestrator, "store", None) if state is None else state
        self._state = found if isinstance(found, StateReader) else None

    def __repr__(self) -> str:
        return f"A2AExecutor(agent={self._agent!r}, orchestrator={self._orchestrator!r})"

    @property
    def limits(self) -> MessageLimits:
        """What one message may carry."""
        return self._limits

    def check_capacity(self) -> None:
        """Refuse a new dispatch when `max_running` already run.

        Raises:
            ServerBusyError: as many dispatches as allowed are running.
        """
        if self._running >= self._max_running:
            raise ServerBusyError(
                f"{self._running} tasks are running, the most this server runs at once;"
                " try again when one has ended"
            )

    def turn_input(
        self, message: Message, context_id: str, task_id: str, task: Task | None
    ) -> TurnInput:
        """The turn input of `message`, sent in context `context_id` on task `task_id`.

        `task` is the stored task the message follows up (None: a new task). A
        follow-up on a task waiting for approval must hold the decisions; any
        other message is a new user message for the turn.

        Raises:
            A2AError: the message or its decisions cannot be taken (a subclass says why).
        """
        session = session_of(context_id, self._prefix)
        waiting = waiting_calls(task)
        if waiting is not None:
            return resume_input(session, decisions_of(message, waiting))
        return TurnInput(
            message=message_content(message, self._limits),
            trigger="task",
            session=session,
            metadata={"a2a": {"task_id": task_id, "context_id": context_id}},
        )

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Run the turn the request asks for and report it on `event_queue` as task events."""
        task_id, context_id = context.task_id, context.context_id
        if task_id is None or context_id is None or context.message is None:
            raise InvalidParamsError(message="the request holds no message")
        updater = TaskUpdater(event_queue, task_id, context_id)
        current = context.current_task
        try:
            input = await self._input(context.message, context_id, task_id, current)
        except InvalidDecisionsError as exc:
            if current is None:
                raise _protocol_error(exc) from None
            # The task keeps waiting, as it was: the remote is told what to fix.
            await updater.requires_input(_asked_again(updater, current, str(exc)))
            return
        except A2AError as exc:
            raise _protocol_error(exc) from None
        if not isinstance(input, TurnInput):
            await self._list_paused(context, updater, input)
            return
        waiting = current if waiting_calls(current) is not None else None
        try:
            self.check_capacity()
        except ServerBusyError as exc:
            if waiting is None:
                raise _protocol_error(exc) from None
            await updater.requires_input(_asked_again(updater, waiting, str(exc)))
            return
        self._running += 1  # no await since the check: the count cannot be overtaken
        try:
            await self._run(context, updater, input, waiting)
        finally:
            self._running -= 1

    async def _input(
        self, message: Message, context_id: str, task_id: str, task: Task | None
    ) -> TurnInput | list[PendingCall]:
        """The turn input of `message`; or the calls its session waits on, when it cannot run.

        A message on a task waiting for approval is its follow-up (`turn_input`).
        Any other is read against what its context's session waits on now: on
        a paused session, its decisions resume it, and a message without them
        cannot run (the calls are listed again); decisions on a session waiting
        on nothing are refused.

        Raises:
            A2AError: the message or its decisions cannot be taken (a subclass says why).
        """
        if waiting_calls(task) is None:
            session = session_of(context_id, self._prefix)
            pending = await self._waits_on(session)
            if pending and not holds_decisions(message):
                return pending
            if pending:
                return resume_input(session, decisions_of(message, [c.id for c in pending]))
            if pending is not None and holds_decisions(message):
                raise InvalidDecisionsError(
                    f"context {context_id!r} waits on no call: the decisions have nothing"
                    " to decide; nothing was run"
                )
        return self.turn_input(message, context_id, task_id, task)

    async def _waits_on(self, session: SessionId) -> list[PendingCall] | None:
        """The calls `session` waits on now, read from `state` (None: no state to read)."""
        if self._state is None:
            return None
        return await session_waits_on(self._state, session)

    async def _list_paused(
        self, context: RequestContext, updater: TaskUpdater, pending: list[PendingCall]
    ) -> None:
        """Make the task `input-required`, listing the calls its context's session waits on."""
        if context.current_task is None and context.message is not None:
            task = _new_task(updater.task_id, updater.context_id, context.message)
            await updater.event_queue.enqueue_event(task)
        said = (
            "This conversation waits for decisions on calls an earlier task left undecided;"
            " your message was not run. Decide them on this task, then send it again."
        )
        await updater.requires_input(
            updater.new_agent_message([text_part(said), *pending_parts(pending)])
        )

    async def _run(
        self, context: RequestContext, updater: TaskUpdater, input: TurnInput, waiting: Task | None
    ) -> None:
        """Start the dispatch of `input`, and report how it ends."""
        message = context.message
        if context.current_task is None and message is not None:
            task = _new_task(updater.task_id, updater.context_id, message)
            await updater.event_queue.enqueue_event(task)
        await updater.start_work()
        streamed = self._stream and _streams(context)
        run = _Run(asyncio.create_task(self._dispatch(input, updater, streamed)))
        self._runs[updater.task_id] = run
        try:
            # A resume refused by the turn (an edited input its tool refuses) ran nothing.
            await self._report(run, updater, waiting)
        finally:
            self._runs.pop(updater.task_id, None)
            run.reported.set()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Cancel the dispatch running the task, if any, and report the task cancelled.

        The orchestrator decides what the stopped turn keeps (`LocalOrchestrator`:
        what its tools did). A task waiting for approval has its calls denied
        first, so its context's session is not left paused on them (`_deny`).
        """
        task_id = context.task_id
        run = None if task_id is None else self._runs.get(task_id)
        if run is not None:
            run.task.cancel()
            await run.reported.wait()  # `execute` reports the end, cancelled or not
            return
        if task_id is not None and context.context_id is not None:
            updater = TaskUpdater(event_queue, task_id, context.context_id)
            said = _CANCELLED
            if waiting_calls(context.current_task):
                said = await self._deny(context.context_id, context.current_task)
            await updater.cancel(updater.new_agent_message([text_part(said)]))

    async def _deny(self, context_id: str, task: Task | None) -> str:
        """Deny the calls the session of `context_id` waits on; say what became of them.

        Why a turn: the core records a decision only by resuming, which runs the
        model once after the denials (`resume_input`); its answer stays in the
        session, which then takes new messages. The calls are read from the
        session when there is `state` (what it waits on now), else from `task`.
        A denial that fails leaves the session paused: the context's next
        message lists the calls again.
        """
        session = session_of(context_id, self._prefix)
        pending = await self._waits_on(session)
        ids = [c.id for c in pending] if pending is not None else waiting_calls(task) or []
        if not ids:
            return _CANCELLED
        decisions = [Decision.deny(call, _DENIED_ON_CANCEL) for call in ids]
        self._running += 1  # a cancel is not refused for capacity, but its turn counts
        try:
            await self._orchestrator.dispatch(self._agent, resume_input(session, decisions))
        except Exception as exc:
            _logger.warning(
                "denying the calls of cancelled %s failed: %s", context_id, error_text(exc)
            )
            return f"{_CANCELLED}; its calls could not be denied ({error_text(exc)})"
        finally:
            self._running -= 1
        return f"{_CANCELLED}; the calls it waited on were denied: {', '.join(ids)}"

    async def _report(self, run: _Run, updater: TaskUpdater, waiting: Task | None) -> None:
        """Wait for the dispatch and report how it ended.

        `waiting` is the task the dispatch resumes, when it resumes one.
        """
        try:
            output = await run.task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # the request itself is cancelled (the server stops): nothing to say
            await updater.cancel(updater.new_agent_message([text_part(_CANCELLED)]))
            return
        except Exception as exc:
            refused = _approval_error(exc)
            if waiting is not None and refused is not None:
                # The turn refused the decisions before running anything: the task
                # keeps waiting, as it was, and says why.
                await updater.requires_input(_asked_again(updater, waiting, error_text(refused)))
                return
            # A turn's error: the remote learns its kind and message, never a traceback.
            _logger.warning("A2A task %s failed: %s", updater.task_id, error_text(exc))
            await updater.failed(updater.new_agent_message([text_part(error_text(exc))]))
            return
        state, reason = outcome(output)
        if state == TaskState.TASK_STATE_INPUT_REQUIRED:
            parts = pending_parts(pending_approvals(output))
            await updater.requires_input(updater.new_agent_message(parts))
            return
        if state == TaskState.TASK_STATE_COMPLETED or answer_text(output).strip():
            await updater.add_artifact(
                answer_parts(output), artifact_id=_ANSWER_ARTIFACT, name="answer", last_chunk=True
            )
        if state == TaskState.TASK_STATE_COMPLETED:
            await updater.complete()
            return
        message = updater.new_agent_message([text_part(reason or "the turn stopped")])
        await updater.update_status(state, message=message)

    async def _dispatch(self, input: TurnInput, updater: TaskUpdater, streamed: bool) -> TurnOutput:
        followed = follow_dispatch(self._orchestrator, self._agent, input, stream=streamed)
        answer = AnswerStream(updater, _ANSWER_ARTIFACT)
        try:
            async with followed:
                async for event in followed:
                    if isinstance(event, ModelCallStart):
                        await answer.restart()  # a new model call's answer
                    elif isinstance(event, TextDelta) and event.text:
                        await answer.add(event.text)
                    elif isinstance(event, ToolStart):
                        await answer.flush()
                        note = updater.new_agent_message([text_part(f"running tool {event.name}")])
                        await updater.update_status(TaskState.TASK_STATE_WORKING, message=note)
            await answer.flush()
        finally:
            answer.close()
        return followed.output


def _protocol_error(exc: A2AError) -> ProtocolError:
    """The A2A (JSON-RPC) error telling the remote about `exc`.

    Why: the SDK turns its own error types into JSON-RPC errors with their codes.
    """
    if isinstance(exc, UnsupportedPartError):
        return ContentTypeNotSupportedError(message=str(exc))
    if isinstance(exc, ServerBusyError):
        return UnsupportedOperationError(message=f"{type(exc).__name__}: {exc}")
    return InvalidParamsError(message=f"{type(exc).__name__}: {exc}")


def _approval_error(exc: BaseException) -> ApprovalError | None:
    """The `ApprovalError` that caused `exc` (an orchestrator wraps it), if one did."""
    current: BaseException | None = exc
    for _ in range(8):  # a chain is short; a cycle must not hang the server
        if current is None:
            return None
        if isinstance(current, ApprovalError):
            return current
        current = current.__cause__
    return None


def _streams(context: RequestContext) -> bool:
    return context.call_context.state.get("method") != _BLOCKING_METHOD


def _new_task(task_id: str, context_id: str, message: Message) -> Task:
    return Task(
        id=task_id,
        context_id=context_id,
        status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
        history=[message],
    )


def _asked_again(updater: TaskUpdater, task: Task, problem: str) -> Message:
    """The status message of a task still waiting: the problem, then what it waits on."""
    parts: list[Part] = [text_part(f"The decisions were refused: {problem}")]
    parts.extend(p for p in task.status.message.parts if p.WhichOneof("content") == "data")
    return updater.new_agent_message(parts)
