"""Carrying layer0 errors across the engine: to `ApplicationError` and back.

A turn's error leaves the activity as an `ApplicationError` whose `type` is
the layer0 class name and whose one detail is a `FailureInfo`; whether
Temporal retries it follows the class (`RetryableError` only, with its
`retry_after` as the next delay). The workflow fails with the same kind,
adding where it happened; the client rebuilds the layer0 error from it and
raises what neuron-orch-local raises for the same failure.
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Final

from pydantic import BaseModel, ConfigDict, ValidationError
from temporalio.exceptions import ApplicationError, FailureError

import layer0
from layer0 import (
    APPEND_HISTORY,
    AgentNotFound,
    CustomEffect,
    DeleteMemoryEffect,
    DispatchFailed,
    HistoryAppend,
    Layer0Error,
    OrchError,
    PartialTurn,
    RetryableError,
    ToolExecutionError,
    TurnError,
    TurnInput,
    TurnOutput,
    WorkflowNotFound,
    WriteMemoryEffect,
)
from neuron_orch_local import MemoryNotAppliedError

__all__ = [
    "MAX_RETRY_AFTER_MS",
    "FailureInfo",
    "application_error",
    "first_application_error",
    "memory_not_applied",
    "orch_error",
    "retry_after_ms",
    "workflow_failure",
]

MAX_RETRY_AFTER_MS: Final = 24 * 60 * 60 * 1000
"""The longest wait a `retry_after` schedules (a day, as `neuron_turn`'s providers hold it)."""


class FailureInfo(BaseModel):
    """What a layer0 error carries besides its class and message."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    context: str | None = None
    """Where it happened: `agent 'a' failed in workflow w (route: a -> b)`."""
    retry_after_ms: int | None = None
    tool: str | None = None
    tool_message: str | None = None
    agent: str | None = None
    workflow: str | None = None
    kept: TurnOutput | None = None
    """The partial output of a turn that failed after its tools ran, carried out before the
    workflow failed (the caller's error gets it back as `partial`)."""
    continuation: TurnInput | None = None
    """The input that continues that turn, when dispatched later."""
    unapplied: TurnOutput | None = None
    """The output of a turn whose memory effects the store refused (its history append
    among them), for the caller's `MemoryNotAppliedError` to hand on with them: the turn
    ran, its exchange must not be lost with the error."""
    attempts: int | None = None
    """How many times the store was asked to apply them."""


def application_error(exc: BaseException) -> ApplicationError:
    """Return the `ApplicationError` an activity raises for `exc`.

    Layer0 errors other than `RetryableError` are not retried; anything from
    outside layer0 is taken for a worker fault and retried like a
    `RetryableError` (the retry policy bounds both).
    """
    info = FailureInfo()
    delay: timedelta | None = None
    after = retry_after_ms(exc.retry_after) if isinstance(exc, RetryableError) else None
    if after is not None:
        info = FailureInfo(retry_after_ms=after)
        delay = timedelta(milliseconds=after)
    elif isinstance(exc, ToolExecutionError):
        info = FailureInfo(tool=exc.tool, tool_message=exc.message)
    elif isinstance(exc, AgentNotFound):
        info = FailureInfo(agent=exc.agent)
    elif isinstance(exc, WorkflowNotFound):
        info = FailureInfo(workflow=exc.workflow)
    retryable = isinstance(exc, RetryableError) or not isinstance(exc, Layer0Error)
    return ApplicationError(
        str(exc) or type(exc).__name__,
        info,
        type=type(exc).__name__,
        non_retryable=not retryable,
        next_retry_delay=delay,
    )


def retry_after_ms(retry_after: object) -> int | None:
    """Return `retry_after` (seconds) as the milliseconds a retry waits: 0 to a day, or None.

    Any `RetryableError` may carry one, not only a provider's (which are bounded
    already): 1e300 must not overflow the timedelta Temporal schedules with (the
    conversion failed the turn with OverflowError, not its error), nor NaN or
    infinity fail rounding. Those two, or a value that is no number, say nothing
    (None: the policy's backoff); a negative one is no wait.
    """
    if isinstance(retry_after, bool) or not isinstance(retry_after, int | float):
        return None
    if math.isnan(retry_after) or math.isinf(retry_after):
        return None
    return round(min(max(float(retry_after), 0.0), MAX_RETRY_AFTER_MS / 1000) * 1000)


def first_application_error(exc: BaseException) -> ApplicationError | None:
    """Return the first `ApplicationError` in `exc`'s chain of Temporal causes, if any.

    The first, not the deepest: an activity's error carries the Python
    exception it was raised from as its cause, without our details.
    """
    current: BaseException | None = exc
    while current is not None:
        if isinstance(current, ApplicationError):
            return current
        current = current.cause if isinstance(current, FailureError) else current.__cause__
    return None


def workflow_failure(
    exc: BaseException,
    *,
    context: str | None = None,
    kept: tuple[TurnOutput, TurnInput] | None = None,
) -> ApplicationError:
    """Return the `ApplicationError` a workflow fails with for `exc`, never retried.

    An error that already carries a context (a child's) keeps it, so it
    propagates unchanged; otherwise `context` is added. `kept`: the part of
    the turn carried out before this one failed, and its continuation, for
    the caller's error to hand on as its `partial` (unless `exc` has its own).
    """
    if isinstance(exc, Layer0Error):
        exc = application_error(exc)
    inner = first_application_error(exc)
    if inner is None:
        # A timeout or cancellation: no ApplicationError, only Temporal's messages.
        kind, message, info = "DispatchFailed", _messages(exc), FailureInfo()
    else:
        kind, message, info = inner.type or "Exception", inner.message, _info(inner)
    if info.context is None and context is not None:
        info = info.model_copy(update={"context": context})
    if info.kept is None and kept is not None:
        info = info.model_copy(update={"kept": kept[0], "continuation": kept[1]})
    return ApplicationError(message, info, type=kind, non_retryable=True)


def memory_not_applied(exc: BaseException, output: TurnOutput) -> ApplicationError:
    """Return the failure of a workflow whose turn's memory effects the store refused.

    `exc` is the failure of the activity that applied them, retried as the policy
    allows; `output`, the turn's, goes with it (its effects are the ones refused:
    carried once), for the caller's `MemoryNotAppliedError`.
    """
    inner = first_application_error(exc)
    message = _messages(exc) if inner is None else inner.message
    attempts = None if inner is None else _info(inner).attempts
    info = FailureInfo(unapplied=output, attempts=attempts)
    return ApplicationError(message, info, type=MemoryNotAppliedError.__name__, non_retryable=True)


def orch_error(exc: BaseException) -> OrchError:
    """Return the layer0 error a client raises for a workflow that failed with `exc`.

    Orchestration errors come back as themselves; a turn's error comes back
    as `DispatchFailed` naming where it happened, the turn's error (rebuilt,
    `retry_after` included) chained as its `__cause__`, as neuron-orch-local does.
    """
    inner = first_application_error(exc)
    if inner is None:
        return DispatchFailed(_messages(exc))
    info, kind = _info(inner), inner.type or "Exception"
    if info.unapplied is not None:
        return MemoryNotAppliedError(
            f"{inner.message}; they are kept on this error (`effects`)",
            _memory_effects(info.unapplied),
            attempts=info.attempts or 1,
            output=info.unapplied,
        )
    error = _rebuild(kind, inner.message, info)
    if isinstance(error, OrchError):
        return error
    if isinstance(error, TurnError) and info.kept is not None and info.continuation is not None:
        error.partial = PartialTurn(info.kept, info.continuation)
    text = f"{kind}: {inner.message}"
    failed = DispatchFailed(f"{info.context}: {text}" if info.context else text)
    # An error from outside layer0 cannot be rebuilt; Temporal's own record of it is the cause.
    failed.__cause__ = error if error is not None else inner
    return failed


def _memory_effects(
    output: TurnOutput,
) -> list[WriteMemoryEffect | DeleteMemoryEffect | HistoryAppend]:
    """The memory effects of `output`, in order, as the workflow applies them."""
    effects: list[WriteMemoryEffect | DeleteMemoryEffect | HistoryAppend] = []
    for effect in output.effects:
        if isinstance(effect, WriteMemoryEffect | DeleteMemoryEffect):
            effects.append(effect)
        elif isinstance(effect, CustomEffect) and effect.effect_type == APPEND_HISTORY:
            effects.append(HistoryAppend.from_effect(effect))  # checked with the turn's output
    return effects


def _rebuild(kind: str, message: str, info: FailureInfo) -> Layer0Error | None:
    if kind == "RetryableError":
        after = None if info.retry_after_ms is None else info.retry_after_ms / 1000
        return RetryableError(message, retry_after=after)
    if kind == "ToolExecutionError" and info.tool is not None:
        return ToolExecutionError(info.tool, info.tool_message or message)
    if kind == "AgentNotFound" and info.agent is not None:
        return AgentNotFound(info.agent, message)
    if kind == "WorkflowNotFound" and info.workflow is not None:
        return WorkflowNotFound(info.workflow, message)
    cls = getattr(layer0, kind, None)
    if isinstance(cls, type) and issubclass(cls, Layer0Error):
        try:
            return cls(message)
        except TypeError:  # a class whose constructor wants structured fields
            return None
    return None


def _info(error: ApplicationError) -> FailureInfo:
    if not error.details:
        return FailureInfo()
    try:
        return FailureInfo.model_validate(error.details[0])
    except ValidationError:
        return FailureInfo()


def _messages(exc: BaseException) -> str:
    parts: list[str] = []
    current: BaseException | None = exc
    while current is not None:
        parts.append(current.message if isinstance(current, FailureError) else str(current))
        current = current.cause if isinstance(current, FailureError) else current.__cause__
    return ": ".join(part for part in parts if part)
