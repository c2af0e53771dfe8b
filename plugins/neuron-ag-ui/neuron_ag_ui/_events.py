"""From a neuron turn's events and output to AG-UI events.

One `RunEvents` follows one run: the model's streamed thinking becomes a
reasoning message (REASONING_START, REASONING_MESSAGE_START / CONTENT / END,
REASONING_END), each model answer one text message
(TEXT_MESSAGE_START / CONTENT / END), each tool call a TOOL_CALL_START, its
arguments as the model writes them (TOOL_CALL_ARGS, ended by TOOL_CALL_END when
the model's answer is done; whole, when the orchestrator does not stream) and,
for the server's own tools, its result (TOOL_CALL_RESULT); a tool's state sent
with `send_state` or `send_state_delta` a STATE_SNAPSHOT or STATE_DELTA; what
the provider ran itself (a hosted tool) a CUSTOM `neuron.hosted_tool_call`; and the
output the run's end: RUN_FINISHED (with the typed result, or the calls the
client must answer), or RUN_ERROR with the kind and message of what stopped it,
never a traceback. A run that finishes or pauses sends, before its end, a
MESSAGES_SNAPSHOT of its conversation (see `_snapshot`); a failed one sends
none: what the session kept of it is no answer the client should take as the
agent's.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Sequence
from typing import Final

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    Interrupt,
    Message,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    StateDeltaEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from pydantic import JsonValue, ValidationError

from layer0 import TurnOutput
from neuron_tool.serving import error_text
from neuron_turn import (
    AWAITING_APPROVAL,
    Decision,
    HostedToolCall,
    ModelCallDone,
    ModelCallStart,
    PendingCall,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallStart,
    ToolProgress,
    ToolResult,
    ToolStart,
    answer_text,
    pending_approvals,
    stopped_reason,
    typed_result,
    well_formed,
)

from ._snapshot import StreamedIds, messages_snapshot
from .state import DELTA_KEY, SNAPSHOT_KEY

APPROVAL_EVENT: Final = "neuron.awaiting_approval"
"""The name of the CUSTOM event listing the calls waiting for a person's approval."""
HOSTED_CALL_EVENT: Final = "neuron.hosted_tool_call"
"""The name of the CUSTOM event saying what the provider ran for the model (a hosted
tool: a web search's query, a page fetched, code run), once the model's answer is done."""
APPROVAL_REASON: Final = "tool_approval"
"""The `reason` of the interrupts of calls waiting for approval."""

_logger: Final = logging.getLogger("neuron_ag_ui")
# What a resume entry's payload holds, for a client building a form from it.
_DECISION_SCHEMA: Final[dict[str, JsonValue]] = {
    "type": "object",
    "properties": {
        "approve": {"type": "boolean"},
        "reason": {"type": "string", "description": "why, for a denial"},
        "input": {"description": "an approval's edited input (default: the model's)"},
    },
    "required": ["approve"],
}


