"""The `neuron_turn` entry point: registers provider `ollama` (models as `"ollama:<model>"`).

Only the hook lives here; `httpx` and the provider module are imported when
the factory first builds a provider, so listing plugins stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neuron_turn import hookimpl

if TYPE_CHECKING:
    from neuron_turn import Provider, RegisterProvider

__all__ = ["register_providers"]


def _factory(model: str, **options: Any) -> Provider:
    from .provider import OllamaProvider

    return OllamaProvider(model, **options)


@hookimpl
def register_providers(register: RegisterProvider) -> None:
    """Offer `ollama`; options are `OllamaProvider`'s keyword arguments."""
    register("ollama", _factory)
