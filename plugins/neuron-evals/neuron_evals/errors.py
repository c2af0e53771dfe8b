"""The errors of neuron-evals.

```
EvalsError
 ├── DuplicateCaseError      two cases of a dataset share a name
 ├── DatasetFileError        a dataset file cannot be read: names the file, the case, the field
 ├── UnknownEvaluatorError   a name no registered evaluator has
 ├── EvaluatorSpecError      an evaluator that cannot be written to a dataset file
 └── JudgeError              the judge's turn ended without a verdict
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
    "EvalsError",
    "EvaluatorSpecError",
    "JudgeError",
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
