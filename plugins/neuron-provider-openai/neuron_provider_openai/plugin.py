"""The `neuron_turn` entry point: registers `openai`, `openai-responses` and the presets.

`openai` speaks Chat Completions (`OpenAIProvider`), `openai-responses` the
Responses API (`OpenAIResponsesProvider`); both take the same options for
the key, `base_url`, client and prices. Each OpenAI-compatible vendor in
`presets.PRESETS` (`groq`, `deepseek`, `openrouter`...) is registered under
its name and aliases, built by its `PresetProvider` subclass.

Nothing heavy is imported here: httpx and genai-prices load only when a
factory first builds a provider, so listing plugins stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from neuron_turn.plugins.hookspecs import RegisterProvider, hookimpl

from .presets import PRESETS

if TYPE_CHECKING:
    from .preset_providers import PresetProvider
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


def preset_factory(name: str) -> Callable[..., PresetProvider]:
    """A factory building the provider of preset `name`: `factory(model, **options)`."""

    def build_preset_provider(model: str, **options: Any) -> PresetProvider:
        from .preset_providers import preset_provider_class

        return preset_provider_class(name)(model, **options)

    build_preset_provider.__qualname__ = build_preset_provider.__name__ = f"build_{name}_provider"
    return build_preset_provider


@hookimpl
def register_providers(register: RegisterProvider) -> None:
    """Offer `openai`, `openai-responses` and one provider per OpenAI-compatible preset."""
    register(PROVIDER_NAME, build_provider)
    register(RESPONSES_PROVIDER_NAME, build_responses_provider)
    for preset in PRESETS:
        register(preset.name, preset_factory(preset.name), aliases=preset.aliases)
