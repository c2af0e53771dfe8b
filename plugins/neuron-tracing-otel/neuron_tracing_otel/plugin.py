"""The `neuron_turn` entry point: turns tracing on when `NEURON_OTEL` says so.

Installing the plugin changes nothing: with `NEURON_OTEL` unset this module
imports nothing of OpenTelemetry and registers nothing. Spans come from a
turn observer (`neuron_turn.add_turn_observer`), not from a hook, so the
hook registries it is asked to fill stay as they were.
"""

from __future__ import annotations

import os

from neuron_turn import RegisterHook, hookimpl

from .settings import tracing_enabled


@hookimpl
def register_hooks(register: RegisterHook) -> None:
    """Start tracing every turn of this process if `NEURON_OTEL` is on; register no hook."""
    if tracing_enabled(os.environ):
        from .instrumentation import instrument_from_env

        instrument_from_env()
