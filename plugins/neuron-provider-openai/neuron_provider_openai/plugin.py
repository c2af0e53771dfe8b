"""The `neuron_turn` entry point: registers the `openai` and `openai-responses` providers.

`openai` speaks Chat Completions (`OpenAIProvider`), `openai-responses` the
Responses API (`OpenAIResponsesProvider`); both take the same options for
the key, `base_url`, client and prices.

Nothing heavy is imported here: httpx and genai-prices load only when a
factory first builds a provider, so listing plugins stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neuron_turn.plugins.hookspecs import RegisterProvider, hookimpl

if TYPE_CHECKING:
    from .provider import OpenAIProvider
    from .responses import OpenAIResponsesProvider

PROVIDER_NAME = "openai"
"""The name users type for Chat Completions: `"openai:gpt-4o-mini"`."""
RESPONSES_PROVIDER_NAME = "openai-responses"
"""The name users type for the Responses API: `"openai-responses:gpt-5-mini"`."""


def build_provider(model: str, **options: Any) -> OpenAIProvider:
    """Build an `OpenAIProvider` for `model`; `options` are its keyword arguments."""
    from .provider import OpenAIProvider

    return OpenAIProvider(model, **options)


def build_responses_provider(model: str, **options: Any) -> OpenAIResponsesProvider:
    """Build an `OpenAIResponsesProvider` for `model`; `options` are its keyword arguments."""
    from .responses import OpenAIResponsesProvider

    return OpenAIResponsesProvider(model, **options)


@hookimpl
def register_providers(register: RegisterProvider) -> None:
    """Offer the `openai` and `openai-responses` providers."""
    register(PROVIDER_NAME, build_provider)
    register(RESPONSES_PROVIDER_NAME, build_responses_provider)
