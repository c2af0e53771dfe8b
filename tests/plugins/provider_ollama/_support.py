"""Shared builders for the Ollama provider tests: mock transports and requests."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from neuron_provider_ollama import OllamaProvider
from neuron_turn import ProviderMessage, ProviderRequest, TextPart

Handler = Callable[[httpx.Request], httpx.Response]


def chat_body(
    content: str = "Hi!",
    *,
    model: str = "llama3.2",
    created_at: str = "2026-11-20T10:00:00.000001Z",
    done_reason: str | None = "stop",
    tool_calls: list[dict[str, Any]] | None = None,
    thinking: str | None = None,
    prompt_eval_count: int | None = 12,
    eval_count: int | None = 5,
) -> dict[str, Any]:
    """Return a non-streaming /api/chat answer shaped like Ollama's."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    if thinking is not None:
        message["thinking"] = thinking
    body: dict[str, Any] = {
        "model": model,
        "created_at": created_at,
        "message": message,
        "done": True,
        "total_duration": 1_000_000,
    }
    if done_reason is not None:
        body["done_reason"] = done_reason
    if prompt_eval_count is not None:
        body["prompt_eval_count"] = prompt_eval_count
    if eval_count is not None:
        body["eval_count"] = eval_count
    return body


def answering(body: dict[str, Any], seen: list[httpx.Request] | None = None) -> Handler:
    """Return a handler answering every call with `body`, recording requests in `seen`."""

    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        return httpx.Response(200, json=body)

    return handler


def provider_with(handler: Handler, **options: Any) -> OllamaProvider:
    """Return a provider whose client goes to `handler` instead of the network."""
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    options.setdefault("base_url", "http://localhost:11434")
    return OllamaProvider("llama3.2", client=client, **options)


def user_request(text: str = "Hello", **fields: Any) -> ProviderRequest:
    """Return a one-message request for llama3.2."""
    return ProviderRequest(
        model=fields.pop("model", "llama3.2"),
        messages=[ProviderMessage("user", [TextPart(text)])],
        **fields,
    )


def sent_json(request: httpx.Request) -> Any:
    """Return the JSON body of a captured request."""
    return json.loads(request.content)
