"""`run --trace`: load the plugins with tracing on, through the plugin that records spans.

The command line knows no tracing library: `--trace` means `NEURON_OTEL=1`
while the plugins load, which the `neuron-tracing-otel` plugin reads to
record the run's OpenTelemetry spans. Without that plugin the flag fails
rather than run untraced.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Final

from ..loop.observers import turn_observers
from ..plugins import PluginManager
from ..plugins.errors import PluginError

__all__ = ["TRACE_VARIABLE", "TracingUnavailableError", "load_traced"]

TRACE_VARIABLE: Final = "NEURON_OTEL"
"""The variable the tracing plugin reads; `--trace` sets it while plugins load."""

_PLUGIN: Final = "tracing-otel"


class TracingUnavailableError(PluginError):
    """`--trace` was given, but no plugin started tracing (not installed, or it failed)."""


def load_traced(load: Callable[[], PluginManager]) -> PluginManager:
    """Return `load()`, called with tracing turned on for the plugins.

    Raises:
        TracingUnavailableError: no plugin started tracing; says why, and how to fix it.
    """
    previous = os.environ.get(TRACE_VARIABLE)
    os.environ[TRACE_VARIABLE] = "1"
    try:
        manager = load()
    finally:
        if previous is None:
            del os.environ[TRACE_VARIABLE]
        else:
            os.environ[TRACE_VARIABLE] = previous
    if not turn_observers():
        raise TracingUnavailableError(_why(manager))
    return manager


def _why(manager: PluginManager) -> str:
    for failure in manager.failures:
        if failure.name == _PLUGIN:
            return f"--trace: the tracing plugin failed: {failure.describe()}"
    return (
        f"--trace needs the plugin {_PLUGIN!r} (distribution neuron-tracing-otel), which is "
        "not loaded: install it (pip install ./plugins/neuron-tracing-otel) or allow it in "
        "NEURON_LOAD_PLUGINS"
    )
