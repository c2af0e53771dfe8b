"""`VercelAiRunner`: one agent of a `layer0.Orchestrator` as a source of AI SDK chat responses.

Each chat request becomes a dispatch to the agent on the chat's session
(`session_prefix` + the chat id); its events become UI message chunks as they
happen when the orchestrator streams, and its output the response's end.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, Sequence

from layer0 import AgentId, Orchestrator
from neuron_tool import ExternalTool, is_tool_name
from neuron_tool.serving import error_text
from neuron_turn import relay

from ._chunks import ChatChunks, Chunk
from ._input import turn_input
from ._request import ChatRequest
from .errors import ServerBusyError, VercelAiError
from .limits import ChatLimits

__all__ = ["VercelAiRunner"]


class VercelAiRunner:
    """Runs one agent of an orchestrator for the AI SDK: a chat request in, UI message chunks out.

    Why: `vercel_ai_app` serves it over HTTP; an application with a server of
    its own (FastAPI, say) writes its chunks as server-sent events itself.

    - The chat id names the session: `session_prefix + id`, checked (1 to 128
      of letters, digits, `._:-`), so a client reaches only its chats'
      sessions. The session holds the history: of `messages`, only the end is
      read (the last user message, or the last assistant message's last step).
    - `frontend_tools` are the client's (`useChat`'s `onToolCall`): offered to
      the model as external tools, whose calls end the response (with their
      `tool-input-available`) for the client to run and answer with
      `addToolOutput`; the next request carries the outputs.
    - Calls held for a person's approval end the response with a
      `tool-approval-request` each; the next request's approval responses
      (`addToolApprovalResponse`), or the body's `neuron_decisions`, decide them.
    - Every response ends with `finish`, after an `error` chunk (the error's
      kind and message; never a traceback) when the turn failed.
    - Cancelling the iteration (the client went away) cancels the dispatch.
    """

    def __init__(
        self,
        orchestrator: Orchestrator,
        agent: AgentId,
        *,
        frontend_tools: Sequence[ExternalTool] = (),
        session_prefix: str = "vercel:",
        limits: ChatLimits | None = None,
        stream: bool = True,
        max_running: int = 32,
    ) -> None:
        """Serve `agent` of `orchestrator`.

        Args:
            orchestrator: runs the turns (any `layer0.Orchestrator`).
            agent: the agent dispatched to.
            frontend_tools: the tools the client runs (the AI SDK sends no tool
                list: the server declares them, as the client's `onToolCall` knows them).
            session_prefix: put before a chat id to make its session's id, so the
                sessions of AI SDK chats are apart from the store's other sessions.
            limits: what one request may carry (default: `ChatLimits()`).
            stream: stream the turn's events when the orchestrator can (a
                `stream(agent, input)` method, as `LocalOrchestrator` has);
                otherwise the answer comes whole at the end.
            max_running: the most chats running at once; a request past them
                ends at once with an `error` chunk `ServerBusyError`, nothing started.

        Raises:
            ValueError: `max_running` below 1, or a frontend tool's name is no
                tool name or is given twice.
        """
        if max_running < 1:
            raise ValueError("max_running must be at least 1")
        names = [tool.name for tool in frontend_tools]
        for name in names:
            if not is_tool_name(name) or names.count(name) > 1:
                raise ValueError(f"frontend tool names must be distinct tool names; got {name!r}")
        self._orchestrator = orchestrator
        self._agent = agent
        self._frontend = tuple(frontend_tools)
        self._prefix = session_prefix
        self._limits = ChatLimits() if limits is None else limits
        self._stream = stream
        self._max_running = max_running
        self._running = 0

    def __repr__(self) -> str:
        return f"VercelAiRunner(agent={self._agent!r}, orchestrator={self._orchestrator!r})"

    @property
    def limits(self) -> ChatLimits:
        """What one request may carry."""
        return self._limits

    async def chat(self, request: ChatRequest) -> AsyncGenerator[Chunk]:
        """The chunks answering `request`, from `start` to `finish`.

        A request resuming a paused answer continues its message: `start`
        names the last assistant message's id, as the AI SDK's own server does.
        """
        last = request.messages[-1] if request.messages else None
        continued = last is not None and last.role == "assistant" and last.id
        yield {"type": "start", "messageId": last.id if continued and last else _new_id()}
        try:
            input, decisions = turn_input(request, self._prefix, self._limits, self._frontend)
            self._check_capacity()
        except VercelAiError as exc:
            yield {"type": "error", "errorText": error_text(exc)}
            yield {"type": "finish", "finishReason": "error"}
            return
        chunks = ChatChunks(decisions)
        self._running += 1  # no await since the check: the count cannot be overtaken
        try:
            stream = relay(self._orchestrator, self._agent, input, chunks, stream=self._stream)
            async for chunk in stream:
                yield chunk
        finally:
            self._running -= 1

    def _check_capacity(self) -> None:
        if self._running >= self._max_running:
            raise ServerBusyError(
                f"{self._running} chats are running, the most this server runs at once;"
                " try again when one has ended"
            )


def _new_id() -> str:
    return str(uuid.uuid4())
