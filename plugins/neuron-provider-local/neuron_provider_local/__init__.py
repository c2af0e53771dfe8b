"""neuron-provider-local: a GGUF model served by embedded llama.cpp, the default with no API key.

The re-exports are resolved on first access (PEP 562): the entry point
`neuron_provider_local.plugin` imports this package, and plugin listing must
not pay for importing httpx or the OpenAI provider.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from .default_model import (
        DEFAULT_MODEL,
        DefaultModel,
        default_cache_dir,
        ensure_default_model,
        part_files,
    )
    from .errors import (
        LocalModelError,
        ModelChecksumError,
        ModelFileError,
        ModelUnavailableError,
        ServerStartError,
    )
    from .model_file import DEFAULT, MODEL_ENV, requested_file
    from .output import MalformedCall, PlainText, TextCall, ToolCalls, parse_output
    from .provider import DEFAULT_CONTEXT_SIZE, DEFAULT_MAX_TOKENS, LocalProvider
    from .server import EmbeddedServer, ServerSettings
    from .template import tool_calling_template

__all__ = [
    "DEFAULT",
    "DEFAULT_CONTEXT_SIZE",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MODEL",
    "MODEL_ENV",
    "DefaultModel",
    "EmbeddedServer",
    "LocalModelError",
    "LocalProvider",
    "MalformedCall",
    "ModelChecksumError",
    "ModelFileError",
    "ModelUnavailableError",
    "PlainText",
    "ServerSettings",
    "ServerStartError",
    "TextCall",
    "ToolCalls",
    "default_cache_dir",
    "ensure_default_model",
    "parse_output",
    "part_files",
    "requested_file",
    "tool_calling_template",
]

_HOMES: Final = {
    "default_model": (
        "DEFAULT_MODEL",
        "DefaultModel",
        "default_cache_dir",
        "ensure_default_model",
        "part_files",
    ),
    "errors": (
        "LocalModelError",
        "ModelChecksumError",
        "ModelFileError",
        "ModelUnavailableError",
        "ServerStartError",
    ),
    "model_file": ("DEFAULT", "MODEL_ENV", "requested_file"),
    "output": ("MalformedCall", "PlainText", "TextCall", "ToolCalls", "parse_output"),
    "provider": ("DEFAULT_CONTEXT_SIZE", "DEFAULT_MAX_TOKENS", "LocalProvider"),
    "server": ("EmbeddedServer", "ServerSettings"),
    "template": ("tool_calling_template",),
}
_MODULE_OF: Final = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
