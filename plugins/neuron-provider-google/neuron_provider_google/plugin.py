"""The `neuron_turn` entry point: registers provider `google` (models as `"google:<model>"`).

Only the hook lives here; httpx, genai-prices and the provider module are
imported when the factory first builds a provider, so listing plugins stays
cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from neuron_turn.plugins.hookspecs import RegisterProvider, hookimpl

if TYPE_CHECKING:
    from .provider import GoogleProvider

__all__ = ["PROVIDER_NAME", "build_provider", "register_providers"]

PROVIDER_NAME: Final = "google"
"""The name users type: `"google:gemini-2.5-flash"` (pydantic-ai's spelling too)."""


def build_provider(model: str, **options: Any) -> GoogleProvider:
    """Build a `GoogleProvider` for `model`; `options` are its keyword arguments."""
    from .provider import GoogleProvider

    return GoogleProvider(model, **options)


@hookimpl
def register_providers(register: RegisterProvider) -> None:
    """Offer the `google` provider (Gemini API)."""
    register(PROVIDER_NAME, build_provider)
