"""Shared builders for the Google provider tests: bodies, SSE streams, mocked providers."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from neuron_provider_google import GoogleProvider
from neuron_turn.loop.provider import ProviderMessage, ProviderRequest

from .._http_provider_support import Recorder, json_response, user

KEY = "AIzaSy-test-0123456789abcdefSECRET"
"""A fake key; tests assert it never leaks."""
MODEL = "gemini-2.5-flash"
URL = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"
STREAM_URL = (
    "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash"
    ":streamGenerateContent?alt=sse"
)


def request(*messages: ProviderMessage, **fields: Any) -> ProviderRequest:
    fields.setdefault("model", MODEL)
    return ProviderRequest(messages=list(messages) or [user("Hi")], **fields)


def usage(prompt: int = 20, candidates: int = 10, thoughts: int = 0, cached: int | None = None):
    """A `usageMetadata` object as the API reports it."""
    metadata: dict[str, Any] = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": candidates,
        "totalTokenCount": prompt + candidates + thoughts,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}],
    }
    if thoughts:
        metadata["thoughtsTokenCount"] = thoughts
    if cached is not None:
        metadata["cachedContentTokenCount"] = cached
    return metadata


def text(value: str, **fields: Any) -> dict[str, Any]:
    """A text part."""
    return {"text": value, **fields}


def call(name: str, args: Any, **fields: Any) -> dict[str, Any]:
    """A `functionCall` part (with `id=` when the call has one)."""
    call_id = fields.pop("id", None)
    function: dict[str, Any] = {"name": name, "args": args}
    if call_id is not None:
        function["id"] = call_id
    return {"functionCall": function, **fields}


def response(*parts: dict[str, Any], finish: str | None = "STOP", **fields: Any) -> dict[str, Any]:
    """A `GenerateContentResponse` with one candidate holding `parts`."""
    candidate: dict[str, Any] = {
        "content": {"parts": list(parts) if parts else [text("Hello!")], "role": "model"},
        "index": 0,
    }
    if finish is not None:
        candidate["finishReason"] = finish
    body: dict[str, Any] = {
        "candidates": [candidate],
        "usageMetadata": usage(),
        "modelVersion": "gemini-2.5-flash",
        "responseId": "resp-abc123",
    }
    body.update(fields)
    return body


def sse(*chunks: dict[str, Any]) -> httpx.Response:
    """A streamed answer: each chunk as one `data:` event, as `alt=sse` sends them."""
    body = "".join(f"data: {json.dumps(chunk)}\r\n\r\n" for chunk in chunks)
    return httpx.Response(200, content=body.encode(), headers={"content-type": "text/event-stream"})


def mocked(
    *responses: httpx.Response | Callable[[httpx.Request], httpx.Response], **options: Any
) -> tuple[GoogleProvider, Recorder]:
    """A provider whose injected client answers from `responses` (default: one text reply)."""
    recorder = Recorder(*(responses or (json_response(response()),)))
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    options.setdefault("api_key", KEY)
    return GoogleProvider(MODEL, client=client, **options), recorder