class RunEvents:
    """The AG-UI events of one run, made as the turn's events and its end arrive."""

    def __init__(
        self,
        thread_id: str,
        run_id: str,
        resumed: Sequence[Decision] = (),
        *,
        sent: Sequence[Message] | None = None,
    ) -> None:
        """Follow the run `run_id` of thread `thread_id`, resuming the calls `resumed` decides.

        The client knows the resumed calls from the run that paused on them, and
        the results of those it answered itself: neither is sent again. With
        `sent` (the run's `messages`), a run that finishes or pauses sends a
        MESSAGES_SNAPSHOT of them and of what the turn added, before its end.
        """
        self._thread = thread_id
        self._run = run_id
        self._open: str | None = None  # the text message being streamed
        self._reasoning: str | None = None  # the reasoning message being streamed
        self._answer: str | None = None  # the current model answer's message, for its calls
        self._announced = {d.id for d in resumed}
        self._writing: dict[str, None] = {}  # calls whose arguments are streaming, in order
        self._answered = {d.id for d in resumed if d.decision == "answer"}
        self._streamed_text = False
        self._sent = sent
        self._asked = not resumed  # a run resuming calls carries no new user message
        self._ids = StreamedIds()

    def on(self, event: object) -> list[BaseEvent]:
        """The AG-UI events of one of the turn's events (none for most)."""
        if isinstance(event, ModelCallStart):
            self._answer = None
            self._ids.answer()
            return self._close()
        if isinstance(event, TextDelta) and event.text:
            return self._text(event.text)
        if isinstance(event, ThinkingDelta) and event.text:
            return self._thinking(event.text)
        if isinstance(event, ToolCallStart):
            return self._start_writing(event.id, event.name)
        if isinstance(event, ToolCallDelta) and event.id in self._writing and event.arguments:
            # Well formed here too: an orchestrator's events need not come from a NeuronTurn,
            # and a lone surrogate would fail the event's JSON, ending the stream unfinished.
            return [ToolCallArgsEvent(tool_call_id=event.id, delta=well_formed(event.arguments))]
        if isinstance(event, ModelCallDone):
            hosted = [_hosted_call(call) for call in event.hosted_calls]
            return [*self._close_reasoning(), *self._end_writing(), *hosted]
        if isinstance(event, ToolProgress) and isinstance(event.data, dict):
            return _state_events(event.data)
        if isinstance(event, ToolStart):
            return self._announce(event.id, event.name, event.input)
        if isinstance(event, ToolResult) and event.id not in self._answered:
            content = well_formed(event.content)
            result = ToolCallResultEvent(
                message_id=_new_id(), tool_call_id=event.id, content=content, role="tool"
            )
            self._ids.result(event.id, result.message_id)
            return [*self._announce(event.id, event.name, None), result]
        return []

    def finished(self, output: TurnOutput) -> list[BaseEvent]:
        """The run's last events, for the turn's `output`."""
        events = [*self._end_writing(), *self._close()]
        if not self._streamed_text:
            # An orchestrator that does not stream: the answer comes whole.
            text = answer_text(output)
            if text:
                self._ids.whole(text)
                events += [*self._text(text), *self._close()]
        reason = output.exit_reason
        if reason == "complete":
            snapshot = self._snapshot(output)
            return [*events, *snapshot, self._finished(result=typed_result(output))]
        pending = pending_approvals(output) if reason == AWAITING_APPROVAL else []
        if pending:
            return events + self._paused(pending, output)
        code, message = stopped_reason(output)
        return [*events, RunErrorEvent(code=code, message=message)]

    def failed(self, exc: BaseException) -> list[BaseEvent]:
        """The run's last events when the dispatch raised `exc`: RUN_ERROR saying why."""
        return [
            *self._end_writing(),
            *self._close(),
            RunErrorEvent(code=error_code(exc), message=error_text(exc)),
        ]

    def _paused(self, pending: Sequence[PendingCall], output: TurnOutput) -> list[BaseEvent]:
        events: list[BaseEvent] = []
        for call in pending:
            events += self._announce(call.id, call.name, call.input)
        events += self._snapshot(output)
        held = [call for call in pending if not call.external]
        if not held:
            # Only the client's calls: a completed run, the calls for it to answer.
            ids = [call.id for call in pending]
            return [
                *events,
                self._finished(outcome=RunFinishedSuccessOutcome(pending_tool_call_ids=ids)),
            ]
        listing: list[JsonValue] = [
            call.model_dump(mode="json", exclude_none=True) for call in held
        ]
        events.append(CustomEvent(name=APPROVAL_EVENT, value={"awaiting_approval": listing}))
        interrupts = [
            Interrupt(
                id=call.id,
                reason=APPROVAL_REASON,
                message=f"The agent asks to run {call.name}: approve or deny.",
                tool_call_id=call.id,
                response_schema=_DECISION_SCHEMA,
            )
            for call in held
        ]
        return [*events, self._finished(outcome=RunFinishedInterruptOutcome(interrupts=interrupts))]

    def _snapshot(self, output: TurnOutput) -> list[BaseEvent]:
        """The run's MESSAGES_SNAPSHOT, when it sends one and the turn's history reads."""
        if self._sent is None:
            return []
        snapshot = messages_snapshot(self._sent, self._asked, output, self._ids)
        return [] if snapshot is None else [snapshot]

    def _finished(
        self,
        *,
        result: JsonValue = None,
        outcome: RunFinishedSuccessOutcome | RunFinishedInterruptOutcome | None = None,
    ) -> RunFinishedEvent:
        return RunFinishedEvent(
            thread_id=self._thread, run_id=self._run, result=result, outcome=outcome
        )

    def _thinking(self, text: str) -> list[BaseEvent]:
        """A piece of the model's reasoning: a reasoning message apart from its answer's text."""
        events: list[BaseEvent] = []
        if self._reasoning is None:
            events += self._close()
            self._reasoning = _new_id()
            self._ids.reasoning(self._reasoning)
            events += [
                ReasoningStartEvent(message_id=self._reasoning),
                ReasoningMessageStartEvent(message_id=self._reasoning, role="reasoning"),
            ]
        events.append(ReasoningMessageContentEvent(message_id=self._reasoning, delta=text))
        return events

    def _text(self, text: str) -> list[BaseEvent]:
        self._streamed_text = True
        events = self._close_reasoning()
        if self._open is None:
            self._open = self._answer = _new_id()
            self._ids.text(self._open)
            events.append(TextMessageStartEvent(message_id=self._open, role="assistant"))
        events.append(TextMessageContentEvent(message_id=self._open, delta=text))
        return events

    def _close(self) -> list[BaseEvent]:
        """End the reasoning or text message being streamed, if any."""
        events = self._close_reasoning()
        if self._open is not None:
            closed, self._open = self._open, None
            events.append(TextMessageEndEvent(message_id=closed))
        return events

    def _close_reasoning(self) -> list[BaseEvent]:
        if self._reasoning is None:
            return []
        closed, self._reasoning = self._reasoning, None
        return [ReasoningMessageEndEvent(message_id=closed), ReasoningEndEvent(message_id=closed)]

    def _start_writing(self, id: str, name: str) -> list[BaseEvent]:
        """A call the model began writing: its START, its arguments to follow as they come."""
        if id in self._writing:
            # The model repeated an id: a model writes its calls one after another,
            # so the first is whole. The loop gives the second a fresh id, under
            # which it is announced whole when it runs or waits.
            del self._writing[id]
            return [ToolCallEndEvent(tool_call_id=id)]
        if id in self._announced:  # a resumed call, or a repeat of a call ended already
            return []
        self._announced.add(id)
        self._writing[id] = None
        return [
            *self._close(),
            self._call_start(id, name),
        ]

    def _call_start(self, id: str, name: str) -> ToolCallStartEvent:
        self._ids.call(id, self._answer)
        return ToolCallStartEvent(
            tool_call_id=id, tool_call_name=name, parent_message_id=self._answer
        )

    def _end_writing(self) -> list[BaseEvent]:
        """The END of each call whose arguments were streaming: the model's answer is done."""
        ended: list[BaseEvent] = [ToolCallEndEvent(tool_call_id=id) for id in self._writing]
        self._writing.clear()
        return ended

    def _announce(self, id: str, name: str, input: JsonValue) -> list[BaseEvent]:
        """A call's START / ARGS / END, once per call; a tool call closes the text before it."""
        if id in self._announced:
            # Streamed already; a call still writing (an answer ending without
            # ModelCallDone, as a failed one may) is ended before it runs.
            return self._end_writing() if id in self._writing else []
        self._announced.add(id)
        arguments = json.dumps({} if input is None else input, ensure_ascii=False)
        return [
            *self._close(),
            self._call_start(id, name),
            ToolCallArgsEvent(tool_call_id=id, delta=arguments),
            ToolCallEndEvent(tool_call_id=id),
        ]


