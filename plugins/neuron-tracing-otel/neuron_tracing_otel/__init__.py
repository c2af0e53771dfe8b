"""neuron_tracing_otel: OpenTelemetry spans and metrics for every turn, per the GenAI conventions.

Off until turned on: `NEURON_OTEL=1` in the environment (for `neuron-turn`
and anything that loads plugins), `neuron-turn run --trace`, or
`instrument()` in Python. Each turn is an `invoke_agent {agent}` span with a
`chat {model}` span per model call and an `execute_tool {tool}` span per
tool call under it (see `neuron_tracing_otel.observer` for every attribute),
and each model call records the `gen_ai.client.token.usage` and
`gen_ai.client.operation.duration` histograms. Message content is recorded
only when asked for (`capture_content=True`, `NEURON_OTEL_CAPTURE_CONTENT=1`),
only on spans, each text at most `MAX_CONTENT_CHARS` long. Spans and metrics
go to the providers given, the global ones, or OTLP over HTTP set up from the
standard `OTEL_EXPORTER_OTLP_*` variables (`neuron_tracing_otel.instrument`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Final

from ._bounded import MAX_CONTENT_CHARS
from .errors import TracingError, TracingSettingError
from .settings import CAPTURE_VARIABLES, ENABLE_VARIABLE, capture_content, tracing_enabled

if TYPE_CHECKING:
    from .instrumentation import instrument, instrument_from_env, instrumented, uninstrument
    from .observer import TracingObserver, provider_name, server_attributes

# Loaded on first use: the plugin imports this package every time plugins load,
# and with tracing off it must not pay for importing the OpenTelemetry SDK.
_LAZY: Final = {
    "TracingObserver": "observer",
    "instrument": "instrumentation",
    "instrument_from_env": "instrumentation",
    "instrumented": "instrumentation",
    "provider_name": "observer",
    "server_attributes": "observer",
    "uninstrument": "instrumentation",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "CAPTURE_VARIABLES",
    "ENABLE_VARIABLE",
    "MAX_CONTENT_CHARS",
    "TracingError",
    "TracingObserver",
    "TracingSettingError",
    "capture_content",
    "instrument",
    "instrument_from_env",
    "instrumented",
    "provider_name",
    "server_attributes",
    "tracing_enabled",
    "uninstrument",
]
