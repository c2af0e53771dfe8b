"""`set_eval_attribute`, `increment_eval_metric`: what a task records about its case.

pydantic-evals' own two functions (`pydantic_evals.dataset.set_eval_attribute`,
`increment_eval_metric`). Each case's task runs with a `TaskRecord` of its own
in a context variable: cases that run at once never see each other's, and the
record reaches code the task awaits, the asyncio tasks it starts and
`asyncio.to_thread` (they copy the context), not a `threading.Thread` nor
`loop.run_in_executor` (they start from an empty one; run the function through
`contextvars.copy_context().run` there). The record is the task's alone: it is
no longer current while the case's evaluators run, and after the case's task
returned a call from anything it left running records nothing.
"""

from __future__ import annotations

import math
import reprlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Final

from pydantic import JsonValue

from ._strict_json import json_copy
from .errors import EvalRecordError

__all__ = ["TaskRecord", "increment_eval_metric", "recording", "set_eval_attribute"]


class TaskRecord:
    """The attributes and metrics one case's task recorded so far."""

    def __init__(self) -> None:
        """Start empty."""
        # Code the task runs through asyncio.to_thread records too, from other threads.
        self._lock = threading.Lock()
        self._attributes: dict[str, JsonValue] = {}
        self._metrics: dict[str, int | float] = {}

    def attributes(self) -> dict[str, JsonValue]:
        """A copy of the attributes recorded, by name, in the order first set."""
        with self._lock:
            return dict(self._attributes)

    def metrics(self) -> dict[str, int | float]:
        """A copy of the metrics recorded, by name, in the order first incremented."""
        with self._lock:
            return dict(self._metrics)

    def set_attribute(self, name: object, value: object) -> None:
        """Record a copy of `value` as the attribute `name`, replacing any earlier one.

        Raises:
            EvalRecordError: `name` is no str, or `value` is not JSON (it says where).
        """
        if not isinstance(name, str):
            raise EvalRecordError("attribute", name, _not_str(name))
        try:
            copied = json_copy(value)
        except ValueError as exc:
            raise EvalRecordError("attribute", name, str(exc)) from None
        with self._lock:
            self._attributes[name] = copied

    def increment_metric(self, name: object, amount: object) -> None:
        """Add `amount` to the metric `name`, from 0.

        A metric never set, incremented by 0, stays unset, as pydantic-evals
        has it: a metric is shown once something counted.

        Raises:
            EvalRecordError: `name` is no str, `amount` no int or float (a bool
                is refused: it is no amount), or it or the sum is not finite.
        """
        if not isinstance(name, str):
            raise EvalRecordError("metric", name, _not_str(name))
        if isinstance(amount, bool) or not isinstance(amount, int | float):
            shown = reprlib.repr(amount)
            raise EvalRecordError(
                "metric",
                name,
                f"the amount {shown} is of type {type(amount).__name__}, not int or float",
            )
        if not _finite(amount):
            shown = reprlib.repr(amount)
            raise EvalRecordError("metric", name, f"the amount {shown} is not finite")
        with self._lock:
            total = self._metrics.get(name, 0) + amount
            if not _finite(total):
                raise EvalRecordError(
                    "metric",
                    name,
                    f"adding {reprlib.repr(amount)} to {self._metrics[name]!r} overflows",
                )
            if name in self._metrics or total != 0:
                self._metrics[name] = total


def _finite(amount: int | float) -> bool:
    """Whether `amount` is finite as a float (an int past 1.8e308 is not: means overflow)."""
    try:
        return math.isfinite(amount)
    except OverflowError:
        return False


def _not_str(name: object) -> str:
    return f"the name {reprlib.repr(name)} is of type {type(name).__name__}, not str"


_CURRENT: Final[ContextVar[TaskRecord | None]] = ContextVar(
    "neuron_evals_task_record", default=None
)


@contextmanager
def recording() -> Iterator[TaskRecord]:
    """A fresh `TaskRecord`, current inside: where the task's calls of this module record.

    A record already current (a task that evaluates a dataset itself) is
    current again on the way out.
    """
    record = TaskRecord()
    token = _CURRENT.set(record)
    try:
        yield record
    finally:
        _CURRENT.reset(token)


def set_eval_attribute(name: str, value: object) -> None:
    """Record `value` as the attribute `name` of the case whose task is running.

    As pydantic-evals' `set_eval_attribute`: any fact of the run worth keeping
    beside its answer (the prompt version used, a retrieved document's id).
    The case's report keeps a copy (`ReportCase.attributes`), its evaluators
    read it (`EvaluatorContext.attributes`), and its `case:` span carries it;
    a second call with a name replaces the first value.
    The value must be JSON as it is: None, a bool, an int, a finite float, a
    str, or lists and dicts (str keys) of those; a report is kept as JSON.

    Outside a case's task (no case running, an evaluator, a thread that did
    not copy the context: see the module's docs) it does nothing and checks
    nothing, as pydantic-evals': code that records for evals costs nothing
    when it runs elsewhere.

    Raises:
        EvalRecordError: in a case's task, `name` is no str or `value` is not
            JSON (a set, a tuple, NaN, an int key...); the message says where
            in it. The case then records it as its task's error.
    """
    record = _CURRENT.get()
    if record is not None:
        record.set_attribute(name, value)


def increment_eval_metric(name: str, amount: int | float) -> None:
    """Add `amount` to the metric `name` of the case whose task is running (from 0).

    As pydantic-evals' `increment_eval_metric`: a count or measure of the run
    (model retries, documents retrieved, characters read). The case's report
    keeps the sums (`ReportCase.metrics`; the summary their means), its
    evaluators read them (`EvaluatorContext.metrics`), and its `case:` span
    carries them. Int amounts sum to an int; one float makes the sum a float.
    A metric never incremented but by 0 is not recorded, as pydantic-evals'.
    With the case's spans recorded, its model requests' `requests`, tokens and
    `cost` are added once the task returned, as pydantic-evals adds them: a
    task's own amount under one of those names is summed with them.

    Outside a case's task it does nothing and checks nothing, as
    `set_eval_attribute` (see there).

    Raises:
        EvalRecordError: in a case's task, `name` is no str, `amount` is no
            int or float (a bool too), or it or the sum is not finite. The case
            then records it as its task's error.
    """
    record = _CURRENT.get()
    if record is not None:
        record.increment_metric(name, amount)
