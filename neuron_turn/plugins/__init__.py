"""Plugins: the shared plugin manager and lookups of what plugins registered, by name.

Nothing happens at import time. `get_plugin_manager()` builds the manager on
first use and caches it: the built-in plugin first, then every entry point
of the group `neuron_turn`, one at a time, each inside its own `try`. A
plugin that fails to import, misspells a hook, raises inside its hook or
reuses a taken name is skipped with a `PluginLoadWarning` (or a
`PluginLoadError` when `NEURON_STRICT_PLUGINS=1`), and the rest still load.
`NEURON_LOAD_PLUGINS` and `NEURON_DISABLE_PLUGINS` (comma-separated
entry-point or distribution names) choose which plugins load.

Order: plugins load built-in first, then entry points sorted by name;
`registered_hooks()` and `registered_tools()` follow that order, then the
order each plugin registered them in.

This subpackage is the plugin system: the hook specifications (`hookspecs`),
the manager (`_manager`), loading entry points (`_entry_points`), calling
the `register_*` hooks (`_calls`), the records of what each plugin gave
(`_records`), its errors and warnings, the built-in plugin and the `Worker`
contract. It may import the loop (`neuron_turn.loop`), never the command line.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from layer0 import Environment, Orchestrator, StateStore
from neuron_hooks import HookRegistry
from neuron_tool.source import ToolSource
from neuron_tool.tool import ToolDyn

from ..loop.context import ContextStrategy
from ..loop.plugin_source import install_default_plugin_source
from ..loop.provider import Provider
from ._entry_points import PluginSettings
from ._manager import PluginManager
from ._records import PluginFailure, PluginHook, PluginInfo, PluginOrigin, PluginTool
from .worker import Worker

__all__ = [
    "PluginFailure",
    "PluginHook",
    "PluginInfo",
    "PluginManager",
    "PluginOrigin",
    "PluginSettings",
    "PluginTool",
    "build_hook_registry",
    "get_context_strategy",
    "get_environment",
    "get_orchestrator",
    "get_plugin_manager",
    "get_provider",
    "get_state_store",
    "get_worker",
    "registered_hooks",
    "registered_tools",
    "reset_plugin_manager",
    "tools_by_name",
]


@functools.cache
def get_plugin_manager() -> PluginManager:
    """Return the shared manager, built on first use from the installed entry points.

    Raises:
        PluginLoadError: `NEURON_STRICT_PLUGINS=1` and a plugin failed (nothing
            is cached then, so the next call tries again).
    """
    manager = PluginManager()
    manager.load_entry_points(PluginSettings.from_env())
    return manager


install_default_plugin_source(get_plugin_manager)


def reset_plugin_manager() -> None:
    """Forget the shared manager, so the next use loads plugins again (for tests)."""
    get_plugin_manager.cache_clear()


def get_provider(model: str, /, **options: Any) -> Provider:
    """Build the provider for `"<provider>:<model>"`; see `PluginManager.get_provider`."""
    return get_plugin_manager().get_provider(model, **options)


def get_context_strategy(name: str, /, **options: Any) -> ContextStrategy:
    """Build the context strategy `name`; see `PluginManager.get_context_strategy`."""
    return get_plugin_manager().get_context_strategy(name, **options)


def get_state_store(name: str, /, **options: Any) -> StateStore:
    """Build the state store `name`; see `PluginManager.get_state_store`."""
    return get_plugin_manager().get_state_store(name, **options)


def get_worker(name: str, /, **options: Any) -> Worker:
    """Build the worker `name`; see `PluginManager.get_worker`."""
    return get_plugin_manager().get_worker(name, **options)


def get_environment(name: str, /, *args: Any, **options: Any) -> Environment:
    """Build the environment `name`; see `PluginManager.get_environment`."""
    return get_plugin_manager().get_environment(name, *args, **options)


def get_orchestrator(name: str, /, **options: Any) -> Orchestrator:
    """Build the orchestrator `name`; see `PluginManager.get_orchestrator`."""
    return get_plugin_manager().get_orchestrator(name, **options)


def registered_hooks() -> list[PluginHook]:
    """Return every plugin hook in the documented order; see `PluginManager`."""
    return get_plugin_manager().registered_hooks()


def registered_tools() -> list[PluginTool]:
    """Return every plugin tool in the documented order; see `PluginManager`."""
    return get_plugin_manager().registered_tools()


def tools_by_name(names: Iterable[str]) -> list[ToolDyn | ToolSource]:
    """Return the plugin tools called `names`; see `PluginManager.tools_by_name`."""
    return get_plugin_manager().tools_by_name(names)


def build_hook_registry(registry: HookRegistry | None = None) -> HookRegistry:
    """Add every plugin hook to `registry` (or a new one); see `PluginManager`."""
    return get_plugin_manager().build_hook_registry(registry)