def _hosted_call(call: HostedToolCall) -> CustomEvent:
    return CustomEvent(name=HOSTED_CALL_EVENT, value={"name": call.name, "input": call.input})


def _state_events(data: dict[str, JsonValue]) -> list[BaseEvent]:
    """The STATE_SNAPSHOT or STATE_DELTA a tool sent with `send_state` or `send_state_delta`."""
    if SNAPSHOT_KEY in data:
        return [StateSnapshotEvent(snapshot=data[SNAPSHOT_KEY])]
    if DELTA_KEY in data:
        try:
            return [StateDeltaEvent.model_validate({"delta": data[DELTA_KEY]})]
        except ValidationError:
            # `send_state_delta` checks a patch where the tool runs; this is a report
            # shaped by hand, and the client must not get what it cannot apply.
            _logger.warning("a tool's state delta is not a JSON Patch; not sent to the client")
    return []


def _new_id() -> str:
    return str(uuid.uuid4())


def error_code(exc: BaseException) -> str:
    """The class name of the error at the root of `exc`'s causes (an orchestrator wraps it)."""
    current = exc
    for _ in range(8):  # a chain is short; a cycle must not hang the server
        if isinstance(current, BaseExceptionGroup) and current.exceptions:
            current = current.exceptions[0]
        elif current.__cause__ is not None:
            current = current.__cause__
        else:
            break
    return type(current).__name__
