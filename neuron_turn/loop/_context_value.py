"""Setting a context variable for the duration of a `with` block.

Why: `answering` and `checkpointing` hand the loop a callback this way, so
`layer0.Turn.execute` keeps its one argument.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

T = TypeVar("T")


@contextmanager
def set_within(variable: ContextVar[T], value: T) -> Iterator[None]:
    """Set `variable` to `value` inside the block; restore what it was on the way out."""
    token = variable.set(value)
    try:
        yield
    finally:
        variable.reset(token)
