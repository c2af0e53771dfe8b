"""`TurnPolicy`: timeouts and retries of the activities a dispatch runs.

It travels inside every workflow's input (children inherit their parent's),
so the policy is fixed when a dispatch starts and a replay sees the same
one. Durations are integer milliseconds and the backoff a decimal, as on the
layer0 wire: nothing here is a float.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["TurnPolicy"]

_Ms = Annotated[int, Field(ge=1)]


class TurnPolicy(BaseModel):
    """How long a turn may take, how a dead worker is noticed, and how failures are retried.

    `RetryableError` is retried up to `max_attempts` times in all, waiting
    the provider's `retry_after` when it gave one, else `initial_interval`
    growing by `backoff` up to `max_interval`. Any other `layer0` error
    (`NonRetryableError`, `ModelError`, ...) fails the dispatch at once; an
    exception from outside layer0 is taken for a worker fault and retried.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    start_to_close: _Ms = 10 * 60 * 1000
    """The longest one attempt of a turn may run (above your slowest model call)."""
    heartbeat: _Ms = 30 * 1000
    """A turn whose worker stops heartbeating for this long is retried elsewhere."""
    max_attempts: Annotated[int, Field(ge=1)] = 5
    """Attempts of a turn in all, the first included."""
    initial_interval: _Ms = 1000
    """The wait before the first retry, when the error gave no `retry_after`."""
    backoff: Annotated[Decimal, Field(ge=1)] = Decimal(2)
    """How much each wait grows over the previous one."""
    max_interval: _Ms = 60 * 1000
    """The longest wait between attempts."""
    effect_timeout: _Ms = 60 * 1000
    """The longest one attempt of a memory or custom effect activity may run."""
    signal_timeout: _Ms = 24 * 60 * 60 * 1000
    """How long a turn that asked to `await_signal` waits for one before its workflow ends."""
    max_depth: Annotated[int, Field(ge=0)] = 8
    """How many delegations and handoffs deep one dispatch may go."""
