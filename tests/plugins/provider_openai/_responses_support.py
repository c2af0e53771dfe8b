"""Shared builders for the Responses API provider tests: bodies, SSE streams, mocked providers."""

from __future__ import annotations

import json
from typing import Any

import httpx

from neuron_provider_openai import OpenAIResponsesProvider

from ._support import KEY, Recorder, json_response

MODEL = "gpt-5-mini"
ANSWERED = "gpt-5-mini-2025-08-07"


def usage(input_tokens: int = 20, output_tokens: int = 10, cached: int = 0, reasoning: int = 0):
    """A `usage` object as the API reports it."""
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": input_tokens + output_tokens,
    }


def message(text: str, *, kind: str = "output_text", item_id: str = "msg_1") -> dict[str, Any]:
    """An assistant `message` output item with one content part."""
    field = "refusal" if kind == "refusal" else "text"
    part: dict[str, Any] = {"type": kind, field: text}
    if kind == "output_text":
        part["annotations"] = []
    return {
        "id": item_id,
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": [part],
    }


def function_call(call_id: str, name: str, arguments: str, item_id: str = "fc_1") -> dict[str, Any]:
    """A `function_call` output item."""
    return {
        "id": item_id,
        "type": "function_call",
        "status": "completed",
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
    }


def reasoning(summary: str = "", encrypted: str | None = "gAAAAB-enc", item_id: str = "rs_1"):
    """A `reasoning` output item (with its encrypted content unless `encrypted` is None)."""
    item: dict[str, Any] = {"id": item_id, "type": "reasoning", "summary": []}
    if summary:
        item["summary"] = [{"type": "summary_text", "text": summary}]
    if encrypted is not None:
        item["encrypted_content"] = encrypted
    return item


def response(*output: dict[str, Any], status: str = "completed", **fields: Any) -> dict[str, Any]:
    """A Responses API response object shaped like openai-python's `Response`."""
    body: dict[str, Any] = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1763802312,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "model": ANSWERED,
        "output": list(output) if output else [message("Hello!")],
        "parallel_tool_calls": True,
        "store": False,
        "usage": usage(),
    }
    body.update(fields)
    return body


def sse(*events: dict[str, Any]) -> httpx.Response:
    """A streamed answer: each event as `event:` and `data:` lines, numbered in order."""
    lines = []
    for number, event in enumerate(events):
        event = {**event, "sequence_number": number}
        lines.append(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n")
    return httpx.Response(
        200, content="".join(lines).encode(), headers={"content-type": "text/event-stream"}
    )


def mocked(*answers: httpx.Response, **options: Any) -> tuple[OpenAIResponsesProvider, Recorder]:
    """A provider whose injected client answers from `answers` (default: one text reply)."""
    recorder = Recorder(*(answers or (json_response(response()),)))
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    options.setdefault("api_key", KEY)
    return OpenAIResponsesProvider(MODEL, client=client, **options), recorder
