"""The `neuron_turn` entry point: registers the `local` provider.

Nothing heavy is imported here: httpx, the OpenAI provider and the engine
load only when the factory first builds a provider, so listing plugins stays
cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neuron_turn.plugins.hookspecs import RegisterProvider, hookimpl

if TYPE_CHECKING:
    from .provider import LocalProvider

PROVIDER_NAME = "local"
"""The name users type: `"local:default"` or `"local:/path/to/model.gguf"`."""


def build_provider(model: str, **options: Any) -> LocalProvider:
    """Build a `LocalProvider` for `model`; `options` are its keyword arguments."""
    from .provider import LocalProvider

    return LocalProvider(model, **options)


@hookimpl
def register_providers(register: RegisterProvider) -> None:
    """Offer the `local` provider."""
    register(PROVIDER_NAME, build_provider)
