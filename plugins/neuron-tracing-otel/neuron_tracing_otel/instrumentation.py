"""`instrument()` and `uninstrument()`: trace every turn of this process, or stop.

Where spans go: to the tracer provider passed in; else to the global one if
the application set one (`opentelemetry.trace.set_tracer_provider`); else
this module sets one up, from the standard variables, and makes it global.
Metrics likewise: the meter provider passed in, else the application's
global one (`opentelemetry.metrics.set_meter_provider`), else one set up from
the same variables. `neuron_tracing_otel._setup` lists them: OTLP over
HTTP/protobuf to `OTEL_EXPORTER_OTLP_ENDPOINT` (default
`http://localhost:4318`) unless `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER`
say `console` or `none`. Spans leave in batches and metrics periodically, from
background threads, never blocking the event loop, and the rest are flushed
when the process exits.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import TracerProvider

from neuron_turn import add_turn_observer, remove_turn_observer

from . import _setup
from .observer import TracingObserver
from .settings import capture_content as capture_from

__all__ = ["instrument", "instrument_from_env", "instrumented", "uninstrument"]

_installed: TracingObserver | None = None


def instrument(
    *,
    tracer_provider: TracerProvider | None = None,
    meter_provider: MeterProvider | None = None,
    capture_content: bool | None = None,
) -> TracingObserver:
    """Record every turn this process starts from now on as GenAI spans and metrics.

    Returns the observer. Calling it again replaces the previous set-up.
    `capture_content` None reads `NEURON_OTEL_CAPTURE_CONTENT` (see
    `neuron_tracing_otel.settings`); content goes on spans only, never on metrics.

    Raises:
        TracingSettingError: an `OTEL_*` or `NEURON_OTEL_*` variable has a value
            this cannot use (an exporter or protocol it does not ship, a bad flag,
            a metric export interval that is not a number); nothing is set up then.
    """
    global _installed
    environ = os.environ
    capture = capture_from(environ) if capture_content is None else capture_content
    tracer = (
        tracer_provider if tracer_provider is not None else _setup.application_tracer_provider()
    )
    meter = meter_provider if meter_provider is not None else _setup.application_meter_provider()
    # Every setting is read before anything is installed: a bad one changes nothing.
    traces = _setup.traces_setup(environ) if tracer is None else None
    metrics = (
        _setup.metrics_setup(environ)
        if meter is None and _exports_metrics(environ, sets_up_traces=traces is not None)
        else None
    )
    observer = TracingObserver(
        tracer if traces is None else traces.install(),
        meter_provider=_setup.chosen_meter_provider(meter, metrics),
        capture_content=capture,
    )
    uninstrument()
    add_turn_observer(observer)
    _installed = observer
    return observer


def _exports_metrics(environ: Mapping[str, str], *, sets_up_traces: bool) -> bool:
    """Whether this package sets up the metric export itself, given no meter provider.

    It does when it sets up the span export too (the process has no telemetry of
    its own: a command, a worker), or when `OTEL_METRICS_EXPORTER` asks. An
    application that brought its tracer provider keeps charge of its telemetry:
    metrics then go to the meter provider it sets, if it ever does, and nowhere
    else (no exporter to a collector it may not run).
    """
    return sets_up_traces or "OTEL_METRICS_EXPORTER" in environ


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
