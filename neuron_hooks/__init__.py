"""neuron_hooks: the hook pipeline of a turn and the stock hooks that plug into it.

`HookRegistry` runs `layer0.Hook`s at the points of a turn (turn-loop.md,
"Hook pipeline"); the stock hooks cover budgets, tool policy, secret
redaction and structured logging. Budget and compaction events reach
observers through `on_lifecycle` (`neuron_hooks.lifecycle`), tools' progress
reports through `on_progress` (`neuron_hooks.progress`).
"""

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
