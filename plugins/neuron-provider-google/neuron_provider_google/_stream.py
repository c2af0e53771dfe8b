"""Reading a streamed Gemini answer (`:streamGenerateContent?alt=sse`), chunk by chunk.

Each server-sent event's data is a whole `GenerateContentResponse` holding
the next pieces of the answer. `ChunkReader` hands each piece on as a delta
(text, thought text, a function call whole: Gemini does not stream
arguments) and folds the pieces into one body, which `_answer.parse_response`
reads as it reads a non-streamed one, so `stream()` ends with the answer
`complete()` would give.

Folding: consecutive text pieces of the same kind (thought or not) join into
one part, unless either carries a `thoughtSignature`: a signature stays on
the part it came on, and a signature streamed alone (on an empty text piece)
stays a part of its own, as Google asks (never merge a signed part with
another). The last chunk's `finishReason` and `usageMetadata` are the answer's,
and so is its `groundingMetadata`, but with the search queries of every chunk
(`webSearchQueries`, each as many times as the chunk listing it most): one that
sent the queries early and the sources later loses none of the searches made
(recorded, and billed on Gemini 3).
An event holding `{"error": ...}` raises `StreamError`.
"""

from __future__ import annotations

import json
from collections import Counter
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
from neuron_turn.loop.sse import SSEDecoder

from ._errors import ApiError, api_error_from_json
from ._tool_ids import synthesised_call_id
from ._wire import SIGNATURE

_NONE: Final[tuple[ProviderDelta, ...]] = ()
_COMPACT: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_KEPT_FIELDS: Final = ("modelVersion", "responseId", "promptFeedback", "usageMetadata")
_KEPT_CANDIDATE_FIELDS: Final = ("groundingMetadata", "urlContextMetadata")
"""What the hosted tools did (searches, fetched addresses): the last chunk's, as sent."""


class StreamError(Exception):
    """The stream carried an error event; `api_error` is what it said."""

    def __init__(self, api_error: ApiError) -> None:
        super().__init__(api_error.message)
        self.api_error = api_error


class MalformedStreamError(ValueError):
    """An event's data is not JSON; `data` is the text that was not."""

    def __init__(self, data: str) -> None:
        super().__init__("the stream's event data is not JSON")
        self.data = data


