from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from neuron_turn import (
    ModelNotFoundError,
    ProviderConnectionError,
    ProviderResponseError,
    ProviderServerError,
    TextPart,
    ThinkingPart,
    TokenUsage,
    ToolUsePart,
)

from ._support import provider_with, sent_json, user_request


def ndjson(*lines: dict[str, Any] | str) -> bytes:
    return b"".join(
        (line if isinstance(line, str) else json.dumps(line)).encode() + b"\n" for line in lines
    )


def chunk(
    content: str = "",
    *,
    thinking: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if thinking is not None:
        message["thinking"] = thinking
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return {"model": "llama3.2", "created_at": "2026-11-20T10:00:00Z", "message": message, **fields}


FINAL: dict[str, Any] = {
    "done": True,
    "done_reason": "stop",
    "prompt_eval_count": 17,
    "eval_count": 4,
}


def streaming(body: bytes, seen: list[httpx.Request] | None = None, status: int = 200) -> Any:
    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        return httpx.Response(
            status, content=body, headers={"content-type": "application/x-ndjson"}
        )

    return handler


async def test_stream_option_asks_for_ndjson_and_folds_it_into_one_response() -> None:
    seen: list[httpx.Request] = []
    body = ndjson(
        chunk(thinking="Greet."),
        chunk("Hel", done=False),
        chunk("lo", done=False),
        "",
        chunk("!", done=False),
        chunk("", **FINAL),
    )
    provider = provider_with(streaming(body, seen), stream=True)
    response = await provider.complete(user_request())
    assert sent_json(seen[0])["stream"] is True
    assert list(response.content) == [ThinkingPart("Greet."), TextPart("Hello!")]
    assert response.stop_reason == "end_turn"
    assert response.usage == TokenUsage(17, 4)
    assert response.model == "llama3.2"


async def test_streamed_tool_calls_are_collected() -> None:
    call = {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    body = ndjson(chunk("", tool_calls=[call], done=False), chunk("", **FINAL))
    response = await provider_with(streaming(body), stream=True).complete(user_request())
    [part] = response.content
    assert isinstance(part, ToolUsePart)
    assert part.input == {"city": "Paris"}
    assert response.stop_reason == "tool_use"


async def test_extra_stream_turns_streaming_on_for_one_call() -> None:
    seen: list[httpx.Request] = []
    body = ndjson(chunk("ok", **FINAL))
    provider = provider_with(streaming(body, seen))
    response = await provider.complete(user_request(extra={"stream": True}))
    assert sent_json(seen[0])["stream"] is True
    assert list(response.content) == [TextPart("ok")]


async def test_error_line_mid_stream_is_a_retryable_server_error() -> None:
    body = ndjson(chunk("Hel", done=False), {"error": "llama runner process has terminated"})
    with pytest.raises(ProviderServerError, match="llama runner process has terminated"):
        await provider_with(streaming(body), stream=True).complete(user_request())


async def test_stream_cut_before_done_is_a_connection_error() -> None:
    body = ndjson(chunk("Hel", done=False))
    with pytest.raises(ProviderConnectionError, match="ended before"):
        await provider_with(streaming(body), stream=True).complete(user_request())


async def test_non_json_line_is_a_response_error() -> None:
    body = ndjson(chunk("Hel", done=False), "<html>oops</html>")
    with pytest.raises(ProviderResponseError, match="<html>oops"):
        await provider_with(streaming(body), stream=True).complete(user_request())


async def test_error_status_while_streaming_maps_like_a_plain_call() -> None:
    body = b'{"error":"model \\"llama3.2\\" not found, try pulling it first"}'
    with pytest.raises(ModelNotFoundError, match=r"ollama pull llama3\.2"):
        await provider_with(streaming(body, status=404), stream=True).complete(user_request())
