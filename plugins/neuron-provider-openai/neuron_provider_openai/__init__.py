"""neuron-provider-openai: the OpenAI Chat Completions API (and compatible servers) for neuron-turn.

The re-exports are resolved on first access (PEP 562): the entry point
`neuron_provider_openai.plugin` imports this package, and plugin listing must
not pay for importing httpx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .provider import (
        API_KEY_ENV,
        BASE_URL_ENV,
        DEFAULT_BASE_URL,
        DEFAULT_TIMEOUT,
        OpenAIProvider,
    )

__all__ = ["API_KEY_ENV", "BASE_URL_ENV", "DEFAULT_BASE_URL", "DEFAULT_TIMEOUT", "OpenAIProvider"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import provider

        return getattr(provider, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
