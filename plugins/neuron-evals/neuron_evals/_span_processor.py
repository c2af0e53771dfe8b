"""`CaseSpanProcessor`: hands each span that belongs to a running case to that case (private).

Imported only once neuron-tracing-otel (and so the OpenTelemetry SDK) is
known to be installed: neuron-evals runs without them.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import cast

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from ._case_spans import CASE, MAX_CASE_SPANS, CaseSpans
from .span_tree import AttributeValue, SpanNode

__all__ = ["CaseSpanProcessor", "span_node"]


def _time(nanoseconds: int) -> datetime:
    return datetime.fromtimestamp(nanoseconds / 1e9, tz=UTC)


def span_node(span: ReadableSpan) -> SpanNode | None:
    """`span` as a node of a `SpanTree`; None when it lacks its ids or times."""
    context, start, end = span.context, span.start_time, span.end_time
    if context is None or start is None or end is None:
        return None
    return SpanNode(
        name=span.name,
        trace_id=context.trace_id,
        span_id=context.span_id,
        parent_span_id=None if span.parent is None else span.parent.span_id,
        start_timestamp=_time(start),
        end_timestamp=_time(end),
        # The SDK keeps only AttributeValues on a span (it drops anything else).
        attributes=cast(dict[str, AttributeValue], dict(span.attributes or {})),
    )


class CaseSpanProcessor(SpanProcessor):
    """Gives each span that belongs to a running case to that case, as the span ends.

    A span belongs to the case its parent span belongs to, else to the case
    whose context it started in (`CASE`); other spans are ignored. One per
    tracer provider for the life of the process (a provider cannot drop a
    processor): with no case running it reads a context variable and returns.
    Spans may start and end on other threads, hence the lock.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._owners: dict[tuple[int, int], CaseSpans] = {}

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Note the case `span` belongs to, if any."""
        context, parent = span.context, span.parent
        if context is None:
            return
        with self._lock:
            owner = None if parent is None else self._owners.get((parent.trace_id, parent.span_id))
            if owner is None:
                owner = CASE.get()
            if owner is None or not owner.recording:
                return
            key = (context.trace_id, context.span_id)
            self._owners[key] = owner
            owner.owned.append(key)

    def on_end(self, span: ReadableSpan) -> None:
        """Give `span` to its case, unless the case has ended or holds `MAX_CASE_SPANS`."""
        context = span.context
        if context is None:
            return
        with self._lock:
            owner = self._owners.get((context.trace_id, context.span_id))
            if owner is None or not owner.recording:
                return
            if len(owner.finished) >= MAX_CASE_SPANS:
                owner.dropped += 1
            elif (node := span_node(span)) is not None:
                owner.finished.append(node)

    def close(self, case: CaseSpans) -> None:
        """Stop recording for `case`: spans ending later, or starting under them, are not kept."""
        with self._lock:
            case.recording = False
            for key in case.owned:
                self._owners.pop(key, None)
            case.owned.clear()
