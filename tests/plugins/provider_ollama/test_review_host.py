"""Hostile hosts and error bodies: no password shown, no crash on a body nested too deep."""

from __future__ import annotations

import httpx
import pytest

from neuron_provider_ollama import OllamaProvider
from neuron_turn.loop.provider_errors import ProviderServerError

from ._support import provider_with, user_request

PASSWORD = "hunter2-" + "s3cret"


@pytest.mark.parametrize(
    "host",
    [
        f"http://alice:{PASSWORD}@127.0.0.1:11434",
        f"https://alice:{PASSWORD}@ollama.example",
        f"alice:{PASSWORD}@gpu-box:9000",
        f"ftp://alice:{PASSWORD}@box",
    ],
)
def test_a_host_holding_credentials_is_refused_without_repeating_them(
    host: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Kept, it went into the repr, every debug line and every error naming the server.
    with pytest.raises(ValueError, match="holds credentials") as given:
        OllamaProvider("llama3.2", base_url=host)
    assert PASSWORD not in str(given.value)

    monkeypatch.setenv("OLLAMA_HOST", host)
    # Read from OLLAMA_HOST, the password was dropped without a word.
    with pytest.raises(ValueError, match="holds credentials") as from_env:
        OllamaProvider("llama3.2")
    assert PASSWORD not in str(from_env.value)


async def test_an_error_body_nested_past_the_parser_is_a_provider_error() -> None:
    body = "[" * 100_000 + "]" * 100_000

    async def answer() -> None:
        provider = provider_with(lambda request: httpx.Response(500, text=body))
        await provider.complete(user_request())

    with pytest.raises(ProviderServerError, match="no error message"):
        await answer()
