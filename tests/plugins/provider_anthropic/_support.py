"""Shared builders for the Anthropic provider tests: fake keys, messages, mock transports."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from neuron_provider_anthropic import AnthropicProvider
from neuron_turn.loop.provider import ContentPart, ProviderMessage, ProviderRequest, TextPart

API_KEY = "sk-ant-api03-TEST-0123456789abcdefghijklmnop-not-a-real-key"
"""A fake key shaped like a real one, so leaks are easy to search for."""

MODEL = "claude-haiku-4-5"
ANSWERED = "claude-haiku-4-5-20251001"


def usage_json(input_tokens: int = 10, output_tokens: int = 5, **extra: Any) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
        **extra,
    }


def message_json(
    content: Sequence[dict[str, Any]] = ({"type": "text", "text": "Hello."},),
    *,
    stop_reason: str | None = "end_turn",
    model: str = ANSWERED,
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "id": "msg_01TEST",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": list(content),
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage or usage_json(),
    }


def user(*parts: ContentPart | str) -> ProviderMessage:
    return ProviderMessage("user", [TextPart(p) if isinstance(p, str) else p for p in parts])


def assistant(*parts: ContentPart | str) -> ProviderMessage:
    return ProviderMessage("assistant", [TextPart(p) if isinstance(p, str) else p for p in parts])


def request(*messages: ProviderMessage, **fields: Any) -> ProviderRequest:
    return ProviderRequest(
        model=fields.pop("model", MODEL), messages=messages or [user("Hi")], **fields
    )


Reply = Callable[[httpx.Request], httpx.Response]


class FakeApi:
    """A MockTransport handler that records requests and answers from a queue.

    The last reply repeats once the queue is down to it.
    """

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies) or [reply()]
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        return answer(request)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]

    def provider(self, **options: Any) -> AnthropicProvider:
        options.setdefault("api_key", API_KEY)
        client = httpx.AsyncClient(transport=httpx.MockTransport(self))
        return AnthropicProvider(options.pop("model", MODEL), client=client, **options)


def reply(body: Any = None, *, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    """Answer with `body` (JSON, or raw text/bytes), building a fresh response per request."""

    def answer(request: httpx.Request) -> httpx.Response:
        if isinstance(body, str | bytes):
            return httpx.Response(status, content=body, headers=headers)
        return httpx.Response(
            status, json=message_json() if body is None else body, headers=headers
        )

    return answer


def raising(exc: Exception) -> Reply:
    """Fail the request with `exc`, as a transport would."""

    def answer(request: httpx.Request) -> httpx.Response:
        raise exc

    return answer


def error_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_TEST"}
