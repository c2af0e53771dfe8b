"""`run_spans()`: whether an evaluation run makes spans of its own, and with what (private)."""

from __future__ import annotations

from ._run_spans import RunSpans

__all__ = ["run_spans"]


def run_spans() -> RunSpans:
    """OpenTelemetry spans when neuron-tracing-otel is instrumenting, else spans of nothing.

    Asked once per run, as the per-case span capture asks once per case:
    tracing turned on or off during a run changes the next run.
    """
    try:
        from neuron_tracing_otel import instrumented
    except ImportError:
        return RunSpans()
    observer = instrumented()
    if observer is None:
        return RunSpans()
    from ._otel_run_spans import OTelRunSpans

    return OTelRunSpans(observer.tracer_provider)
