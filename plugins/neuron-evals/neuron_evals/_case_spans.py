"""One case's spans as they finish, and the case whose task runs in this context (private).

Shared by the capture (`_span_capture`) and the span processor
(`_span_processor`), which imports the OpenTelemetry SDK only once
neuron-tracing-otel is known to be installed.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import replace
from typing import Final

from .errors import SpanTreeRecordingError
from .span_tree import SpanNode, SpanTree

__all__ = ["CASE", "MAX_CASE_SPANS", "CaseSpans"]

MAX_CASE_SPANS: Final = 10_000
"""The spans kept per case; past them a case's spans are counted (`SpanTree.dropped`), not kept.

Why a bound: a task looping on tool calls, or a model's long answers
captured as attributes, must not hold unbounded memory until its case ends.
"""

CASE: ContextVar[CaseSpans | None] = ContextVar("neuron_evals_case_spans", default=None)
"""The case whose task runs in this context, if any."""


class CaseSpans:
    """The spans one case finished so far, or why it records none."""

    def __init__(self, error: SpanTreeRecordingError | None = None) -> None:
        """Record spans; with `error`, record none and say why."""
        self.error = error
        self.recording = error is None
        self.finished: list[SpanNode] = []
        self.dropped = 0
        self.owned: list[tuple[int, int]] = []
        """The (trace id, span id) of the case's spans, forgotten when it ends."""

    def result(self) -> SpanTree | SpanTreeRecordingError:
        """The case's spans as a tree, or why they were not recorded."""
        if self.error is not None:
            return self.error
        # Fresh nodes: a tree links the nodes it is given, so two trees never share one.
        return SpanTree((replace(node) for node in self.finished), dropped=self.dropped)
