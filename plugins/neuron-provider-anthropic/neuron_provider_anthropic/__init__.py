"""neuron_provider_anthropic: the Anthropic Messages API as a `neuron_turn` provider.

`AnthropicProvider` is resolved on first access (PEP 562), so importing the
`plugin` entry-point module, which imports this package first, does not load
httpx or genai-prices.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .provider import AnthropicProvider

__all__ = ["AnthropicProvider"]


def __getattr__(name: str) -> Any:
    if name == "AnthropicProvider":
        from .provider import AnthropicProvider

        return AnthropicProvider
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
