"""Reading a streamed Responses API answer (server-sent events), event by event.

`ResponseEventReader` turns each `data:` line into the deltas it carries
(text, refusal and reasoning text, function calls as `ToolCallStart` then
`ToolCallDelta`s, a remote MCP server's approval request as the call the turn
pauses on, whole when its item is done) and keeps the final response object of the terminal
event (`response.completed` or `response.incomplete`), which
`_responses_wire.parse_response` reads as it reads a non-streamed body.
`response.failed` and `error` events raise `StreamError`.

Function calls are told apart by `output_index`: the delta events name the
item (`item_id`), not the call, so the `call_id` comes from the
`response.output_item.added` event that opened the item.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from pydantic import JsonValue

from neuron_turn.loop.events import (
    ProviderDelta,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallStart,
)
from neuron_turn.loop.provider_stream import call_deltas

from ._errors import ApiError, api_error_from_json
from ._responses_wire import (
    RESPONSE_ID,
    MalformedResponseError,
    new_call_id,
    parse_approval_request,
)
from ._stream import MalformedStreamError, StreamError
from ._wire import Completion

_DATA: Final = "data:"
_NONE: Final[tuple[ProviderDelta, ...]] = ()
_TEXT_DELTAS: Final = frozenset(
    {
        "response.output_text.delta",
        "response.refusal.delta",
    }
)
_THINKING_DELTAS: Final = frozenset(
    {
        "response.reasoning_summary_text.delta",
        "response.reasoning_text.delta",
    }
)
_TERMINAL: Final = frozenset({"response.completed", "response.incomplete"})
_OPENING: Final = frozenset({"response.created", "response.queued", "response.in_progress"})


@dataclass(slots=True)
class _Call:
    # Its arguments are not kept: the answer's calls come whole in `response.completed`.
    call_id: str
    name: str


@dataclass(slots=True)
class ResponseEventReader:
    """Folds Responses API stream events, line by line, into the final response object."""

    events: int = 0
    """How many events were read (0 at the end: the body was not a stream at all)."""
    response: dict[str, JsonValue] | None = None
    """The response object of the terminal event, once it came."""
    model: str = ""
    calls: dict[int, _Call] = field(default_factory=dict)
    items: dict[int, JsonValue] = field(default_factory=dict)
    """Finished output items by `output_index` (`response.output_item.done`)."""
    response_id: str = ""
    """The response's id, from the event that opened it (empty: none came, or not a usable one)."""
    background: bool = False
    """Whether the response runs in the background, so its stream can be taken up again."""
    last_sequence: int | None = None
    """The `sequence_number` of the last event read: where a resumed stream starts after."""
    skip_through: int | None = None
    """Events numbered up to this one were read already: a resumed stream repeating them is
    not read twice (set when the stream is resumed)."""
    polled: Completion | None = None
    """The answer polled for when the API refused to resume the dropped stream: it stands
    for the terminal event that never came, whole, as the events before it stop short."""

    @property
    def complete(self) -> bool:
        """Whether the stream reached its terminal event."""
        return self.response is not None

    def feed_line(self, line: str) -> Sequence[ProviderDelta]:
        """Take one line of the event stream; return the deltas it carries.

        `event:` lines, comments and blanks are skipped: each `data:` payload
        names its own `type`.

        Raises:
            StreamError: an `error` or `response.failed` event.
            MalformedStreamError: a `data:` line is not JSON.
        """
        if not line.startswith(_DATA):
            return _NONE
        payload = line[len(_DATA) :].strip()
        if payload == "[DONE]":  # not OpenAI's, but some compatible servers end so
            return _NONE
        try:
            event = json.loads(payload)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep
            raise MalformedStreamError(line) from exc
        return self.feed_event(event)

    def feed_event(self, event: object) -> Sequence[ProviderDelta]:
        """Take one decoded event; return the deltas it carries (unknown events: none)."""
        if not isinstance(event, dict):
            return _NONE
        sequence = event.get("sequence_number")
        if isinstance(sequence, int) and not isinstance(sequence, bool):
            if self.skip_through is not None and sequence <= self.skip_through:
                return _NONE  # handed on before the stream dropped
            self.last_sequence = sequence
        self.events += 1
        # Only a string is a kind: a list or object sent as one is no set member (TypeError).
        kind = event.get("type") if isinstance(event.get("type"), str) else None
        delta = event.get("delta")
        if kind in _TEXT_DELTAS and isinstance(delta, str) and delta:
            return (TextDelta(delta),)
        if kind in _THINKING_DELTAS and isinstance(delta, str) and delta:
            return (ThinkingDelta(delta),)
        if kind == "response.function_call_arguments.delta":
            return self._arguments(event.get("output_index"), delta)
        if kind == "response.output_item.added":
            return self._item_added(event.get("output_index"), event.get("item"))
        if kind == "response.output_item.done":
            return self._item_done(event.get("output_index"), event.get("item"))
        if kind in _OPENING:
            self._note_model(event.get("response"))
            self._note_id(event.get("response"))
        elif kind in _TERMINAL:
            self._finish(event.get("response"))
        elif kind == "response.failed":
            raise StreamError(_failure(event.get("response")))
        elif kind == "error":
            raise StreamError(_error_event(event))
        return _NONE

    def _item_added(self, index: object, item: object) -> Sequence[ProviderDelta]:
        if not isinstance(index, int) or not isinstance(item, dict):
            return _NONE
        if item.get("type") != "function_call" or index in self.calls:
            return _NONE
        call_id, name = item.get("call_id"), item.get("name")
        call = _Call(
            call_id if isinstance(call_id, str) and call_id else new_call_id(),
            name if isinstance(name, str) else "",
        )
        self.calls[index] = call
        return (ToolCallStart(call.call_id, call.name),)

    def _arguments(self, index: object, delta: object) -> Sequence[ProviderDelta]:
        call = self.calls.get(index) if isinstance(index, int) else None
        if call is None or not isinstance(delta, str) or not delta:
            return _NONE
        return (ToolCallDelta(call.call_id, delta),)

    def _item_done(self, index: object, item: object) -> Sequence[ProviderDelta]:
        """Keep the finished item; a call never announced is announced now, whole."""
        if not isinstance(index, int) or not isinstance(item, dict):
            return _NONE
        self.items[index] = item
        if item.get("type") == "mcp_approval_request":
            return _approval_request(item)
        if item.get("type") != "function_call" or index in self.calls:
            return _NONE
        started = self._item_added(index, item)
        arguments = item.get("arguments")
        if isinstance(arguments, str) and arguments:
            return (*started, *self._arguments(index, arguments))
        return started

    def _note_model(self, response: object) -> None:
        model = response.get("model") if isinstance(response, dict) else None
        if isinstance(model, str) and model:
            self.model = model

    def _note_id(self, response: object) -> None:
        if not isinstance(response, dict):
            return
        response_id = response.get("id")
        if isinstance(response_id, str) and RESPONSE_ID.fullmatch(response_id):
            self.response_id = response_id
        if response.get("background") is True:
            self.background = True

    def _finish(self, response: object) -> None:
        self._note_model(response)
        self.response = dict(response) if isinstance(response, dict) else {}

    def body(self) -> dict[str, JsonValue]:
        """The response object the stream ended with, completed from the events before it.

        The terminal event carries the whole response; a compatible server
        that leaves its `output` empty gets the items of the
        `response.output_item.done` events instead. A call's `call_id` is the
        one its deltas carried, so a call the server sent without one keeps
        the id it was given here.
        """
        response = dict(self.response or {})
        output = response.get("output")
        if not isinstance(output, list) or not output:
            output = [item for _, item in sorted(self.items.items())]
        response["output"] = [self._with_call_id(index, item) for index, item in enumerate(output)]
        if self.model and not response.get("model"):
            response["model"] = self.model
        return response

    def _with_call_id(self, index: int, item: JsonValue) -> JsonValue:
        call = self.calls.get(index)
        if call is None or not isinstance(item, dict) or item.get("type") != "function_call":
            return item
        if isinstance(item.get("call_id"), str) and item["call_id"]:
            return item
        return {**item, "call_id": call.call_id}


def _approval_request(item: dict[str, JsonValue]) -> Sequence[ProviderDelta]:
    """A remote MCP server's approval request as the call it is, or none when malformed.

    Why none: the final response is read as a whole and refused there, naming
    what the request lacks; a stream shows only what the answer will hold.
    """
    try:
        call = parse_approval_request(item)
    except MalformedResponseError:
        return _NONE
    return tuple(call_deltas(call))


def _failure(response: object) -> ApiError:
    """The error of a `response.failed` event's response."""
    error = response.get("error") if isinstance(response, dict) else None
    return api_error_from_json({"error": error}) or ApiError("the response failed")


def _error_event(event: dict[str, object]) -> ApiError:
    """An `error` event: its fields at the top (openai-python's type) or under `error`."""
    if isinstance(event.get("error"), dict | str):
        return api_error_from_json(event) or ApiError("error in stream")
    message = event.get("message")
    fields = {"message": message if isinstance(message, str) else "error in stream"}
    return api_error_from_json({"error": {**fields, "code": event.get("code")}}) or ApiError(
        fields["message"]
    )
