"""The `neuron_turn` entry point: registers the `anthropic` provider.

Only the hook lives here; the provider (and httpx, genai-prices) is imported
inside the factory, so listing plugins stays cheap.
"""

from __future__ import annotations

from typing import Any

from neuron_turn import Provider, RegisterProvider, hookimpl

PROVIDER_NAME = "anthropic"
"""The name users type: `"anthropic:<model>"`."""


def create_provider(model: str, **options: Any) -> Provider:
    """Build an `AnthropicProvider` for `model`; `options` are its keyword arguments."""
    from .provider import AnthropicProvider

    return AnthropicProvider(model, **options)


@hookimpl
def register_providers(register: RegisterProvider) -> None:
    """Offer the Anthropic Messages API as provider `anthropic`."""
    register(PROVIDER_NAME, create_provider)
