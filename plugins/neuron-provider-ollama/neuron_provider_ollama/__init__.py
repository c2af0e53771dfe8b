"""neuron-provider-ollama: Ollama's native chat API as a `neuron_turn` provider.

`OllamaProvider` is imported on first access, so that loading the entry point
(`neuron_provider_ollama.plugin`, which imports this package first) does not
import httpx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .provider import OllamaProvider

__all__ = ["OllamaProvider"]


def __getattr__(name: str) -> object:
    if name == "OllamaProvider":
        from .provider import OllamaProvider

        return OllamaProvider
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
