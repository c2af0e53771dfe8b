"""Spans and metrics that land in memory, with tracing on for the test only."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from neuron_tracing_otel import uninstrument
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


@pytest.fixture(autouse=True)
def _no_metrics_export(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test that passes no meter provider must not export from the test process.

    Without one, `instrument()` would set up OTLP to localhost:4318 and try it
    when pytest exits; the tests that check metrics pass a provider of their own.
    Subprocess tests build their environment without `OTEL_*` variables.
    """
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "none")


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    """Where the spans of the test go; tracing is off again after it."""
    memory = InMemorySpanExporter()
    yield memory
    uninstrument()
    memory.clear()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> TracerProvider:
    """A tracer provider exporting to `exporter` as each span ends."""
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    return tracer_provider


@pytest.fixture
def metric_reader() -> InMemoryMetricReader:
    """Where the metrics of the test are read from, when the test collects them."""
    return InMemoryMetricReader()


@pytest.fixture
def meters(metric_reader: InMemoryMetricReader) -> Iterator[MeterProvider]:
    """A meter provider read by `metric_reader` only, shut down after the test."""
    meter_provider = MeterProvider([metric_reader], shutdown_on_exit=False)
    yield meter_provider
    meter_provider.shutdown()
