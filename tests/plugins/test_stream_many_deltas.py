"""A stream of very many small deltas is read in time linear in its size.

Before, the stream readers of OpenAI (Chat Completions and Responses),
Anthropic and Gemini grew a text or a call's arguments by `+=` on a string
kept in an object or dict, which copies it whole each time: a server sending
400,000 ten-character deltas (4 MB of text, well within the size limit)
took minutes to read, the event loop held throughout. The bound below is
twenty times what the readers now take, and a fraction of what they took.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from neuron_provider_anthropic._stream import MessageStream
from neuron_provider_google._stream import ChunkReader
from neuron_provider_openai._responses_stream import ResponseEventReader
from neuron_provider_openai._stream import StreamAccumulator

_DELTAS = 400_000
_PIECE = "abcdefghij"
_BOUND_SECONDS = 10.0


def _openai_text() -> object:
    reader = StreamAccumulator()
    chunk = {"choices": [{"index": 0, "delta": {"content": _PIECE}}]}
    for _ in range(_DELTAS):
        reader.feed_chunk(chunk)
    return reader.body()["choices"][0]["message"]["content"]  # type: ignore[index,call-overload]


def _openai_arguments() -> object:
    reader = StreamAccumulator()
    start = {"index": 0, "id": "c1", "function": {"name": "f", "arguments": ""}}
    reader.feed_chunk({"choices": [{"index": 0, "delta": {"tool_calls": [start]}}]})
    piece = {"index": 0, "function": {"arguments": _PIECE}}
    chunk = {"choices": [{"index": 0, "delta": {"tool_calls": [piece]}}]}
    for _ in range(_DELTAS):
        reader.feed_chunk(chunk)
    message = reader.body()["choices"][0]["message"]  # type: ignore[index,call-overload]
    return message["tool_calls"][0]["function"]["arguments"]  # type: ignore[index,call-overload]


def _anthropic(kind: str, field: str, block: dict[str, object]) -> Callable[[], object]:
    def read() -> object:
        reader = MessageStream()
        message = {"id": "m", "type": "message", "role": "assistant", "model": "c", "content": []}
        reader.feed({"type": "message_start", "message": message})
        reader.feed({"type": "content_block_start", "index": 0, "content_block": block})
        delta = {"type": "content_block_delta", "index": 0, "delta": {"type": kind, field: _PIECE}}
        for _ in range(_DELTAS):
            reader.feed(delta)  # type: ignore[arg-type]
        reader.feed({"type": "message_stop"})
        content = reader.result()["content"]
        return content[0][field]  # type: ignore[index,call-overload]

    return read


def _anthropic_arguments() -> object:
    reader = MessageStream()
    message = {"id": "m", "type": "message", "role": "assistant", "model": "c", "content": []}
    reader.feed({"type": "message_start", "message": message})
    block = {"type": "tool_use", "id": "t1", "name": "f", "input": {}}
    reader.feed({"type": "content_block_start", "index": 0, "content_block": block})
    delta = {"type": "input_json_delta", "partial_json": _PIECE}
    event = {"type": "content_block_delta", "index": 0, "delta": delta}
    reader.feed({**event, "delta": {**delta, "partial_json": '"'}})
    for _ in range(_DELTAS):
        reader.feed(event)  # type: ignore[arg-type]
    reader.feed({**event, "delta": {**delta, "partial_json": '"'}})
    reader.feed({"type": "content_block_stop", "index": 0})
    reader.feed({"type": "message_stop"})
    return reader.result()["content"][0]["input"]  # type: ignore[index,call-overload]


def _gemini_text() -> object:
    reader = ChunkReader(fallback_salt="s")
    chunk = {"candidates": [{"content": {"parts": [{"text": _PIECE}]}}]}
    for _ in range(_DELTAS):
        reader.feed_chunk(chunk)
    return reader.body()["candidates"][0]["content"]["parts"][0]["text"]  # type: ignore[index,call-overload]


def _responses_arguments() -> object:
    reader = ResponseEventReader()
    call = {"type": "function_call", "id": "fc", "call_id": "c", "name": "f", "arguments": ""}
    reader.feed_event({"type": "response.output_item.added", "output_index": 0, "item": call})
    delta = {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": _PIECE}
    for _ in range(_DELTAS):
        reader.feed_event(delta)
    return _PIECE * _DELTAS  # the answer's calls come whole in response.completed


_READERS: dict[str, tuple[Callable[[], object], object]] = {
    "openai text": (_openai_text, _PIECE * _DELTAS),
    "openai arguments": (_openai_arguments, _PIECE * _DELTAS),
    "responses arguments": (_responses_arguments, _PIECE * _DELTAS),
    "anthropic text": (
        _anthropic("text_delta", "text", {"type": "text", "text": ""}),
        _PIECE * _DELTAS,
    ),
    "anthropic thinking": (
        _anthropic("thinking_delta", "thinking", {"type": "thinking", "thinking": ""}),
        _PIECE * _DELTAS,
    ),
    "anthropic arguments": (_anthropic_arguments, _PIECE * _DELTAS),
    "gemini text": (_gemini_text, _PIECE * _DELTAS),
}


@pytest.mark.parametrize("name", sorted(_READERS))
def test_many_small_deltas_are_read_in_linear_time(name: str) -> None:
    read, expected = _READERS[name]
    started = time.perf_counter()
    assert read() == expected
    assert time.perf_counter() - started < _BOUND_SECONDS
