"""Each case's spans: recorded while its task runs, kept apart from other cases' (private).

Recording is on whenever neuron-tracing-otel is instrumenting (its
`instrument()`, `NEURON_OTEL=1`): a span processor is added, once, to the
tracer provider its spans go to. Cases run concurrently, each in its own
asyncio task; a span belongs to a case when its parent span does, else when
it starts in that case's context (`CASE`, a context variable the case sets,
which the tasks it starts inherit). A span of one case never lands in
another's tree, and spans started outside any case are not kept.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ._case_spans import CASE, CaseSpans
from .errors import SpanTreeRecordingError

if TYPE_CHECKING:
    from ._span_processor import CaseSpanProcessor

__all__ = ["case_spans"]

_processors: weakref.WeakKeyDictionary[object, CaseSpanProcessor] = weakref.WeakKeyDictionary()
_processors_lock = threading.Lock()


def _processor() -> CaseSpanProcessor | SpanTreeRecordingError:
    """The processor on the tracer provider neuron-tracing-otel writes to, else why none."""
    try:
        from neuron_tracing_otel import instrumented
    except ImportError:
        return SpanTreeRecordingError(
            "neuron-tracing-otel is not installed (pip install ./plugins/neuron-tracing-otel)"
        )
    observer = instrumented()
    if observer is None:
        return SpanTreeRecordingError(
            "neuron-tracing-otel is not instrumenting; call neuron_tracing_otel.instrument() "
            "(or set NEURON_OTEL=1) before evaluating"
        )
    from opentelemetry import trace

    from ._span_processor import CaseSpanProcessor

    provider = observer.tracer_provider
    if provider is None:
        provider = trace.get_tracer_provider()
    add = getattr(provider, "add_span_processor", None)
    if add is None:
        return SpanTreeRecordingError(
            f"the tracer provider neuron-tracing-otel writes to ({type(provider).__name__}) "
            "takes no span processor; give instrument() an opentelemetry.sdk TracerProvider"
        )
    with _processors_lock:
        found = _processors.get(provider)
        if found is None:
            found = CaseSpanProcessor()
            add(found)
            _processors[provider] = found
    return found


@contextmanager
def case_spans() -> Iterator[CaseSpans]:
    """Record the spans the code inside makes, for one case; `result()` after it gives them."""
    processor = _processor()
    if isinstance(processor, SpanTreeRecordingError):
        yield CaseSpans(processor)
        return
    case = CaseSpans()
    token = CASE.set(case)
    try:
        yield case
    finally:
        CASE.reset(token)
        processor.close(case)
