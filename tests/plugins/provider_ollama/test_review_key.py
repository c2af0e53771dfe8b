"""An API key no header can carry: refused naming no part of it; a key file's newline dropped."""

from __future__ import annotations

import httpx
import pytest

from neuron_provider_ollama import OllamaProvider

from ._support import answering, chat_body, provider_with, user_request

KEY = "ollama-" + "k3y-0123456789abcdef"


async def test_a_key_read_from_a_file_with_its_newline_is_sent_without_it() -> None:
    # Sent as it was, httpx failed every call as a retryable connection error
    # whose message quoted the Authorization header, key and all.
    seen: list[httpx.Request] = []
    provider = provider_with(answering(chat_body(), seen), api_key=f"{KEY}\n")

    await provider.complete(user_request())

    assert seen[0].headers["authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize("bad", [f"{KEY}\nX-Evil: 1", f"{KEY}\x00", f"{KEY}é", "a key"])
def test_a_key_no_header_can_carry_is_refused_without_quoting_it(
    bad: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ValueError, match="no HTTP header can carry") as given:
        OllamaProvider("llama3.2", api_key=bad)
    assert "k3y" not in str(given.value) and "key\\n" not in str(given.value)

    if "\x00" in bad:
        return  # no environment variable can hold a NUL
    monkeypatch.setenv("OLLAMA_API_KEY", bad)
    with pytest.raises(ValueError, match="OLLAMA_API_KEY"):
        OllamaProvider("llama3.2")


def test_a_key_of_only_space_is_no_key() -> None:
    assert "authorization" not in provider_with(answering(chat_body()), api_key=" \n")._headers
