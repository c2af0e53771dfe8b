"""The `neuron_turn` entry point: registers the `openai` provider.

Nothing heavy is imported here: httpx and genai-prices load only when the
factory first builds a provider, so listing plugins stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neuron_turn.plugins.hookspecs import RegisterProvider, hookimpl

if TYPE_CHECKING:
    from .provider import OpenAIProvider

PROVIDER_NAME = "openai"
"""The name users type: `"openai:gpt-4o-mini"`."""


def build_provider(model: str, **options: Any) -> OpenAIProvider:
    """Build an `OpenAIProvider` for `model`; `options` are its keyword arguments."""
    from .provider import OpenAIProvider

    return OpenAIProvider(model, **options)


@hookimpl
def register_providers(register: RegisterProvider) -> None:
    """Offer the `openai` provider."""
    register(PROVIDER_NAME, build_provider)
