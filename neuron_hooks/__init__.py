"""neuron_hooks: the hook pipeline of a turn and the stock hooks that plug into it.

`HookRegistry` runs `layer0.Hook`s at the points of a turn (turn-loop.md,
"Hook pipeline"); the stock hooks cover budgets, tool policy, secret
redaction and structured logging. Budget and compaction events reach
observers through `on_lifecycle` (`neuron_hooks.lifecycle`), tools' progress
reports through `on_progress` (`neuron_hooks.progress`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from layer0._exports import lazy_exports as _lazy_exports

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


__getattr__, __dir__ = _lazy_exports(__name__, globals(), _EXPORTS)
