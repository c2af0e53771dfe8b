"""neuron-evals: evaluate agents built here, as pydantic-evals does for pydantic-ai.

A `Dataset` of `Case`s runs against any `layer0.Turn` (or an async function);
evaluators judge each answer (`EqualsExpected`, `Contains`, `MaxCost`,
`ToolCalled`, `LLMJudge`, `@evaluator` functions...); the `EvaluationReport`
shows per case the answer, its assertions, scores and labels, and the turn's
cost, tokens, exit reason and duration, with totals, as a plain-text table
(`render()`), JSON (`to_json()`) or against a baseline (`compare()`).
Cases can run several times (`repeat=`); report evaluators (`PassRate`,
`Accuracy`, `PrecisionRecall`...) judge the whole report, the dataset's own and
those given to one `evaluate(report_evaluators=...)`.
Evaluators may read the OpenTelemetry spans the task made (`ctx.span_tree`,
`HasMatchingSpan` with a `SpanQuery`), recorded per case while
neuron-tracing-otel is instrumenting; a run then makes spans of its own too
(`evaluate {name}`, and `case: {case_name}` over each case's task), as
pydantic-evals does.
A task records facts and counts of its case with `set_eval_attribute` and
`increment_eval_metric`, as in pydantic-evals: the report, the evaluators and
the case's span see them.
Datasets live in YAML or JSON files (`Dataset.from_file`, `to_file`), described
by a JSON Schema (`Dataset.json_schema`) that editors check them with.
"""

from ._case_spans import MAX_CASE_SPANS
from .case import Case
from .compare import CaseChange, ReportComparison
from .context import EvaluatorContext
from .dataset import Dataset
from .errors import (
    DatasetFileError,
    DuplicateCaseError,
    EvalRecordError,
    EvalsError,
    EvaluatorSpecError,
    JudgeError,
    SpanQueryError,
    SpanQueryLimitError,
    SpanTreeRecordingError,
    UnknownEvaluatorError,
)
from .evaluator import (
    EvaluationReason,
    EvaluationScalar,
    Evaluator,
    EvaluatorOutput,
    FunctionEvaluator,
    evaluator,
)
from .evaluators import (
    Contains,
    Equals,
    EqualsExpected,
    ExitReasonIs,
    HasMatchingSpan,
    IsInstance,
    MaxCost,
    MaxDuration,
    ToolCalled,
    ValidatesAs,
)
from .judge import JUDGE_SYSTEM, JudgeVerdict, LLMJudge
from .report import EvaluationReport
from .report_case import EvaluationResult, EvaluatorFailure, MetricValue, ReportCase, TaskError
from .report_evaluator import ReportEvaluator, ReportEvaluatorContext
from .report_evaluators import Accuracy, PassRate, PrecisionRecall
from .span_query import MAX_QUERY_DEPTH, QUERY_STEP_LIMIT, SpanQuery
from .span_tree import AttributeValue, SpanNode, SpanPredicate, SpanTree
from .summary import ReportSummary
from .task_record import increment_eval_metric, set_eval_attribute

__all__ = [
    "JUDGE_SYSTEM",
    "MAX_CASE_SPANS",
    "MAX_QUERY_DEPTH",
    "QUERY_STEP_LIMIT",
    "Accuracy",
    "AttributeValue",
    "Case",
    "CaseChange",
    "Contains",
    "Dataset",
    "DatasetFileError",
    "DuplicateCaseError",
    "Equals",
    "EqualsExpected",
    "EvalRecordError",
    "EvalsError",
    "EvaluationReason",
    "EvaluationReport",
    "EvaluationResult",
    "EvaluationScalar",
    "Evaluator",
    "EvaluatorContext",
    "EvaluatorFailure",
    "EvaluatorOutput",
    "EvaluatorSpecError",
    "ExitReasonIs",
    "FunctionEvaluator",
    "HasMatchingSpan",
    "IsInstance",
    "JudgeError",
    "JudgeVerdict",
    "LLMJudge",
    "MaxCost",
    "MaxDuration",
    "MetricValue",
    "PassRate",
    "PrecisionRecall",
    "ReportCase",
    "ReportComparison",
    "ReportEvaluator",
    "ReportEvaluatorContext",
    "ReportSummary",
    "SpanNode",
    "SpanPredicate",
    "SpanQuery",
    "SpanQueryError",
    "SpanQueryLimitError",
    "SpanTree",
    "SpanTreeRecordingError",
    "TaskError",
    "ToolCalled",
    "UnknownEvaluatorError",
    "ValidatesAs",
    "evaluator",
    "increment_eval_metric",
    "set_eval_attribute",
]
