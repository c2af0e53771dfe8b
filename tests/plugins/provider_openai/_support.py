"""Shared builders for the OpenAI provider tests: requests, completion bodies, mocked providers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

import neuron_tool.strict as strict_module
from neuron_provider_openai import OpenAIProvider, OpenAIResponsesProvider
from neuron_provider_openai.preset_providers import preset_provider_class
from neuron_turn.loop.provider import ProviderMessage, ProviderRequest

from .._http_provider_support import Recorder, json_response, user

KEY = "sk-test-0123456789abcdefSECRET"
"""A fake key; tests assert it never leaks."""


def request(*messages: ProviderMessage, **fields: Any) -> ProviderRequest:
    fields.setdefault("model", "gpt-4o-mini")
    return ProviderRequest(messages=list(messages) or [user("Hi")], **fields)


def completion(
    content: str | None = "Hello!",
    *,
    finish_reason: str | None = "stop",
    tool_calls: list[dict[str, Any]] | None = None,
    model: str = "gpt-4o-mini-2024-07-18",
    usage: dict[str, Any] | None = None,
    **message_fields: Any,
) -> dict[str, Any]:
    """A Chat Completions body shaped like the recorded ones."""
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    message.update(message_fields)
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1763802312,
        "model": model,
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
        ],
        "usage": usage
        if usage is not None
        else {
            "prompt_tokens": 24,
            "completion_tokens": 8,
            "total_tokens": 32,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        },
    }


def tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def mocked(
    *responses: httpx.Response | Callable[[httpx.Request], httpx.Response], **options: Any
) -> tuple[OpenAIProvider, Recorder]:
    """A provider whose injected client answers from `responses` (default: one text reply)."""
    recorder = Recorder(*(responses or (json_response(completion()),)))
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    options.setdefault("api_key", KEY)
    return OpenAIProvider("gpt-4o-mini", client=client, **options), recorder


def provider_class(name: str) -> type[Any]:
    """The provider class called `name`: `openai`, `openai-responses` or a preset's."""
    if name == "openai":
        return OpenAIProvider
    if name == "openai-responses":
        return OpenAIResponsesProvider
    return preset_provider_class(name)


def named_provider(name: str, *responses: httpx.Response, **options: Any) -> tuple[Any, Recorder]:
    """The provider called `name` for model `m`, its client answering from `responses`."""
    recorder = Recorder(*(responses or (json_response(completion()),)))
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    return provider_class(name)("m", api_key=KEY, client=client, **options), recorder


def strict_forms_written(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the tools whose strict form is written from now on, once per writing."""
    written: list[str] = []
    real = strict_module._Converter.form

    def counted(self: Any) -> Any:
        written.append(self.tool)
        return real(self)

    monkeypatch.setattr(strict_module._Converter, "form", counted)
    return written
