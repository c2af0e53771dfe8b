"""`TurnPolicy`: timeouts and retries of the activities a dispatch runs.

It travels inside every workflow's input (children inherit their parent's),
so the policy is fixed when a dispatch starts and a replay sees the same
one. Durations are integer milliseconds and the backoff a decimal, as on the
layer0 wire: nothing here is a float.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from neuron_orch_local import Milliseconds, RetryPolicy

__all__ = ["TurnPolicy"]

_Ms = Milliseconds


class TurnPolicy(RetryPolicy):
    """How long a turn may take, how a dead worker is noticed, and how failures are retried.

    A `neuron_orch_local.RetryPolicy` (the retry policy type of every
    orchestrator) with Temporal's timeouts added: `RetryableError` is retried
    up to `max_attempts` times in all, waiting the provider's `retry_after`
    when it gave one, else `initial_interval` growing by `backoff` up to
    `max_interval`; `max_total` bounds all attempts of a turn together
    (Temporal's schedule-to-close timeout). Temporal adds no `jitter` of its
    own choosing, so that field is not used here. Any other `layer0` error
    (`NonRetryableError`, `ModelError`, ...) fails the dispatch at once; an
    exception from outside layer0 is taken for a worker fault and retried.
    """

    start_to_close: _Ms = 10 * 60 * 1000
    """The longest one attempt of a turn may run (above your slowest model call)."""
    heartbeat: _Ms = 30 * 1000
    """A turn whose worker stops heartbeating for this long is retried elsewhere."""
    max_attempts: Annotated[int, Field(ge=1)] = 5
    """Attempts of a turn in all, the first included."""
    effect_timeout: _Ms = 60 * 1000
    """The longest one attempt of a memory or custom effect activity may run."""
    signal_timeout: _Ms = 24 * 60 * 60 * 1000
    """How long a turn that asked to `await_signal` waits for one before its workflow ends."""
    approval_timeout: _Ms = 24 * 60 * 60 * 1000
    """How long a turn paused for approval waits for decisions before its calls are denied."""
    max_depth: Annotated[int, Field(ge=0)] = 8
    """How many delegations and handoffs deep one dispatch may go."""
    max_concurrent_delegations: Annotated[int, Field(ge=1)] = 1000
    """The most of a turn's declared delegations run at once as child workflows; the rest
    wait for those to end. Temporal refuses a workflow more pending children than its
    `limit.numPendingChildExecutions.error` (2,000 by default), again on every retry, so
    the workflow would never go on: keep this under that limit."""
    answer_delegations: bool = True
    """A `NeuronTurn`'s `delegate` calls wait for the other agent, whose answer is the
    tool's result (see `neuron_orch_local.delegation`); False: they are only declared,
    and run after the turn in child workflows."""
