"""The tracer and meter providers this package sets up when the application set none.

Read from the standard variables, all of them before anything is installed,
so a bad value leaves the process as it was:

- `OTEL_TRACES_EXPORTER`, `OTEL_METRICS_EXPORTER`: `otlp` (the default),
  `console` (stdout) or `none`;
- OTLP is HTTP/protobuf (`OTEL_EXPORTER_OTLP_PROTOCOL` and the per-signal
  `..._TRACES_PROTOCOL`, `..._METRICS_PROTOCOL` may say only that) to
  `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `..._METRICS_ENDPOINT`, else
  `OTEL_EXPORTER_OTLP_ENDPOINT` (default `http://localhost:4318`), with
  `OTEL_EXPORTER_OTLP_HEADERS` and the other `OTEL_EXPORTER_OTLP_*` settings,
  which the exporters read themselves;
- metrics leave every `OTEL_METRIC_EXPORT_INTERVAL` milliseconds (default
  60000), each export given `OTEL_METRIC_EXPORT_TIMEOUT` (default 30000), as
  `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE` says (`cumulative`,
  the default, `delta` or `lowmemory`);
- the service is `OTEL_SERVICE_NAME`, else `neuron-turn`.

Spans leave in batches and metrics periodically, from background threads
that never block the event loop; both providers flush and shut down when the
process exits.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from opentelemetry import metrics, trace
from opentelemetry.metrics import MeterProvider

# The API names no public type for "no provider set yet"; this is the one it returns.
from opentelemetry.metrics._internal import _ProxyMeterProvider
from opentelemetry.sdk.metrics import MeterProvider as SdkMeterProvider
from opentelemetry.sdk.metrics.export import (
    ConsoleMetricExporter,
    MetricExporter,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
from opentelemetry.trace import TracerProvider

from .errors import TracingSettingError

__all__ = [
    "MetricsSetup",
    "TracesSetup",
    "application_meter_provider",
    "application_tracer_provider",
    "chosen_meter_provider",
    "metrics_setup",
    "traces_setup",
]

_DEFAULT_SERVICE: Final = "neuron-turn"
_HTTP: Final = "http/protobuf"
_TEMPORALITIES: Final = frozenset({"cumulative", "delta", "lowmemory"})


@dataclass(frozen=True)
class TracesSetup:
    """Where spans go, read from the environment and not installed yet."""

    exporter: SpanExporter | None
    resource: Resource

    def install(self) -> TracerProvider:
        """Make the tracer provider, global, and return it."""
        provider = SdkTracerProvider(resource=self.resource)
        if self.exporter is not None:
            provider.add_span_processor(BatchSpanProcessor(self.exporter))
        trace.set_tracer_provider(provider)
        return trace.get_tracer_provider()


@dataclass(frozen=True)
class MetricsSetup:
    """Where metrics go and how often, read from the environment and not installed yet."""

    exporter: MetricExporter | None
    interval_millis: float
    timeout_millis: float
    resource: Resource

    def install(self) -> MeterProvider:
        """Make the meter provider (its export thread starts), global, and return it."""
        readers = []
        if self.exporter is not None:
            reader = PeriodicExportingMetricReader(
                self.exporter,
                export_interval_millis=self.interval_millis,
                export_timeout_millis=self.timeout_millis,
            )
            readers.append(reader)
        metrics.set_meter_provider(SdkMeterProvider(readers, resource=self.resource))
        return metrics.get_meter_provider()


def application_tracer_provider() -> TracerProvider | None:
    """The global tracer provider if the application set one, else None."""
    current = trace.get_tracer_provider()
    return None if isinstance(current, trace.ProxyTracerProvider) else current


def application_meter_provider() -> MeterProvider | None:
    """The global meter provider if the application set one, else None."""
    current = metrics.get_meter_provider()
    return None if isinstance(current, _ProxyMeterProvider) else current


def chosen_meter_provider(given: MeterProvider | None, setup: MetricsSetup | None) -> MeterProvider:
    """The meter provider metrics go to: `given`, else `setup` installed, else the global one.

    The global one, when the application has set none yet, is the API's proxy:
    metrics recorded through it go nowhere until the application sets a provider.
    """
    if given is not None:
        return given
    if setup is not None:
        return setup.install()
    return metrics.get_meter_provider()


def traces_setup(environ: Mapping[str, str]) -> TracesSetup:
    """Read where spans go from `environ`.

    Raises:
        TracingSettingError: an exporter or protocol this package does not ship.
    """
    kind = _exporter_kind(environ, "OTEL_TRACES_EXPORTER")
    exporter: SpanExporter | None = None
    if kind == "console":
        exporter = ConsoleSpanExporter()
    elif kind == "otlp":
        _check_protocol(environ, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        # Imported here: only a process that exports over OTLP pays for it.
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter()
    return TracesSetup(exporter, _resource(environ))


def metrics_setup(environ: Mapping[str, str]) -> MetricsSetup:
    """Read where metrics go, and how often, from `environ`.

    Raises:
        TracingSettingError: an exporter, protocol, temporality this package does
            not ship, or an export interval or timeout that is not a positive number.
    """
    kind = _exporter_kind(environ, "OTEL_METRICS_EXPORTER")
    interval = _millis(environ, "OTEL_METRIC_EXPORT_INTERVAL", 60000)
    timeout = _millis(environ, "OTEL_METRIC_EXPORT_TIMEOUT", 30000)
    exporter: MetricExporter | None = None
    if kind == "console":
        exporter = ConsoleMetricExporter()
    elif kind == "otlp":
        _check_protocol(environ, "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL")
        _check_temporality(environ)
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

        exporter = OTLPMetricExporter()
    return MetricsSetup(exporter, interval, timeout, _resource(environ))


def _exporter_kind(environ: Mapping[str, str], variable: str) -> str:
    kind = environ.get(variable, "otlp").strip().lower() or "otlp"
    if kind not in {"otlp", "console", "none"}:
        raise TracingSettingError(variable, kind, "otlp, console or none")
    return kind


def _check_protocol(environ: Mapping[str, str], signal_variable: str) -> None:
    # The signal's own variable wins over the general one, as the SDK reads them.
    for variable in (signal_variable, "OTEL_EXPORTER_OTLP_PROTOCOL"):
        protocol = environ.get(variable)
        if protocol is None:
            continue
        if protocol.strip() != _HTTP:
            raise TracingSettingError(variable, protocol, f"{_HTTP} (the exporter installed)")
        return


def _check_temporality(environ: Mapping[str, str]) -> None:
    variable = "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE"
    value = environ.get(variable)
    # The exporter would log a warning and fall back to cumulative: a typo would go unseen.
    if value is not None and value.strip().lower() not in _TEMPORALITIES:
        raise TracingSettingError(variable, value, "cumulative, delta or lowmemory")


def _millis(environ: Mapping[str, str], variable: str, default: float) -> float:
    value = environ.get(variable)
    if value is None or not value.strip():
        return default
    try:
        millis = float(value)
    except ValueError:
        millis = math.nan
    # The SDK would log a warning and use its default: a typo would go unseen.
    if not (0 < millis < math.inf):
        raise TracingSettingError(variable, value, "a positive number of milliseconds")
    return millis


def _resource(environ: Mapping[str, str]) -> Resource:
    return Resource.create(
        {} if environ.get("OTEL_SERVICE_NAME") else {SERVICE_NAME: _DEFAULT_SERVICE}
    )
