"""Errors raised by `neuron_hooks` when hooks or stock hooks are set up wrongly.

    layer0.HookError
    └── HookRegistryError             a hook, or the registry, was set up wrongly
        ├── DuplicateHookError        (ValueError) the name is already registered
        ├── InvalidHookError          (TypeError) the object cannot run as a hook
        └── HookConfigError           (ValueError) a stock hook got bad settings

Dispatch never raises these: a hook that fails while running is logged and
treated as `continue` (turn-loop.md, "Hook pipeline").
"""

from __future__ import annotations

from layer0 import HookError

__all__ = ["DuplicateHookError", "HookConfigError", "HookRegistryError", "InvalidHookError"]


class HookRegistryError(HookError):
    """Root of the `neuron_hooks` errors; raised only while setting hooks up."""


class DuplicateHookError(HookRegistryError, ValueError):
    """Raised by `HookRegistry.add` when a hook of that name is already registered.

    Names identify hooks in log lines, so two hooks may not share one.
    """

    def __init__(self, name: str) -> None:
        super().__init__(
            f"a hook named {name!r} is already registered; pass name=... to add another"
        )
        self.name = name


class InvalidHookError(HookRegistryError, TypeError):
    """Raised when an object lacks the `layer0.Hook` shape or declares no valid points."""


class HookConfigError(HookRegistryError, ValueError):
    """Raised when a stock hook is constructed with settings it cannot use."""
