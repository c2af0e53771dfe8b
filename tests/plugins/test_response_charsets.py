"""A response's charset is not trusted: every provider reads JSON and event streams as UTF-8.

httpx decodes text by whatever codec `content-type` names, and Python's codec
registry holds codecs that are no text encodings (`rot13`, `hex`, `zlib`):
before, a server naming one made each provider's stream, and Anthropic's and
Ollama's answers and error bodies, fail with a bare TypeError or AssertionError.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from neuron_provider_anthropic import AnthropicProvider
from neuron_provider_google import GoogleProvider
from neuron_provider_ollama import OllamaProvider
from neuron_provider_openai import OpenAIProvider, OpenAIResponsesProvider
from neuron_turn import ProviderMessage, ProviderRequest, ProviderResponse, TextPart
from neuron_turn.loop.provider_errors import ProviderError, ProviderServerError

_PROVIDERS: dict[str, Callable[[httpx.AsyncClient], Any]] = {
    "openai": lambda client: OpenAIProvider("gpt-4o-mini", client=client, api_key="sk-x"),
    "responses": lambda client: OpenAIResponsesProvider("gpt-5-mini", client=client, api_key="k"),
    "anthropic": lambda client: AnthropicProvider("claude-haiku-4-5", client=client, api_key="k"),
    "google": lambda client: GoogleProvider("gemini-2.5-flash", client=client, api_key="k-x"),
    "ollama": lambda client: OllamaProvider(
        "llama3.2", client=client, base_url="http://localhost:11434"
    ),
}
_CODECS = ["rot13", "hex", "zlib"]
_REQUEST = ProviderRequest(model="", messages=[ProviderMessage("user", [TextPart("Hi")])])


def _provider(name: str, status: int, content: bytes, content_type: str) -> Any:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=content, headers={"content-type": content_type})

    return _PROVIDERS[name](httpx.AsyncClient(transport=httpx.MockTransport(handler)))


async def _stream(provider: Any) -> list[Any]:
    return [event async for event in provider.stream(_REQUEST)]


@pytest.mark.parametrize("codec", _CODECS)
@pytest.mark.parametrize("name", sorted(_PROVIDERS))
def test_a_stream_naming_a_codec_that_is_no_text_encoding_is_read_as_utf8(
    name: str, codec: str
) -> None:
    # Not a stream the API would finish: read as UTF-8 it is a provider error saying so.
    provider = _provider(name, 200, b'data: {"x": 1}\n\n', f"text/event-stream; charset={codec}")
    with pytest.raises(ProviderError) as raised:
        asyncio.run(_stream(provider))
    assert raised.value.message


@pytest.mark.parametrize("codec", _CODECS)
@pytest.mark.parametrize("name", sorted(_PROVIDERS))
def test_an_error_body_naming_a_codec_that_is_no_text_encoding_is_still_a_server_error(
    name: str, codec: str
) -> None:
    provider = _provider(name, 500, b'{"error": "down"}', f"application/json; charset={codec}")
    with pytest.raises(ProviderServerError):
        asyncio.run(provider.complete(_REQUEST))
    with pytest.raises(ProviderServerError):
        asyncio.run(_stream(provider))


def test_an_ollama_answer_naming_a_codec_that_is_no_text_encoding_is_read_as_utf8() -> None:
    body = (
        b'{"model": "llama3.2", "message": {"role": "assistant", "content": "Hi \xc3\xa9"},'
        b' "done": true, "done_reason": "stop", "prompt_eval_count": 1, "eval_count": 1}'
    )
    provider = _provider("ollama", 200, body, "application/json; charset=rot13")
    answer = asyncio.run(provider.complete(_REQUEST))
    assert isinstance(answer, ProviderResponse)
    assert answer.content == [TextPart("Hi é")]
