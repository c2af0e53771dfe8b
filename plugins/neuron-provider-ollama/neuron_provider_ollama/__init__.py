"""neuron-provider-ollama: Ollama's native chat API as a `neuron_turn` provider.

The re-exports are resolved on first access (PEP 562): the entry point
`neuron_provider_ollama.plugin` imports this package first, and loading
plugins must not pay for importing httpx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .provider import OllamaProvider

__all__ = ["OllamaProvider"]


def __getattr__(name: str) -> object:
    if name in __all__:
        from . import provider

        return getattr(provider, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
