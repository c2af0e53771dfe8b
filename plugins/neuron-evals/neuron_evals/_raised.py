"""`Raised`: an exception as a report keeps it, its stack trace formatted when caught (private)."""

from __future__ import annotations

import traceback
from dataclasses import dataclass

from ._span_attributes import bounded_tail

__all__ = ["Raised", "stacktrace"]


def stacktrace(error: BaseException) -> str:
    """`error`'s traceback as Python prints it, chained exceptions too; its end when long."""
    return bounded_tail("".join(traceback.format_exception(error)))


@dataclass(frozen=True)
class Raised:
    """A task's or evaluator's exception: its class name, message and stack trace.

    Why not the exception itself: its traceback holds every frame, and their
    locals, alive until the report is made; text is all a report and a span keep.
    """

    error_type: str
    message: str
    stacktrace: str

    @classmethod
    def of(cls, error: BaseException) -> Raised:
        """`error` as text, now: call it where the exception is caught."""
        return cls(type(error).__name__, _message(error), stacktrace(error))


def _message(error: BaseException) -> str:
    """`str(error)`; an exception whose `__str__` raises in turn must not end the run."""
    try:
        return str(error)
    except Exception as failed:
        return f"<its message could not be made: {type(failed).__name__}>"
