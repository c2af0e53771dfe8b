"""`OTelRunSpans`: an evaluation run's own spans, as OpenTelemetry spans (private).

Imported only once neuron-tracing-otel is instrumenting, so the OpenTelemetry
SDK is known to be installed. The spans go to the tracer provider the
plugin writes to, with pydantic-evals' names and attributes:

- `evaluate {name}`: the whole run (`name`, `task_name`, `dataset_name`,
  `n_cases`, `repeat`, `gen_ai.operation.name` `experiment`; at the end
  `assertion_pass_rate`, `pass_rate` and the report evaluators' `analyses`);
- `case: {case_name}`, one per case run, under it (`task_name`, `case_name`,
  `inputs`, `metadata`, `expected_output`; at the end `output`,
  `task_duration`, `attributes`, `metrics`, `assertions`, `scores`,
  `labels`), the parent of the spans its task makes and of
- `evaluator: {evaluator_name}`, one per evaluator.

A task or evaluator that raised makes its case span's status ERROR, with an
`exception` event each (`exception.type`, `exception.message`,
`exception.stacktrace`); an evaluator's own span records its exception too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

from opentelemetry import context, trace
from opentelemetry.trace import Span, Status, StatusCode, Tracer, TracerProvider
from opentelemetry.util.types import AttributeValue

from ._raised import stacktrace
from ._run_spans import CaseSpan, DatasetSpan, RunSpans
from ._span_attributes import attribute_value, bounded, bounded_tail, results_attribute
from .case import Case
from .report import EvaluationReport
from .report_case import ReportCase

__all__ = ["OTelRunSpans"]

_SCOPE: Final = "neuron_evals"


def _record_error(
    span: Span, error_type: str, message: str, trace: str | None, **more: AttributeValue
) -> None:
    """Mark `span` failed and add the `exception` event OpenTelemetry's conventions name.

    By hand rather than `record_exception`: the message may quote a model's
    answer, so it is bounded, the stack trace keeps its end, and a task's
    error is reported from the case's report, without its exception object.
    `trace` None (a report made by hand) leaves `exception.stacktrace` out.
    """
    details: dict[str, AttributeValue] = {
        "exception.type": error_type,
        "exception.message": bounded(message),
    }
    if trace is not None:
        details["exception.stacktrace"] = bounded_tail(trace)
    details.update(more)
    span.add_event("exception", details)
    span.set_attribute("error.type", error_type)
    span.set_status(Status(StatusCode.ERROR, bounded(f"{error_type}: {message}")))


@contextmanager
def _current(span: Span) -> Iterator[None]:
    """Make `span` current inside, then end it; an exception leaving it is recorded first."""
    token = context.attach(trace.set_span_in_context(span))
    try:
        yield
    except asyncio.CancelledError:
        span.set_status(Status(StatusCode.ERROR, "cancelled"))
        span.set_attribute("error.type", "cancelled")
        raise
    except BaseException as exc:
        _record_error(span, type(exc).__name__, str(exc), stacktrace(exc))
        raise
    finally:
        context.detach(token)
        span.end()


class _OTelCaseSpan(CaseSpan):
    """A case's `case: {case_name}` span, and its evaluators' spans."""

    def __init__(self, tracer: Tracer, span: Span) -> None:
        self._tracer = tracer
        self._span = span

    @contextmanager
    def evaluator(self, name: str) -> Iterator[None]:
        """An `evaluator: {name}` span under the case's, current while the evaluator runs."""
        span = self._tracer.start_span(
            bounded(f"evaluator: {name}"), attributes={"evaluator_name": bounded(name)}
        )
        with _current(span):
            yield

    def finish(self, case: ReportCase) -> None:
        """Set the output, task duration and results; record each error as an exception."""
        span = self._span
        if case.task_error is None:
            span.set_attribute("output", attribute_value(case.output))
        span.set_attributes(
            {
                "task_duration": case.duration,
                "attributes": attribute_value(case.attributes),
                "metrics": attribute_value(case.metrics),
                "assertions": results_attribute(case.assertions),
                "scores": results_attribute(case.scores),
                "labels": results_attribute(case.labels),
            }
        )
        error = case.task_error
        if error is not None:
            _record_error(span, error.error_type, error.message, error.stacktrace)
        for failure in case.evaluator_failures:
            _record_error(
                span,
                failure.error_type,
                failure.message,
                failure.stacktrace,
                evaluator_name=bounded(failure.name),
            )


class _OTelDatasetSpan(DatasetSpan):
    """A run's `evaluate {name}` span."""

    def __init__(self, span: Span) -> None:
        self._span = span

    def finish(self, report: EvaluationReport) -> None:
        """Set the pass rates, and the report evaluators' results when there are any."""
        summary = report.summary()
        totals: dict[str, AttributeValue] = {"pass_rate": summary.pass_rate}
        if summary.assertions_total:
            totals["assertion_pass_rate"] = summary.assertion_pass_rate
        if report.analyses:
            totals["analyses"] = results_attribute(report.analyses)
        self._span.set_attributes(totals)


class OTelRunSpans(RunSpans):
    """Makes a run's spans with the tracer provider neuron-tracing-otel writes to."""

    def __init__(self, tracer_provider: TracerProvider | None) -> None:
        """Make spans with `tracer_provider` (None: the global one)."""
        self._tracer = trace.get_tracer(_SCOPE, tracer_provider=tracer_provider)

    @contextmanager
    def dataset(
        self, name: str, *, task_name: str, dataset_name: str | None, cases: int, repeat: int
    ) -> Iterator[DatasetSpan]:
        """The `evaluate {name}` span, current while the run's cases and report evaluators run."""
        attributes: dict[str, AttributeValue] = {
            "name": bounded(name),
            "task_name": bounded(task_name),
            "n_cases": cases,
            "repeat": repeat,
            "gen_ai.operation.name": "experiment",
        }
        if dataset_name is not None:
            attributes["dataset_name"] = bounded(dataset_name)
        span = self._tracer.start_span(bounded(f"evaluate {name}"), attributes=attributes)
        with _current(span):
            yield _OTelDatasetSpan(span)

    @contextmanager
    def case(self, name: str, case: Case, *, task_name: str) -> Iterator[CaseSpan]:
        """The `case: {name}` span, current while the case's task and evaluators run."""
        attributes: dict[str, AttributeValue] = {
            "task_name": bounded(task_name),
            "case_name": bounded(name),
            "inputs": attribute_value(case.inputs),
            "metadata": attribute_value(dict(case.metadata)),
        }
        if case.expected_output is not None:
            attributes["expected_output"] = attribute_value(case.expected_output)
        span = self._tracer.start_span(bounded(f"case: {name}"), attributes=attributes)
        with _current(span):
            yield _OTelCaseSpan(self._tracer, span)
