"""neuron-provider-google: Google's Gemini API as a `neuron_turn` provider (`"google:<model>"`).

The re-exports are resolved on first access (PEP 562): the entry point
`neuron_provider_google.plugin` imports this package, and plugin listing must
not pay for importing httpx.
"""

from __future__ import annotations

from importlib import import_module as _import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .provider import (
        API_KEY_ENVS,
        BASE_URL_ENV,
        DEFAULT_BASE_URL,
        DEFAULT_TIMEOUT,
        GoogleProvider,
    )

__all__ = [
    "API_KEY_ENVS",
    "BASE_URL_ENV",
    "DEFAULT_BASE_URL",
    "DEFAULT_TIMEOUT",
    "GoogleProvider",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(_import_module(".provider", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
