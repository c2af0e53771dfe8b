"""`AgUiRunner`: one agent of a `layer0.Orchestrator` as a source of AG-UI runs.

Each AG-UI run becomes a dispatch to the agent on the thread's session
(`session_prefix` + the thread id); its events become AG-UI events as they
happen when the orchestrator streams, and its output the run's end.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from ag_ui.core import PROTOCOL_VERSION, BaseEvent, RunAgentInput, RunErrorEvent, RunStartedEvent

from layer0 import AgentId, Orchestrator
from neuron_turn import relay, split_decisions

from ._events import RunEvents
from ._input import turn_input
from .errors import AgUiError, ServerBusyError
from .limits import RunLimits

__all__ = ["AgUiRunner"]


class AgUiRunner:
    """Runs one agent of an orchestrator for AG-UI: a `RunAgentInput` in, AG-UI events out.

    Why: `ag_ui_app` serves it over HTTP; an application with a server of its
    own (FastAPI, say) encodes its events with `ag_ui.encoder.EventEncoder`.

    - The thread id names the session: `session_prefix + threadId`, checked
      (1 to 128 of letters, digits, `._:-`), so a client reaches only its
      threads' sessions. The session holds the history: of `messages`, only
      the end is read (the last user message, or trailing tool results).
    - The run's `tools` are the client's: offered to the model as external
      tools, whose calls end the run (TOOL_CALL_* then RUN_FINISHED naming
      them in `pendingToolCallIds`) for the client to run and answer with
      `role: "tool"` messages in the next run.
    - Calls held for a person's approval end the run with a CUSTOM
      `neuron.awaiting_approval` event and an interrupt outcome; the next
      run's `resume` entries (or `forwardedProps.neuron_decisions`) decide them.
    - Every run ends with RUN_FINISHED or RUN_ERROR (the error's kind as
      `code`, its message; never a traceback). Before RUN_FINISHED (and a
      pause's interrupt events), a MESSAGES_SNAPSHOT holds the run's
      conversation: the messages it was sent, then what the turn added, under
      the ids its events used; a client takes it in place of its own list.
    - Cancelling the iteration (the client went away) cancels the dispatch.
    """

    def __init__(
        self,
        orchestrator: Orchestrator,
        agent: AgentId,
        *,
        session_prefix: str = "ag-ui:",
        limits: RunLimits | None = None,
        stream: bool = True,
        max_running: int = 32,
        messages_snapshot: bool = True,
    ) -> None:
        """Serve `agent` of `orchestrator`.

        Args:
            orchestrator: runs the turns (any `layer0.Orchestrator`).
            agent: the agent dispatched to.
            session_prefix: put before a thread id to make its session's id, so the
                sessions of AG-UI threads are apart from the store's other sessions.
            limits: what one run may carry (default: `RunLimits()`).
            stream: stream the turn's events when the orchestrator can (a
                `stream(agent, input)` method, as `LocalOrchestrator` has);
                otherwise the answer comes whole at the end.
            max_running: the most runs at once; a run past them ends at once
                with RUN_ERROR `ServerBusyError`, nothing started.
            messages_snapshot: send a MESSAGES_SNAPSHOT before a finished or paused
                run's end. On by default: AG-UI clients send the whole
                conversation with each run and take the snapshot in place of
                theirs, so it is what they should hold. Off, for a client that
                sends only the new message (it would keep only what it sent and
                the run's additions), or to save the bytes: the snapshot repeats
                the messages sent, images included, uncut.
        """
        if max_running < 1:
            raise ValueError("max_running must be at least 1")
        self._orchestrator = orchestrator
        self._agent = agent
        self._prefix = session_prefix
        self._limits = RunLimits() if limits is None else limits
        self._stream = stream
        self._max_running = max_running
        self._running = 0
        self._messages_snapshot = messages_snapshot

    def __repr__(self) -> str:
        return f"AgUiRunner(agent={self._agent!r}, orchestrator={self._orchestrator!r})"

    @property
    def limits(self) -> RunLimits:
        """What one run may carry."""
        return self._limits

    async def run(self, run: RunAgentInput) -> AsyncGenerator[BaseEvent]:
        """The AG-UI events of `run`, from RUN_STARTED to RUN_FINISHED or RUN_ERROR."""
        yield RunStartedEvent(
            thread_id=run.thread_id, run_id=run.run_id, protocol_version=PROTOCOL_VERSION
        )
        try:
            input = turn_input(run, self._prefix, self._limits)
            self._check_capacity()
        except AgUiError as exc:
            yield RunErrorEvent(code=type(exc).__name__, message=str(exc))
            return
        resumed, _ = split_decisions(input.metadata)
        sent = run.messages if self._messages_snapshot else None
        events = RunEvents(run.thread_id, run.run_id, resumed or (), sent=sent)
        self._running += 1  # no await since the check: the count cannot be overtaken
        try:
            stream = relay(self._orchestrator, self._agent, input, events, stream=self._stream)
            async for event in stream:
                yield event
        finally:
            self._running -= 1

    def _check_capacity(self) -> None:
        if self._running >= self._max_running:
            raise ServerBusyError(
                f"{self._running} runs are running, the most this server runs at once;"
                " try again when one has ended"
            )
