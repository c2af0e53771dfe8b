"""`RemoteAgent`: a remote A2A agent as a `layer0.Turn`, so an orchestrator hosts it by name.

The other direction from `serve_a2a`: a turn's input is sent to the remote
agent as an A2A message (its text, images and PDF documents; the session as
the context id, so a local session continues a remote conversation), and the
remote's completed task becomes the turn's output. A remote call waiting for
approval pauses the turn as a `NeuronTurn`'s own would; the resume's decisions
go to the remote task. Cancelling the turn cancels the remote task.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Final
from urllib.parse import urlsplit

import httpx
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Role,
    SendMessageRequest,
    SendMessageResponse,
    Task,
    TaskState,
)
from google.protobuf import json_format

from layer0 import TurnInput, TurnMetadata, TurnOutput, usd
from neuron_turn import TextDelta, TurnDone, TurnEvent, pending_approvals, split_decisions

from ._remote_parts import (
    PartError,
    answer_output,
    context_of,
    decisions_part,
    exchange_effect,
    input_parts,
    paused_output,
    status_text,
    waiting_calls,
)
from ._rpc import Rpc
from ._streamed import StreamedTask
from .errors import (
    RemoteAgentError,
    RemoteAnswerError,
    RemoteAuthError,
    RemoteInputError,
    RemoteTaskError,
    RemoteUnavailableError,
)

__all__ = ["RemoteAgent"]

_MAX_ANSWER_BYTES: Final = 16 * 1024 * 1024
# A cancelled turn waits this long at most for the remote to take its CancelTask.
_CANCEL_SECONDS: Final = 5.0
_STREAM: Final = "SendStreamingMessage"
_SEND: Final = "SendMessage"


class RemoteAgent:
    """A remote A2A agent as a `layer0.Turn`: the turn's input goes to it, its answer comes back.

    Why: an agent of another system (or a neuron agent served by `serve_a2a`)
    then works as a local one: `LocalOrchestrator(agents={"remote": RemoteAgent(url)})`
    dispatches to it, and a `NeuronTurn` delegates to it by that name.

    - It reads the agent card (`/.well-known/agent-card.json` under `url`) on
      first use, and calls the JSON-RPC endpoint the card names, which must be
      on the same origin: the token is sent nowhere else. Every request
      carries `Authorization: Bearer <token>`.
    - The message's text, images (base64) and documents (`document_block`,
      base64) become A2A parts; the session becomes the context id
      (`context_prefix` + the session, characters a context id cannot hold
      written `_xx`), so a local session continues a remote conversation.
    - A completed task is a complete turn: its `answer` artifact's text, a
      data part as the typed value (`neuron_turn.output_value`). The remote's
      tokens and cost are unknown: zero in the output's metadata.
    - A remote call waiting for approval ends the turn `AWAITING_APPROVAL`,
      listing the calls (`pending_approvals`); the resume
      (`resume_input(session, decisions)`) sends the decisions to the waiting
      remote task of the session's context. Each exchange of a session is
      recorded in its local history (`exchange_effect`), where a delegating
      `NeuronTurn` finds the calls its delegated agent waits on.
    - A failed, rejected or cancelled task raises `RemoteTaskError`; a refused
      token `RemoteAuthError`; no connection, a 5xx or a 429
      `RemoteUnavailableError` (retryable); a malformed or oversized answer
      `RemoteAnswerError`. Cancelling `execute` cancels the remote task.
    - `stream` yields the answer's text as the remote streams it (`TextDelta`),
      then `TurnDone`: `LocalOrchestrator.stream` passes it on as a local turn's.
    """

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        timeout: float = 300.0,
        http_client: httpx.AsyncClient | None = None,
        context_prefix: str = "",
        max_answer_bytes: int = _MAX_ANSWER_BYTES,
    ) -> None:
        """Call the A2A agent at `url` (its base URL, where its card is).

        Args:
            url: the agent's base URL (`http://host:port`); its card is at
                `url + /.well-known/agent-card.json`.
            token: the bearer token sent with every request (None: none is sent).
            timeout: the most seconds one turn waits for the remote; past it the
                remote task is cancelled and `RemoteUnavailableError` raised.
            http_client: the HTTP client to use (kept open: its owner closes it);
                None: one is made, reused by every call, and closed by `aclose`.
            context_prefix: put before a session to make its context id, so the
                contexts of these sessions are apart from the remote's others.
            max_answer_bytes: the most bytes one answer (a whole stream) may take.

        Raises:
            ValueError: `url` is not an http(s) URL or holds credentials, the token
                cannot travel in a header, or a number is not positive.
        """
        parts = urlsplit(url)
        if parts.username is not None or parts.password is not None:
            # Every error and log line names the URL: credentials in it would go along.
            raise ValueError(
                "the remote agent's URL holds credentials (user:password@); give the"
                " token as token= instead"
            )
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"the remote agent's URL must be http(s)://host[:port]; got {url!r}")
        if token is not None and (
            not token or not token.isascii() or not token.isprintable() or " " in token
        ):
            raise ValueError("the token must be printable ASCII without spaces")
        if timeout <= 0 or max_answer_bytes < 1:
            raise ValueError("timeout and max_answer_bytes must be positive")
        self._url = url.rstrip("/")
        self._timeout = timeout
        self._prefix = context_prefix
        self._owns_http = http_client is None
        self._http = httpx.AsyncClient() if http_client is None else http_client
        self._rpc = Rpc(self._http, self._url, token, max_answer_bytes, timeout)
        self._card: tuple[str, AgentCard] | None = None
        self._card_lock = asyncio.Lock()

    def __repr__(self) -> str:
        return f"RemoteAgent({self._url!r})"

    @property
    def url(self) -> str:
        """The remote agent's base URL."""
        return self._url

    @property
    def card(self) -> AgentCard | None:
        """The remote's agent card, once read (None before the first call)."""
        return None if self._card is None else self._card[1]

    async def aclose(self) -> None:
        """Close the HTTP client this agent made (one given to it is left open)."""
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> RemoteAgent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def execute(self, input: TurnInput) -> TurnOutput:
        """Send `input` to the remote agent and return its answer as the turn's output.

        Raises:
            RemoteAgentError: a subclass saying what failed (see the class docstring).
        """
        return await self._execute(input, None)

    def stream(self, input: TurnInput) -> AsyncIterator[TurnEvent]:
        """`execute`, yielding the answer's text as the remote streams it, then `TurnDone`.

        What `LocalOrchestrator.stream` reads, so a remote agent's answer streams
        through a local dispatch as a local turn's does. A remote that does not
        stream gives its answer in `TurnDone` alone.

        Raises:
            RemoteAgentError: as `execute`, from the iteration.
        """
        return self._streamed(input)

    async def _streamed(self, input: TurnInput) -> AsyncIterator[TurnEvent]:
        texts: asyncio.Queue[str] = asyncio.Queue()
        running = asyncio.create_task(self._execute(input, texts.put_nowait))
        try:
            while not running.done():
                said = asyncio.ensure_future(texts.get())
                await asyncio.wait([said, running], return_when=asyncio.FIRST_COMPLETED)
                if not said.done():
                    said.cancel()
                    break
                yield TextDelta(said.result())
            while not texts.empty():
                yield TextDelta(texts.get_nowait())
            output = await running
        finally:
            # Closed or cancelled early: the call stops, and with it the remote task.
            if not running.done():
                running.cancel()
                await asyncio.wait([running])
        yield TurnDone(output)

    async def _execute(self, input: TurnInput, on_text: Callable[[str], None] | None) -> TurnOutput:
        started = time.monotonic()
        decisions, _ = split_decisions(input.metadata)
        try:
            context_id = context_of(input.session, self._prefix)
            parts = [decisions_part(decisions)] if decisions is not None else None
            if parts is None:
                parts = input_parts(input.message)
        except PartError as exc:
            raise RemoteInputError(
                f"cannot send to the remote agent at {self._url}: {exc}"
            ) from None
        if decisions is not None and context_id is None:
            raise RemoteInputError(
                f"decisions for the remote agent at {self._url} need the session of the paused turn"
            )
        try:
            async with asyncio.timeout(self._timeout):
                endpoint, card = await self._read_card()
                task_id = ""
                if decisions is not None and context_id is not None:
                    task_id = await self._waiting_task(endpoint, context_id)
                message = Message(
                    role=Role.ROLE_USER,
                    message_id=str(uuid.uuid4()),
                    context_id=context_id or "",
                    task_id=task_id,
                    parts=parts,
                )
                request = SendMessageRequest(message=message)
                answer = await self._send(endpoint, card, request, on_text)
        except TimeoutError:
            raise RemoteUnavailableError(
                f"the remote agent at {self._url} did not answer within {self._timeout:g}s;"
                " its task, once named, was asked to cancel"
            ) from None
        output = self._output(answer, _metadata(started))
        if input.session is None:
            return output
        asked = input.message if decisions is None else decisions
        record = exchange_effect(input.session, asked, output, pending_approvals(output))
        return output.model_copy(update={"effects": [*output.effects, record]})

    async def _read_card(self) -> tuple[str, AgentCard]:
        async with self._card_lock:
            if self._card is None:
                self._card = await self._rpc.card()
            return self._card

    async def _waiting_task(self, endpoint: str, context_id: str) -> str:
        """The id of the remote task of `context_id` waiting for approval ("" if none)."""
        request = ListTasksRequest(
            context_id=context_id, status=TaskState.TASK_STATE_INPUT_REQUIRED
        )
        result = await self._rpc.call(endpoint, "ListTasks", request)
        try:
            tasks = json_format.ParseDict(result, ListTasksResponse(), ignore_unknown_fields=True)
        except json_format.ParseError:
            raise RemoteAnswerError(
                f"the task list from the remote agent at {self._url} is malformed"
            ) from None
        # None (a restart forgot its tasks): the decisions go to the context, whose paused
        # session a neuron remote finds itself, or which refuses them saying why.
        return tasks.tasks[0].id if tasks.tasks else ""

    async def _send(
        self,
        endpoint: str,
        card: AgentCard,
        request: SendMessageRequest,
        on_text: Callable[[str], None] | None,
    ) -> Task | Message:
        if not card.capabilities.streaming:
            # No stream, no task id until the answer: a cancelled call cannot name its task.
            result = await self._rpc.call(endpoint, _SEND, request)
            try:
                response = json_format.ParseDict(
                    result, SendMessageResponse(), ignore_unknown_fields=True
                )
            except json_format.ParseError:
                raise RemoteAnswerError(
                    f"the answer from the remote agent at {self._url} is not a task"
                ) from None
            kind = response.WhichOneof("payload")
            if kind is None:
                raise RemoteAnswerError(f"the remote agent at {self._url} answered no task")
            return response.task if kind == "task" else response.message
        # The stream is read in a task of its own, so that a cancelled call can still
        # learn its task's id from the stream (the first event names it) to cancel it.
        named: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        reader = asyncio.create_task(self._read_stream(endpoint, request, named, on_text))
        try:
            return await asyncio.shield(reader)
        except asyncio.CancelledError:
            try:
                await self._cancel_remote(endpoint, named)
            finally:
                # Cancelled again while asking the remote: the reading stops all the same.
                reader.cancel()
                await asyncio.wait([reader])
                if not reader.cancelled():
                    reader.exception()  # taken: the call is cancelled, its reading's end is moot
            raise

    async def _read_stream(
        self,
        endpoint: str,
        request: SendMessageRequest,
        named: asyncio.Future[str],
        on_text: Callable[[str], None] | None,
    ) -> Task | Message:
        """The task the stream of `request` ends with; `named` gets its id once known.

        `on_text` gets the answer's text as it grows (see `StreamedText`).
        """
        streamed = StreamedTask(on_text)
        try:
            async for event in self._rpc.stream(endpoint, _STREAM, request):
                message = streamed.apply(event)
                if message is not None:
                    return message
                task = streamed.task
                if task is not None and task.id and not named.done():
                    named.set_result(task.id)
        finally:
            if not named.done():
                named.set_result("")
        task = streamed.task
        if task is None:
            raise RemoteAnswerError(f"the remote agent at {self._url} answered no task")
        return task

    async def _cancel_remote(self, endpoint: str, named: asyncio.Future[str]) -> None:
        """Ask the remote to cancel the call's task once `named` names it; best effort, bounded."""
        with contextlib.suppress(RemoteAgentError, TimeoutError):
            async with asyncio.timeout(_CANCEL_SECONDS):
                task_id = await asyncio.shield(named)
                if task_id:
                    await self._rpc.call(endpoint, "CancelTask", CancelTaskRequest(id=task_id))

    def _output(self, answer: Task | Message, metadata: TurnMetadata) -> TurnOutput:
        try:
            return self._read_answer(answer, metadata)
        except PartError as exc:
            raise RemoteAnswerError(
                f"the answer of the remote agent at {self._url} cannot be read: {exc}"
            ) from None

    def _read_answer(self, answer: Task | Message, metadata: TurnMetadata) -> TurnOutput:
        if isinstance(answer, Message):
            return answer_output(answer, metadata, self._rpc.hidden)
        state = answer.status.state
        said = status_text(answer, self._rpc.hidden) or "(it gave no reason)"
        if state == TaskState.TASK_STATE_COMPLETED:
            return answer_output(answer, metadata, self._rpc.hidden)
        if state == TaskState.TASK_STATE_INPUT_REQUIRED:
            calls = waiting_calls(answer)
            if calls:
                return paused_output(calls, status_text(answer, self._rpc.hidden), metadata)
            raise RemoteTaskError(
                f"the remote agent at {self._url} asks for input, which a turn cannot give: {said}"
            )
        if state == TaskState.TASK_STATE_AUTH_REQUIRED:
            raise RemoteAuthError(f"the remote agent at {self._url} asks for authorization: {said}")
        verbs = {
            TaskState.TASK_STATE_FAILED: "failed",
            TaskState.TASK_STATE_REJECTED: "rejected",
            TaskState.TASK_STATE_CANCELED: "cancelled",
        }
        verb = verbs.get(state)
        if verb is not None:
            raise RemoteTaskError(f"the remote agent at {self._url} {verb} the task: {said}")
        raise RemoteAnswerError(
            f"the remote agent at {self._url} ended the call with its task"
            f" {TaskState.Name(state)}, before it was done"
        )


def _metadata(started: float) -> TurnMetadata:
    # The remote's tokens and cost are not told over A2A: zero, not a guess.
    duration = int((time.monotonic() - started) * 1000)
    return TurnMetadata(
        tokens_in=0, tokens_out=0, cost=usd(), turns_used=1, tools_called=[], duration=duration
    )
