"""An API key no HTTP header can carry never reaches an error: each provider strips or refuses it.

A key read from a file (`open(...).read()`) ends with a newline; httpx's real
transport then refused the header as a retryable connection error quoting it
escaped (`b'Bearer sk-...\\n'`), which redaction missed; a non-ASCII key failed
with a bare UnicodeEncodeError.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from neuron_provider_anthropic import AnthropicProvider
from neuron_provider_google import GoogleProvider
from neuron_provider_openai import OpenAIProvider, OpenAIResponsesProvider
from neuron_turn import ProviderMessage, ProviderRequest, TextPart
from neuron_turn.loop.http_errors import redact
from neuron_turn.loop.provider_errors import ProviderAuthenticationError, ProviderError

KEY = "sk-live-0123456789abcdef"
_PROVIDERS: dict[str, Callable[[httpx.AsyncClient, str], Any]] = {
    "openai": lambda client, key: OpenAIProvider("gpt-4o-mini", client=client, api_key=key),
    "responses": lambda client, key: OpenAIResponsesProvider(
        "gpt-5-mini", client=client, api_key=key
    ),
    "anthropic": lambda client, key: AnthropicProvider(
        "claude-haiku-4-5", client=client, api_key=key
    ),
    "google": lambda client, key: GoogleProvider("gemini-2.5-flash", client=client, api_key=key),
}
_REQUEST = ProviderRequest(model="", messages=[ProviderMessage("user", [TextPart("Hi")])])


def _refusing(sent: list[httpx.Request]) -> httpx.AsyncClient:
    """A client whose server refuses every call, keeping what was sent."""

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(503, json={"error": {"message": "down"}})

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


@pytest.mark.parametrize("name", sorted(_PROVIDERS))
def test_a_key_read_from_a_file_with_its_newline_is_sent_without_it(name: str) -> None:
    sent: list[httpx.Request] = []
    provider = _PROVIDERS[name](_refusing(sent), f"  {KEY}\n")

    with pytest.raises(ProviderError):
        asyncio.run(provider.complete(_REQUEST))

    (request,) = sent[:1]
    carried = [value for value in request.headers.values() if KEY in value]
    assert carried and all(value.endswith(KEY) and "\n" not in value for value in carried)


@pytest.mark.parametrize("key", [f"sk-live\n{KEY}", f"{KEY}\x00", f"{KEY}é", f"sk {KEY}"])
@pytest.mark.parametrize("name", sorted(_PROVIDERS))
def test_a_key_no_header_can_carry_is_refused_for_good_without_quoting_it(
    name: str, key: str
) -> None:
    sent: list[httpx.Request] = []
    provider = _PROVIDERS[name](_refusing(sent), key)

    with pytest.raises(ProviderAuthenticationError) as raised:
        asyncio.run(provider.complete(_REQUEST))

    assert "no HTTP header can carry" in str(raised.value) and not raised.value.retryable
    assert KEY not in str(raised.value) and not sent


def test_a_secret_quoted_escaped_is_redacted_too() -> None:
    secret = f"{KEY}\n"
    quoted = f"Illegal header value b'Bearer {KEY}\\n'"
    assert KEY not in redact(quoted, [secret])
    assert KEY not in redact(f"'{KEY}\\x00'", [f"{KEY}\x00"])
