"""A tracer provider whose spans land in memory, with tracing on for the test only."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from neuron_tracing_otel import uninstrument
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


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
