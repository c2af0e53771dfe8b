"""The provider says how large a model's context window is, so the loop compacts below it."""

from __future__ import annotations

from neuron_provider_anthropic import AnthropicProvider


async def test_a_known_model_has_the_window_genai_prices_gives_it() -> None:
    async with AnthropicProvider("claude-haiku-4-5", api_key="k") as provider:
        assert provider.context_window("claude-haiku-4-5") == 200_000
        assert provider.context_window("claude-haiku-4-5-20251001") == 200_000


async def test_an_unknown_model_has_no_window() -> None:
    async with AnthropicProvider("claude-haiku-4-5", api_key="k") as provider:
        assert provider.context_window("no-such-model") is None
