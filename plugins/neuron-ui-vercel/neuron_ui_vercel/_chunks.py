"""From a neuron turn's events and output to the AI SDK's UI message chunks.

One `ChatChunks` follows one response: each model call is a step
(`start-step` / `finish-step`, the step closed when the next begins or the
response ends, so that the tools the call asked for are in it); its text and
thinking stream as `text-*` and `reasoning-*` parts; each tool call is
`tool-input-start` and `tool-input-delta`s as the model writes it,
`tool-input-available` with its parsed input when it runs or waits, then,
for the server's own tools, `tool-output-available` (a JSON object or array
as such, other results as text) or `tool-output-error`.
A typed answer is the `data-output` part (updated in place as it grows); each
call the provider ran itself (a hosted tool: a web search, code execution) a
`data-hosted-tool-call` part when the model's answer is done; each image the
model made (`ImageGeneration`) a `file` part (its bytes as a `data:` URL), in
its place after the text before it. The
response ends with `finish` (and its `finishReason`), after an `error` chunk
when the turn failed or stopped short, never with a traceback.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Final

from pydantic import JsonValue

from layer0 import Base64Source, ImageSource, TurnOutput
from neuron_tool.serving import error_text
from neuron_turn import (
    AWAITING_APPROVAL,
    Decision,
    HostedToolCall,
    ImagePart,
    ModelCallDone,
    ModelCallStart,
    OutputDelta,
    PendingCall,
    ProviderResponse,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallStart,
    ToolResult,
    ToolStart,
    answer_images,
    answer_text,
    pending_approvals,
    stopped_reason,
    typed_result,
    well_formed,
)

Chunk = dict[str, JsonValue]

OUTPUT_PART: Final = "data-output"
"""The type of the data part holding the turn's typed answer (an agent with an output type)."""
HOSTED_CALL_PART: Final = "data-hosted-tool-call"
"""The type of the data part saying what the provider ran for the model: a web search's
query, a page fetched, code run (`{"name": "web_search", "input": {...}}`)."""


