"""`RetryPolicy`: how an orchestrator retries a turn that raised `layer0.RetryableError`.

One type for every orchestrator: `LocalOrchestrator` takes it as `retry`,
and neuron-orch-temporal's `TurnPolicy` is one (a subclass adding its
timeouts), so a policy written for one runs on the other. Durations are
integer milliseconds and the factors decimals, as on the layer0 wire: the
policy travels inside Temporal workflow inputs, where a float would not
replay exactly.

The waits: the provider's `retry_after` when it gave one (exactly; a
provider asking for more than `max_interval` is not retried, since an
earlier attempt would only be refused again), else `initial_interval`
growing by `backoff` per retry up to `max_interval`, less a random part of
up to `jitter` of it (so that callers refused together do not come back
together). No wait may end past `max_total` from the first attempt.
"""

from __future__ import annotations

import asyncio
import time
from decimal import Decimal
from typing import Annotated, Final, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["MAX_MILLISECONDS", "Clock", "Milliseconds", "RetryPolicy", "SystemClock"]

MAX_MILLISECONDS: Final = 100 * 365 * 24 * 60 * 60 * 1000
"""The longest duration a policy takes, about a hundred years.

Why: a longer one overflows the `timedelta` a retry timer or a Temporal
workflow builds from it (its task then fails for ever); Temporal itself caps
timeouts at a hundred years.
"""

Milliseconds = Annotated[int, Field(ge=1, le=MAX_MILLISECONDS)]
"""A policy's duration: whole milliseconds, 1 up to `MAX_MILLISECONDS`."""

_Ms = Milliseconds


class RetryPolicy(BaseModel):
    """Attempts, waits and a total deadline for retrying `RetryableError`.

    Only `RetryableError` is retried; other errors end the attempts at once
    (and, with a fallback chain, move on to the next model).
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    max_attempts: Annotated[int, Field(ge=1)] = 3
    """Attempts in all, the first included (1: never retry)."""
    initial_interval: _Ms = 1000
    """The wait before the first retry, when the error gave no `retry_after`."""
    backoff: Annotated[Decimal, Field(ge=1)] = Decimal(2)
    """How much each wait grows over the previous one."""
    max_interval: _Ms = 60 * 1000
    """The longest wait between attempts; a `retry_after` above it is not waited for."""
    max_total: _Ms | None = None
    """No attempt starts later than this after the first one started (None: no deadline)."""
    jitter: Annotated[Decimal, Field(ge=0, le=1)] = Decimal("0.2")
    """The largest fraction taken off a computed wait at random (never off a `retry_after`)."""

    def wait(self, retry: int, retry_after: float | None, randomness: float) -> float | None:
        """Return the seconds to wait before retry number `retry` (1 for the first), or None.

        `randomness` is a number in [0, 1) that picks the jitter. None means
        the provider asked for a longer wait than `max_interval`: do not retry.
        """
        if retry_after is not None:
            return max(retry_after, 0.0) if retry_after * 1000 <= self.max_interval else None
        grown = Decimal(self.initial_interval) * self.backoff ** (retry - 1)
        capped = min(grown, Decimal(self.max_interval))
        jittered = capped * (1 - self.jitter * Decimal(str(randomness)))
        return float(jittered) / 1000

    def next_wait(
        self, attempt: int, retry_after: float | None, randomness: float, elapsed: float
    ) -> float | None:
        """Seconds to wait after attempt number `attempt` failed, or None to try no more.

        None when the attempts are spent, the wait is not taken (`wait`), or
        it would end past `max_total` (`elapsed`: seconds since the first attempt).
        """
        if attempt >= self.max_attempts:
            return None
        wait = self.wait(attempt, retry_after, randomness)
        if wait is None:
            return None
        if self.max_total is not None and (elapsed + wait) * 1000 > self.max_total:
            return None
        return wait


@runtime_checkable
class Clock(Protocol):
    """The time source retries wait on; tests give a fake one, so nothing really sleeps."""

    def now(self) -> float:
        """Seconds on a monotonic scale."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait `seconds` without blocking the event loop."""
        ...


class SystemClock:
    """The real clock: `time.monotonic` and `asyncio.sleep`."""

    def now(self) -> float:
        """Seconds on the monotonic clock."""
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        """`asyncio.sleep(seconds)`."""
        await asyncio.sleep(seconds)
