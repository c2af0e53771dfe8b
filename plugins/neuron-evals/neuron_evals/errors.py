"""The errors of neuron-evals.

```
EvalsError
 ├── DuplicateCaseError      two cases of a dataset share a name
 ├── DatasetFileError        a dataset file cannot be read: names the file, the case, the field
 ├── UnknownEvaluatorError   a name no registered evaluator has
 ├── EvaluatorSpecError      an evaluator that cannot be written to a dataset file
 ├── JudgeError              the judge's turn ended without a verdict
 ├── SpanQueryError          a span query that cannot be matched (a bad regex, too deep...)
 ├── SpanQueryLimitError     a span query took more steps than allowed on a case's spans
 ├── SpanTreeRecordingError  a case's spans were not recorded, and an evaluator needs them
 └── EvalRecordError         a task recorded an attribute or metric that is no JSON or number
```

A task or an evaluator that raises is not an error of the run: the report
records it for its case and the other cases go on.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "DatasetFileError",
    "DuplicateCaseError",
    "EvalRecordError",
    "EvalsError",
    "EvaluatorSpecError",
    "JudgeError",
    "SpanQueryError",
    "SpanQueryLimitError",
    "SpanTreeRecordingError",
    "UnknownEvaluatorError",
]


class EvalsError(Exception):
    """Base of neuron-evals' errors."""


class DuplicateCaseError(EvalsError, ValueError):
    """Two cases of one dataset share a name (`name` is the name)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"two cases are named {name!r}; case names must be unique")
        self.name = name


class DatasetFileError(EvalsError, ValueError):
    """A dataset file cannot be read or written; nothing of it is used.

    `path` is the file, `case` the case's name (or `#n` when it has none, None
    when the error is outside any case), `field` the field within it.
    """

    def __init__(
        self,
        path: Path,
        message: str,
        *,
        case: str | None = None,
        field: str | None = None,
    ) -> None:
        where = [str(path)]
        if case is not None:
            where.append(f"case {case!r}")
        if field is not None:
            where.append(f"field {field!r}")
        super().__init__(f"{', '.join(where)}: {message}")
        self.path = path
        self.case = case
        self.field = field


class UnknownEvaluatorError(EvalsError, LookupError):
    """No evaluator of that name is registered (`available` lists those that are)."""

    def __init__(self, name: str, available: Sequence[str]) -> None:
        super().__init__(f"unknown evaluator {name!r}; available: {', '.join(available)}")
        self.name = name
        self.available = tuple(available)


class EvaluatorSpecError(EvalsError, ValueError):
    """An evaluator has no form in a dataset file (it holds a Python type or function)."""


class JudgeError(EvalsError):
    """The judge's turn ended without a verdict (a limit, an invalid answer)."""


class SpanQueryError(EvalsError, ValueError):
    """A span query cannot be matched: `path` names where in it (`some_child_has.or_[1]`).

    A regex that does not compile, an unknown condition, a value of the wrong
    type, `or_` beside other conditions, an empty `or_` or `and_`, or nesting
    deeper than `neuron_evals.span_query.MAX_QUERY_DEPTH`. Raised when the query
    is given (`HasMatchingSpan(...)`, `Dataset.from_file`), not when it runs.
    """

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"span query{f' at {path}' if path else ''}: {message}")
        self.path = path


class SpanQueryLimitError(EvalsError, RuntimeError):
    """A span query took more than `limit` steps on one case's spans, and was stopped.

    Why a limit: nested descendant and ancestor conditions over a large or deep
    tree cost a power of its size; a run must not hang on one query.
    """

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"the span query took more than {limit} steps on this case's spans; "
            "simplify it (fewer nested descendant or ancestor conditions)"
        )
        self.limit = limit


class SpanTreeRecordingError(EvalsError, RuntimeError):
    """The case's spans were not recorded, so an evaluator that reads them cannot judge it.

    `reason` says why: neuron-tracing-otel is not installed, or not instrumenting
    when the case ran, or writes to a tracer provider that takes no span
    processor. Raised by `EvaluatorContext.span_tree`; the report shows it as
    that evaluator's failure, never as a failed assertion.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(f"no spans were recorded for this case: {reason}")
        self.reason = reason


class EvalRecordError(EvalsError, ValueError):
    """A task recorded what a report cannot hold: `kind` `attribute` or `metric`, its `name`.

    Raised by `set_eval_attribute` (a name that is no string, a value that is
    not JSON) and `increment_eval_metric` (an amount that is no int or float,
    a bool, a value that is not finite) where the task calls them, so the
    case records it as its task's error, as any exception of the task.
    Why so strict: a report is kept as JSON and compared with later ones; a
    value JSON cannot hold would be changed or lost there, silently.
    """

    def __init__(self, kind: str, name: object, message: str) -> None:
        super().__init__(f"eval {kind} {name!r}: {message}")
        self.kind = kind
        self.name = name
