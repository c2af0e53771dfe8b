"""The provider says how large a model's context window is, so the loop compacts below it."""

from __future__ import annotations

from neuron_provider_openai import OpenAIProvider


async def test_a_known_model_has_the_window_genai_prices_gives_it() -> None:
    async with OpenAIProvider("gpt-4o-mini", api_key="k") as provider:
        assert provider.context_window("gpt-4o-mini") == 128_000


async def test_an_unknown_model_or_server_has_no_window() -> None:
    async with OpenAIProvider("gpt-4o-mini", api_key="k") as provider:
        assert provider.context_window("no-such-model") is None
    async with OpenAIProvider("m", base_url="http://127.0.0.1:9/v1", api_key="k") as other:
        assert other.context_window("m") is None
