"""neuron_hooks: the hook pipeline of a turn and the stock hooks that plug into it.

`HookRegistry` runs `layer0.Hook`s at the points of a turn (turn-loop.md,
"Hook pipeline"); the stock hooks cover budgets, tool policy, secret
redaction and structured logging. Budget and compaction events reach
observers through `on_lifecycle` (`neuron_hooks.lifecycle`), tools' progress
reports through `on_progress` (`neuron_hooks.progress`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .budget import BudgetHook
    from .errors import DuplicateHookError, HookConfigError, HookRegistryError, InvalidHookError
    from .function_hook import FunctionHook, HookFunction, hook
    from .lifecycle import (
        LIFECYCLE_KEY,
        LifecycleEvent,
        LifecycleObserver,
        lifecycle_events,
        lifecycle_log,
    )
    from .logging_observer import LoggingObserver
    from .progress import ProgressObserver, ToolProgress
    from .redaction import (
        DEFAULT_REPLACEMENT,
        DEFAULT_SECRET_KEYS,
        DEFAULT_SECRET_PATTERNS,
        RedactionHook,
        redact,
    )
    from .registry import CONTINUE, HookRegistry, RegisteredHook
    from .tool_policy import ToolPolicyHook

_EXPORTS: dict[str, tuple[str, ...]] = {
    ".budget": ("BudgetHook",),
    ".errors": (
        "DuplicateHookError",
        "HookConfigError",
        "HookRegistryError",
        "InvalidHookError",
    ),
    ".function_hook": (
        "FunctionHook",
        "HookFunction",
        "hook",
    ),
    ".lifecycle": (
        "LIFECYCLE_KEY",
        "LifecycleEvent",
        "LifecycleObserver",
        "lifecycle_events",
        "lifecycle_log",
    ),
    ".logging_observer": ("LoggingObserver",),
    ".progress": (
        "ProgressObserver",
        "ToolProgress",
    ),
    ".redaction": (
        "DEFAULT_REPLACEMENT",
        "DEFAULT_SECRET_KEYS",
        "DEFAULT_SECRET_PATTERNS",
        "RedactionHook",
        "redact",
    ),
    ".registry": (
        "CONTINUE",
        "HookRegistry",
        "RegisteredHook",
    ),
    ".tool_policy": ("ToolPolicyHook",),
}
_MODULE_OF: dict[str, str] = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [
    "CONTINUE",
    "DEFAULT_REPLACEMENT",
    "DEFAULT_SECRET_KEYS",
    "DEFAULT_SECRET_PATTERNS",
    "LIFECYCLE_KEY",
    "BudgetHook",
    "DuplicateHookError",
    "FunctionHook",
    "HookConfigError",
    "HookFunction",
    "HookRegistry",
    "HookRegistryError",
    "InvalidHookError",
    "LifecycleEvent",
    "LifecycleObserver",
    "LoggingObserver",
    "ProgressObserver",
    "RedactionHook",
    "RegisteredHook",
    "ToolPolicyHook",
    "ToolProgress",
    "hook",
    "lifecycle_events",
    "lifecycle_log",
    "redact",
]


def __getattr__(name: str) -> object:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # the next lookup is a plain attribute read
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
