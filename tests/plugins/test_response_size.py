"""An answer is read up to `max_response_bytes`, counted after decompression, never without end.

Before, every HTTP provider read a body (or a stream) whole, inflating gzip as
it went: an endless body hung the call while memory grew, and a few kilobytes
of gzip that inflate to gigabytes were held whole. Now a success past the
limit fails as a `ProviderResponseError` naming `max_response_bytes`, and of
an error body only the start is read, the error keeping the class its status
gives.
"""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from neuron_provider_anthropic import AnthropicProvider
from neuron_provider_google import GoogleProvider
from neuron_provider_ollama import OllamaProvider
from neuron_provider_openai import OpenAIProvider, OpenAIResponsesProvider
from neuron_turn import ProviderMessage, ProviderRequest, TextPart
from neuron_turn.loop.provider_errors import ProviderResponseError, ProviderServerError

_LIMIT = 1024 * 1024
_PROVIDERS: dict[str, Callable[[httpx.AsyncClient], Any]] = {
    "openai": lambda client: OpenAIProvider("gpt-4o-mini", client=client, api_key="sk-x"),
    "responses": lambda client: OpenAIResponsesProvider("gpt-5-mini", client=client, api_key="k"),
    "anthropic": lambda client: AnthropicProvider("claude-haiku-4-5", client=client, api_key="k"),
    "google": lambda client: GoogleProvider("gemini-2.5-flash", client=client, api_key="k-x"),
    "ollama": lambda client: OllamaProvider(
        "llama3.2", client=client, base_url="http://localhost:11434"
    ),
}
_STREAM_TYPES = {"ollama": "application/x-ndjson"}
_REQUEST = ProviderRequest(model="", messages=[ProviderMessage("user", [TextPart("Hi")])])
_BOMB = gzip.compress(b" " * (16 * _LIMIT))  # 16 KiB that inflate to 16 MiB


async def _endless(piece: bytes) -> AsyncIterator[bytes]:
    while True:
        yield piece


def _provider(name: str, make: Callable[[], httpx.Response]) -> Any:
    provider = _PROVIDERS[name](
        httpx.AsyncClient(transport=httpx.MockTransport(lambda request: make()))
    )
    provider.max_response_bytes = _LIMIT
    return provider


async def _stream(provider: Any) -> list[Any]:
    return [event async for event in provider.stream(_REQUEST)]


@pytest.mark.parametrize("name", sorted(_PROVIDERS))
def test_an_answer_that_inflates_past_the_limit_is_refused_unread(name: str) -> None:
    headers = {"content-type": "application/json", "content-encoding": "gzip"}
    provider = _provider(name, lambda: httpx.Response(200, content=_BOMB, headers=headers))
    with pytest.raises(ProviderResponseError, match="max_response_bytes") as raised:
        asyncio.run(provider.complete(_REQUEST))
    assert f"more than {_LIMIT:,} bytes" in raised.value.message


@pytest.mark.parametrize("name", sorted(_PROVIDERS))
def test_a_stream_that_inflates_past_the_limit_is_refused(name: str) -> None:
    kind = _STREAM_TYPES.get(name, "text/event-stream")
    headers = {"content-type": kind, "content-encoding": "gzip"}
    # Blank lines: an event stream and NDJSON both pass them over, so only the size ends it.
    bomb = gzip.compress(b"\n" * (16 * _LIMIT))
    provider = _provider(name, lambda: httpx.Response(200, content=bomb, headers=headers))
    with pytest.raises(ProviderResponseError, match="max_response_bytes"):
        asyncio.run(_stream(provider))


@pytest.mark.parametrize("name", sorted(_PROVIDERS))
def test_an_endless_answer_ends_at_the_limit(name: str) -> None:
    def endless() -> httpx.Response:
        return httpx.Response(
            200, content=_endless(b" " * 65536), headers={"content-type": "application/json"}
        )

    with pytest.raises(ProviderResponseError, match="max_response_bytes"):
        asyncio.run(_provider(name, endless).complete(_REQUEST))


@pytest.mark.parametrize("name", sorted(_PROVIDERS))
def test_an_endless_stream_ends_at_the_limit(name: str) -> None:
    kind = _STREAM_TYPES.get(name, "text/event-stream")

    def endless() -> httpx.Response:
        return httpx.Response(200, content=_endless(b"\n" * 65536), headers={"content-type": kind})

    with pytest.raises(ProviderResponseError, match="max_response_bytes"):
        asyncio.run(_stream(_provider(name, endless)))


@pytest.mark.parametrize("name", sorted(_PROVIDERS))
def test_an_endless_error_body_is_read_in_part_and_keeps_its_status_class(name: str) -> None:
    def endless() -> httpx.Response:
        body = _endless(b"x" * 65536)
        return httpx.Response(500, content=body, headers={"content-type": "text/plain"})

    provider = _provider(name, endless)
    with pytest.raises(ProviderServerError):
        asyncio.run(provider.complete(_REQUEST))
    with pytest.raises(ProviderServerError):
        asyncio.run(_stream(provider))


@pytest.mark.parametrize("name", sorted(_PROVIDERS))
def test_an_answer_within_the_limit_after_inflating_is_read(name: str) -> None:
    # The gzip bomb's inflated size is what counts: the same bomb passes a larger limit.
    headers = {"content-type": "application/json", "content-encoding": "gzip"}
    provider = _provider(name, lambda: httpx.Response(200, content=_BOMB, headers=headers))
    provider.max_response_bytes = 32 * _LIMIT
    with pytest.raises(ProviderResponseError) as raised:  # spaces are no answer
        asyncio.run(provider.complete(_REQUEST))
    assert "max_response_bytes" not in raised.value.message
