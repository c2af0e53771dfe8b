"""neuron-provider-openai: OpenAI's Chat Completions and Responses APIs (and compatible servers).

`OpenAIProvider` (`"openai:<model>"`) speaks Chat Completions, which every
OpenAI-compatible server offers; `OpenAIResponsesProvider`
(`"openai-responses:<model>"`) speaks the Responses API. `presets.PRESETS`
names OpenAI-compatible vendors (`"groq:<model>"`, `"deepseek:<model>"`,
`"openrouter:<model>"`...), each built by a `PresetProvider` subclass
(`preset_providers.GroqProvider`...).

The re-exports are resolved on first access (PEP 562): the entry point
`neuron_provider_openai.plugin` imports this package, and plugin listing must
not pay for importing httpx.
"""

from __future__ import annotations

from importlib import import_module as _import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .preset_providers import PresetProvider
    from .presets import Preset
    from .provider import (
        API_KEY_ENV,
        BASE_URL_ENV,
        DEFAULT_BASE_URL,
        DEFAULT_TIMEOUT,
        OpenAIProvider,
    )
    from .responses import BackgroundPolling, OpenAIResponsesProvider

__all__ = [
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "DEFAULT_BASE_URL",
    "DEFAULT_TIMEOUT",
    "BackgroundPolling",
    "OpenAIProvider",
    "OpenAIResponsesProvider",
    "Preset",
    "PresetProvider",
]

_MODULES = {
    "BackgroundPolling": ".responses",
    "OpenAIResponsesProvider": ".responses",
    "Preset": ".presets",
    "PresetProvider": ".preset_providers",
}
"""The module of each re-export not in `.provider`."""


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(_import_module(_MODULES.get(name, ".provider"), __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
