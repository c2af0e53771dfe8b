"""`instrument()` and `uninstrument()`: trace every turn of this process, or stop.

Where spans go: to the tracer provider passed in; else to the global one if
the application set one (`opentelemetry.trace.set_tracer_provider`); else
this module sets one up, from the standard variables, and makes it global:
`OTEL_TRACES_EXPORTER` `otlp` (the default; OTLP over HTTP/protobuf to
`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT`, default
`http://localhost:4318`, with `OTEL_EXPORTER_OTLP_HEADERS` and the other
`OTEL_EXPORTER_OTLP_*` settings), `console` (stdout) or `none`; the service is
`OTEL_SERVICE_NAME`, else `neuron-turn`. Spans leave in batches from a
background thread, never blocking the event loop, and the rest are flushed
when the process exits.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final

from opentelemetry import trace
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
from opentelemetry.trace import TracerProvider

from neuron_turn import add_turn_observer, remove_turn_observer

from .errors import TracingSettingError
from .observer import TracingObserver
from .settings import capture_content as capture_from

__all__ = ["instrument", "instrument_from_env", "instrumented", "uninstrument"]

_DEFAULT_SERVICE: Final = "neuron-turn"
_HTTP: Final = "http/protobuf"

_installed: TracingObserver | None = None


def instrument(
    *, tracer_provider: TracerProvider | None = None, capture_content: bool | None = None
) -> TracingObserver:
    """Record every turn this process starts from now on as GenAI spans; return the observer.

    Calling it again replaces the previous set-up. `capture_content` None
    reads `NEURON_OTEL_CAPTURE_CONTENT` (see `neuron_tracing_otel.settings`).

    Raises:
        TracingSettingError: an `OTEL_*` or `NEURON_OTEL_*` variable has a value
            this cannot use (an exporter or protocol it does not ship, a bad flag).
    """
    global _installed
    capture = capture_from(os.environ) if capture_content is None else capture_content
    provider = tracer_provider if tracer_provider is not None else _global_provider(os.environ)
    observer = TracingObserver(provider, capture_content=capture)
    uninstrument()
    add_turn_observer(observer)
    _installed = observer
    return observer


def instrument_from_env(environ: Mapping[str, str] | None = None) -> TracingObserver | None:
    """Turn tracing on if `NEURON_OTEL` says so and it is not on already; None if off.

    What the plugin does when plugins load, so `NEURON_OTEL=1` alone traces a
    `neuron-turn` command or any program that builds its turns from plugins.

    Raises:
        TracingSettingError: a tracing variable has a value this cannot use.
    """
    from .settings import tracing_enabled

    if not tracing_enabled(os.environ if environ is None else environ):
        return None
    return _installed if _installed is not None else instrument()


def uninstrument() -> None:
    """Stop recording turns that start from now on (no-op if tracing is off)."""
    global _installed
    if _installed is not None:
        remove_turn_observer(_installed)
        _installed = None


def instrumented() -> TracingObserver | None:
    """The observer `instrument` registered, or None when tracing is off."""
    return _installed


def _global_provider(environ: Mapping[str, str]) -> TracerProvider:
    current = trace.get_tracer_provider()
    if not isinstance(current, trace.ProxyTracerProvider):
        return current  # the application chose where spans go
    exporter = _exporter(environ)
    resource = Resource.create(
        {} if environ.get("OTEL_SERVICE_NAME") else {SERVICE_NAME: _DEFAULT_SERVICE}
    )
    provider = SdkTracerProvider(resource=resource)
    if exporter is not None:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return trace.get_tracer_provider()


def _exporter(environ: Mapping[str, str]) -> SpanExporter | None:
    kind = environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() or "otlp"
    if kind == "none":
        return None
    if kind == "console":
        return ConsoleSpanExporter()
    if kind != "otlp":
        raise TracingSettingError("OTEL_TRACES_EXPORTER", kind, "otlp, console or none")
    for variable in ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"):
        protocol = environ.get(variable)
        if protocol is not None and protocol.strip() != _HTTP:
            raise TracingSettingError(variable, protocol, f"{_HTTP} (the exporter installed)")
        if protocol is not None:
            break
    # Imported here: only a process that exports over OTLP pays for it.
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()
