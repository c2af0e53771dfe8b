"""`EvaluationReport`: what one run of a dataset found, case by case, with its totals."""

from __future__ import annotations

import json
import re
from typing import Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ._render import render_report
from .compare import ReportComparison, compare_cases
from .report_case import EvaluationResult, EvaluatorFailure, ReportCase
from .summary import ReportSummary, summarize

__all__ = ["EvaluationReport"]

_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


class EvaluationReport(BaseModel):
    """The results of `Dataset.evaluate`: one `ReportCase` per case, in the dataset's order."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    """The run's name (the task's, unless given)."""
    cases: list[ReportCase]
    duration: float = 0.0
    """Seconds the whole run took (wall clock; less than the sum when cases ran together)."""
    analyses: dict[str, EvaluationResult] = Field(default_factory=dict)
    """The report evaluators' results, by name."""
    analysis_failures: list[EvaluatorFailure] = Field(default_factory=list)
    """The report evaluators that raised."""

    @property
    def failures(self) -> list[ReportCase]:
        """The cases whose task raised."""
        return [case for case in self.cases if case.task_error is not None]

    def case(self, name: str) -> ReportCase:
        """Return the case named `name`.

        Raises:
            LookupError: no case has that name.
        """
        for case in self.cases:
            if case.name == name:
                return case
        raise LookupError(f"no case named {name!r} in report {self.name!r}")

    def summary(self) -> ReportSummary:
        """Return the totals and averages."""
        return summarize(self.cases)

    def runs(self, case_name: str) -> list[ReportCase]:
        """Return the runs of the dataset case `case_name` (one unless runs were repeated)."""
        return [case for case in self.cases if case.case_name == case_name]

    def case_summaries(self) -> dict[str, ReportSummary]:
        """Return per dataset case the totals and averages over its runs (for `repeat`)."""
        names = dict.fromkeys(case.case_name for case in self.cases)
        return {name: summarize(self.runs(name)) for name in names}

    def compare(self, baseline: EvaluationReport) -> ReportComparison:
        """Compare with `baseline` (an earlier run), case by case by name."""
        return compare_cases(self.cases, baseline.cases, self.analyses, baseline.analyses)

    def render(self, *, baseline: EvaluationReport | None = None, width: int = 40) -> str:
        """Return the report as a plain-text table, then the failures and the totals.

        With `baseline`, each cell shows the change from it (`pass -> FAIL`,
        `0.50 -> 0.80 (+0.30)`). Long text is cut to `width` characters with an
        ellipsis.
        """
        return render_report(
            self.name,
            self.cases,
            baseline=None if baseline is None else (baseline.name, baseline.cases),
            width=width,
            analyses=(self.analyses, self.analysis_failures),
            earlier_analyses=None if baseline is None else baseline.analyses,
        )

    def to_json(self, *, indent: int | None = 2) -> str:
        """Return the report as JSON, `summary()` under `"summary"`; costs are decimal strings."""
        data = self.model_dump(mode="json")
        for case in data["cases"]:
            # Fields of repeated runs only, so a single run's JSON is as it always was.
            for key in ("source_case", "run"):
                if case[key] is None:
                    del case[key]
            # Likewise for a task that recorded nothing (`set_eval_attribute`...).
            for key in ("attributes", "metrics"):
                if not case[key]:
                    del case[key]
        # Likewise without report evaluators.
        for key in ("analyses", "analysis_failures"):
            if not data[key]:
                del data[key]
        data["summary"] = self.summary().model_dump(mode="json")
        text = json.dumps(data, indent=indent, ensure_ascii=False)
        # A lone surrogate (a model's broken escape) is no UTF-8: as its JSON escape, the
        # text can be written to a file and reads back the same.
        return _LONE_SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)

    @classmethod
    def from_json(cls, text: str | bytes) -> EvaluationReport:
        """Read a report `to_json` wrote (its summary is computed again, not read).

        Raises:
            pydantic.ValidationError: the text is not such a report.
        """
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:  # not JSON, or nested past the parser
            error = str(exc) if isinstance(exc, ValueError) else "nested too deeply"
            raise ValidationError.from_exception_data(
                cls.__name__,
                [{"type": "json_invalid", "loc": (), "input": text, "ctx": {"error": error}}],
            ) from exc
        if isinstance(data, dict):
            data.pop("summary", None)
        return cls.model_validate(data)

    def __str__(self) -> str:
        return self.render()