class ChatChunks:
    """The UI message chunks of one response, made as the turn's events and its end arrive."""

    def __init__(self, resumed: Sequence[Decision] = ()) -> None:
        """Follow a response resuming the calls `resumed` decides (none: a new message).

        The client has the resumed calls' parts from the response that paused on
        them, and the outputs of those it answered itself: neither is sent again.
        """
        self._step = False
        self._text: str | None = None
        self._reasoning: str | None = None
        self._writing: dict[str, None] = {}  # calls whose input is streaming
        self._started: set[str] = set()  # calls with a tool-input-start
        self._announced = {d.id for d in resumed}  # calls with their input available
        self._resumed = {d.id: d for d in resumed}
        self._output_id = f"output-{uuid.uuid4()}"
        self._streamed_text = False
        self._answers_seen = False  # a model call's answer came with its event

    def on(self, event: object) -> list[Chunk]:
        """The chunks of one of the turn's events (none for most)."""
        if isinstance(event, ModelCallStart):
            chunks: list[Chunk] = [*self._close(), *self._end_step(), {"type": "start-step"}]
            self._step = True
            return chunks
        if isinstance(event, TextDelta) and event.text:
            return self._text_delta(event.text)
        if isinstance(event, ThinkingDelta) and event.text:
            return self._reasoning_delta(event.text)
        if isinstance(event, ToolCallStart):
            return self._start_writing(event.id, event.name)
        if isinstance(event, ToolCallDelta) and event.id in self._writing and event.arguments:
            return [
                {
                    "type": "tool-input-delta",
                    "toolCallId": event.id,
                    "inputTextDelta": event.arguments,
                }
            ]
        if isinstance(event, ModelCallDone):
            self._writing.clear()  # whole now; available when the call runs or waits
            files: list[Chunk] = []
            if event.response is not None:
                self._answers_seen = True
                files = [_file(part.source, part.media_type) for part in _images(event.response)]
            return [*self._close(), *files, *map(_hosted_call, event.hosted_calls)]
        if isinstance(event, OutputDelta):
            return [self._output(event.data)]
        if isinstance(event, ToolStart):
            return self._announce(event.id, event.name, event.input)
        if isinstance(event, ToolResult):
            return self._result(event)
        return []

    def finished(self, output: TurnOutput) -> list[Chunk]:
        """The response's last chunks, for the turn's `output`."""
        chunks = self._close()
        if not self._streamed_text:
            # An orchestrator that does not stream: the answer comes whole.
            text = answer_text(output)
            if text:
                chunks += [*self._text_delta(text), *self._close()]
        if not self._answers_seen:
            # Nor the model's answers (events over a wire carry none): its images, whole.
            chunks += [_file(block.source, block.media_type) for block in answer_images(output)]
        reason = output.exit_reason
        if reason == "complete":
            result = typed_result(output)
            if result is not None:
                chunks.append(self._output(result))
            return [*chunks, *self._end_step(), _finish("stop")]
        pending = pending_approvals(output) if reason == AWAITING_APPROVAL else []
        if pending:
            return [*chunks, *self._paused(pending), *self._end_step(), _finish("tool-calls")]
        kind, words = stopped_reason(output)
        error: Chunk = {"type": "error", "errorText": f"{kind}: {words}"}
        return [*chunks, error, *self._end_step(), _finish("error")]

    def failed(self, exc: BaseException) -> list[Chunk]:
        """The response's last chunks when the dispatch raised `exc`: an `error` saying why."""
        error: Chunk = {"type": "error", "errorText": error_text(exc)}
        return [*self._close(), error, *self._end_step(), _finish("error")]

    def _paused(self, pending: Sequence[PendingCall]) -> list[Chunk]:
        """Each waiting call's input; an approval request for those held for a person."""
        chunks: list[Chunk] = []
        for call in pending:
            chunks += self._announce(call.id, call.name, call.input)
            if not call.external:
                chunks.append(
                    {"type": "tool-approval-request", "approvalId": call.id, "toolCallId": call.id}
                )
        return chunks

    def _result(self, event: ToolResult) -> list[Chunk]:
        decided = self._resumed.get(event.id)
        if decided is not None and decided.decision == "answer":
            return []  # the client's own output
        if decided is not None and decided.decision == "deny":
            return [{"type": "tool-output-denied", "toolCallId": event.id}]
        chunks = self._announce(event.id, event.name, None)
        if event.is_error:
            chunks.append(
                {"type": "tool-output-error", "toolCallId": event.id, "errorText": event.content}
            )
        else:
            output = _structured(event.content)
            chunks.append(
                {"type": "tool-output-available", "toolCallId": event.id, "output": output}
            )
        return chunks

    def _output(self, value: JsonValue) -> Chunk:
        return {"type": OUTPUT_PART, "id": self._output_id, "data": value}

    def _text_delta(self, text: str) -> list[Chunk]:
        self._streamed_text = True
        chunks = self._close_reasoning()
        if self._text is None:
            self._text = _new_id()
            chunks.append({"type": "text-start", "id": self._text})
        chunks.append({"type": "text-delta", "id": self._text, "delta": text})
        return chunks

    def _reasoning_delta(self, text: str) -> list[Chunk]:
        chunks = self._close_text()
        if self._reasoning is None:
            self._reasoning = _new_id()
            chunks.append({"type": "reasoning-start", "id": self._reasoning})
        chunks.append({"type": "reasoning-delta", "id": self._reasoning, "delta": text})
        return chunks

    def _close_text(self) -> list[Chunk]:
        if self._text is None:
            return []
        closed, self._text = self._text, None
        return [{"type": "text-end", "id": closed}]

    def _close_reasoning(self) -> list[Chunk]:
        if self._reasoning is None:
            return []
        closed, self._reasoning = self._reasoning, None
        return [{"type": "reasoning-end", "id": closed}]

    def _close(self) -> list[Chunk]:
        return [*self._close_reasoning(), *self._close_text()]

    def _end_step(self) -> list[Chunk]:
        if not self._step:
            return []
        self._step = False
        return [{"type": "finish-step"}]

    def _start_writing(self, id: str, name: str) -> list[Chunk]:
        """A call the model began writing: its input to follow as it comes."""
        if id in self._writing:
            # The model repeated an id: the first call is whole. The loop gives the
            # second a fresh id, under which it is announced when it runs or waits.
            del self._writing[id]
            return []
        if id in self._started or id in self._announced:
            return []
        self._started.add(id)
        self._writing[id] = None
        return [*self._close(), {"type": "tool-input-start", "toolCallId": id, "toolName": name}]

    def _announce(self, id: str, name: str, input: JsonValue) -> list[Chunk]:
        """A call's `tool-input-available`, once per call; a tool call closes the text before it."""
        if id in self._announced:
            return []
        self._announced.add(id)
        self._writing.pop(id, None)
        return [
            *self._close(),
            {
                "type": "tool-input-available",
                "toolCallId": id,
                "toolName": name,
                "input": {} if input is None else input,
            },
        ]


def _structured(content: str) -> JsonValue:
    """A tool's result as the client's tool part holds it: a JSON object or array as such.

    Why: a frontend renders a tool's output (`part.output.temperature`); the
    turn carries results as text, a value as its JSON. Other text stays text.
    """
    if content[:1] in ("{", "["):
        try:
            value: JsonValue = json.loads(content)
        except (ValueError, RecursionError):  # not JSON, or nested past what Python parses
            return content
        return value
    return content


def _images(response: ProviderResponse) -> list[ImagePart]:
    """The images of a model's answer (`ImageGeneration`), in order."""
    return [part for part in response.content if isinstance(part, ImagePart)]


def _file(source: ImageSource, media_type: str) -> Chunk:
    """An image the model made as the AI SDK's `file` part: its bytes as a `data:` URL."""
    if isinstance(source, Base64Source):
        url = f"data:{media_type};base64,{source.data}"
        return {"type": "file", "mediaType": media_type, "url": url}
    return {"type": "file", "mediaType": media_type, "url": source.url}


def _hosted_call(call: HostedToolCall) -> Chunk:
    return {"type": HOSTED_CALL_PART, "data": {"name": call.name, "input": call.input}}


def _finish(reason: str) -> Chunk:
    return {"type": "finish", "finishReason": reason}


def _new_id() -> str:
    return str(uuid.uuid4())


def dumps(chunk: Chunk) -> bytes:
    """One chunk as a server-sent event.

    Text UTF-8 cannot carry (a lone surrogate, from an orchestrator whose events
    no NeuronTurn cleaned) is replaced, never left to end the stream unfinished.
    """
    text = json.dumps(chunk, ensure_ascii=False)
    try:
        encoded = text.encode()
    except UnicodeEncodeError:
        encoded = well_formed(text).encode()
    return b"data: " + encoded + b"\n\n"
