"""`RunSpans`, `DatasetSpan`, `CaseSpan`: the spans an evaluation run makes of its own (private).

These bases make none: they are what a run gets when neuron-tracing-otel is
not instrumenting, so neither running nor importing neuron-evals needs
OpenTelemetry. `_otel_run_spans` makes real ones (`_run_tracing.run_spans`
chooses): pydantic-evals' `evaluate {name}` span around the run, and a
`case: {case_name}` span per case, the parent of its task's spans and of an
`evaluator: {name}` span per evaluator.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext

from .case import Case
from .report import EvaluationReport
from .report_case import ReportCase

__all__ = ["CaseSpan", "DatasetSpan", "RunSpans"]


class CaseSpan:
    """One case's span, current while its task and evaluators run; this one records nothing."""

    def evaluator(self, name: str) -> AbstractContextManager[None]:
        """A span for the evaluator whose result is `name`, current while it runs.

        An exception leaving it is recorded on it, then propagates.
        """
        return nullcontext()

    def finish(self, case: ReportCase) -> None:
        """Record what the case found: its output and duration, results and errors."""


class DatasetSpan:
    """The whole run's span; this one records nothing."""

    def finish(self, report: EvaluationReport) -> None:
        """Record the run's totals."""


class RunSpans:
    """Where an evaluation run's own spans come from; this one makes none."""

    def dataset(
        self, name: str, *, task_name: str, dataset_name: str | None, cases: int, repeat: int
    ) -> AbstractContextManager[DatasetSpan]:
        """The span of the run `name`, current while its cases and report evaluators run."""
        return nullcontext(DatasetSpan())

    def case(self, name: str, case: Case, *, task_name: str) -> AbstractContextManager[CaseSpan]:
        """The span of `case` (run as `name`), current while its task and evaluators run.

        Started before the case records its task's spans, so it is not among them.
        """
        return nullcontext(CaseSpan())