@dataclass(slots=True)
class ChunkReader:
    """Folds Gemini stream chunks, line by line, into one `GenerateContentResponse` body."""

    fallback_salt: str
    """Salts the ids of calls sent without one when the chunks carry no `responseId`."""
    events: int = 0
    """How many chunks were read (0 at the end: the body was not a stream at all)."""
    finish_reason: str | None = None
    finish_message: JsonValue = None
    parts: list[dict[str, JsonValue]] = field(default_factory=list)
    fields: dict[str, JsonValue] = field(default_factory=dict)
    candidate_fields: dict[str, JsonValue] = field(default_factory=dict)
    search_queries: list[str] = field(default_factory=list)
    """Every chunk's `groundingMetadata.webSearchQueries` strings, folded (see the module)."""
    calls: int = 0
    decoder: SSEDecoder = field(default_factory=SSEDecoder)
    tail: list[str] = field(default_factory=list)
    """Text pieces that follow the last part's text, joined into it once it is read.

    Kept apart because `+=` on a string held in a dict copies it whole each
    time: 100,000 small text chunks took minutes (quadratic)."""

    @property
    def complete(self) -> bool:
        """Whether a chunk said why the answer ended (the last chunk carries `finishReason`)."""
        return self.finish_reason is not None or "promptFeedback" in self.fields

    def feed_line(self, line: str) -> Sequence[ProviderDelta]:
        """Take one line of the event stream; return the deltas the event it completes carries.

        Raises:
            StreamError: an error event.
            MalformedStreamError: an event's data is not JSON.
        """
        event = self.decoder.feed(line)
        return _NONE if event is None else self.feed_data(event[1])

    def flush(self) -> Sequence[ProviderDelta]:
        """Read the event a stream ended without a blank line after (call at the end)."""
        event = self.decoder.flush()
        return _NONE if event is None else self.feed_data(event[1])

    def feed_data(self, data: str) -> Sequence[ProviderDelta]:
        """Take one event's data (a JSON chunk); return its deltas."""
        try:
            chunk = json.loads(data)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested past what Python reads
            raise MalformedStreamError(data) from exc
        return self.feed_chunk(chunk)

    def feed_chunk(self, chunk: object) -> Sequence[ProviderDelta]:
        """Take one decoded chunk; return its deltas (anything malformed in it: none)."""
        if not isinstance(chunk, dict):
            return _NONE
        api_error = api_error_from_json(chunk)
        if api_error is not None:
            raise StreamError(api_error)
        self.events += 1
        for key in _KEPT_FIELDS:
            if key in chunk:
                self.fields[key] = chunk[key]
        candidates = chunk.get("candidates")
        candidate = candidates[0] if isinstance(candidates, list) and candidates else None
        if not isinstance(candidate, dict):
            return _NONE
        for key in _KEPT_CANDIDATE_FIELDS:
            if key in candidate:
                self.candidate_fields[key] = candidate[key]
        if "groundingMetadata" in candidate:
            self._fold_queries(candidate["groundingMetadata"])
        reason = candidate.get("finishReason")
        if isinstance(reason, str) and reason:
            self.finish_reason = reason
            self.finish_message = candidate.get("finishMessage")
        content = candidate.get("content")
        pieces = content.get("parts") if isinstance(content, dict) else None
        if not isinstance(pieces, list):
            return _NONE
        deltas: list[ProviderDelta] = []
        for piece in pieces:
            if isinstance(piece, dict):
                deltas.extend(self._piece(piece))
        return deltas

    def _piece(self, piece: dict[str, JsonValue]) -> Sequence[ProviderDelta]:
        call = piece.get("functionCall")
        if isinstance(call, dict):
            return self._call(piece, call)
        text = piece.get("text")
        if not isinstance(text, str):
            self._add_part(dict(piece))
            return _NONE
        thought = piece.get("thought") is True
        last = self.parts[-1] if self.parts else None
        if (
            last is not None
            and isinstance(last.get("text"), str)
            and (last.get("thought") is True) == thought
            and SIGNATURE not in last
            and SIGNATURE not in piece
            and "functionCall" not in last
        ):
            self.tail.append(text)
        else:
            self._add_part(dict(piece))
        if not text:
            return _NONE
        return (ThinkingDelta(text),) if thought else (TextDelta(text),)

    def _call(
        self, piece: dict[str, JsonValue], call: dict[str, JsonValue]
    ) -> Sequence[ProviderDelta]:
        """A call arrives whole: announced with its id, then its arguments in one delta.

        A call without an id gets the one `parse_response` would give it, so
        the deltas and the final answer name it alike.
        """
        name = call.get("name")
        name = name if isinstance(name, str) else ""
        args = call.get("args", {})
        call_id = call.get("id")
        if not isinstance(call_id, str) or not call_id:
            call_id = synthesised_call_id(
                salt=self._salt(), position=self.calls, name=name, args=args
            )
        self.calls += 1
        self._add_part({**piece, "functionCall": {**call, "id": call_id}})
        try:
            arguments = _COMPACT.encode(args)
        except (RecursionError, ValueError):
            arguments = ""
        started = ToolCallStart(call_id, name)
        return (started, ToolCallDelta(call_id, arguments)) if arguments else (started,)

    def _add_part(self, part: dict[str, JsonValue]) -> None:
        self._join_tail()
        self.parts.append(part)

    def _join_tail(self) -> None:
        if self.tail:
            self.parts[-1]["text"] = f"{self.parts[-1]['text']}{''.join(self.tail)}"
            self.tail.clear()

    def _fold_queries(self, grounding: JsonValue) -> None:
        """Add the queries `grounding` lists beyond those already kept (none when malformed)."""
        queries = grounding.get("webSearchQueries") if isinstance(grounding, dict) else None
        if not isinstance(queries, list):
            return
        listed = [query for query in queries if isinstance(query, str)]
        if listed == self.search_queries:  # each chunk repeating the whole list
            return
        kept = Counter(self.search_queries)
        for query in listed:
            if kept[query]:
                kept[query] -= 1
            else:
                self.search_queries.append(query)

    def _grounding(self) -> JsonValue:
        """The last chunk's `groundingMetadata`, with the queries of earlier chunks it lacks."""
        grounding = self.candidate_fields["groundingMetadata"]
        base = grounding if isinstance(grounding, dict) else {}
        queries = base.get("webSearchQueries")
        listed = queries if isinstance(queries, list) else []
        if sum(isinstance(query, str) for query in listed) == len(self.search_queries):
            return grounding  # it lists them all (what was kept holds its queries and more)
        return {**base, "webSearchQueries": list(self.search_queries)}

    def _salt(self) -> str:
        response_id = self.fields.get("responseId")
        return response_id if isinstance(response_id, str) and response_id else self.fallback_salt

    def body(self) -> dict[str, JsonValue]:
        """The `GenerateContentResponse` the chunks fold into."""
        self._join_tail()
        candidate: dict[str, JsonValue] = {
            "content": {"role": "model", "parts": list(self.parts)},
            **self.candidate_fields,
        }
        if self.search_queries:
            candidate["groundingMetadata"] = self._grounding()
        if self.finish_reason is not None:
            candidate["finishReason"] = self.finish_reason
        if self.finish_message is not None:
            candidate["finishMessage"] = self.finish_message
        body: dict[str, JsonValue] = dict(self.fields)
        if self.parts or self.finish_reason is not None:
            body["candidates"] = [candidate]
        return body
