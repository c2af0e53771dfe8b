"""Layer0 errors across the engine: to `ApplicationError` on the worker, back on the client."""

from __future__ import annotations

from datetime import timedelta

import pytest
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    RetryState,
    TimeoutError,
    TimeoutType,
)

from layer0 import (
    AgentNotFound,
    ContextAssemblyError,
    DispatchFailed,
    HookError,
    ModelError,
    NonRetryableError,
    RetryableError,
    SignalFailed,
    ToolExecutionError,
    WorkflowNotFound,
)
from neuron_orch_temporal._failures import application_error, orch_error, workflow_failure


def test_a_retryable_error_is_retried_after_its_retry_after() -> None:
    error = application_error(RetryableError("rate limited", retry_after=1.5))
    assert error.type == "RetryableError"
    assert not error.non_retryable
    assert error.next_retry_delay == timedelta(seconds=1.5)


def test_a_retryable_error_without_retry_after_leaves_the_delay_to_the_policy() -> None:
    error = application_error(RetryableError("busy"))
    assert not error.non_retryable
    assert error.next_retry_delay is None


@pytest.mark.parametrize(
    "exc",
    [
        NonRetryableError("bad key"),
        ModelError("filtered"),
        ContextAssemblyError("bad history"),
        ToolExecutionError("t", "boom"),
        HookError("hook"),
        AgentNotFound("a"),
    ],
)
def test_other_layer0_errors_are_not_retried(exc: Exception) -> None:
    error = application_error(exc)
    assert error.non_retryable
    assert error.type == type(exc).__name__


def test_a_fault_from_outside_layer0_is_retried() -> None:
    error = application_error(ConnectionResetError("peer went away"))
    assert not error.non_retryable
    assert error.type == "ConnectionResetError"


def failed_workflow(exc: Exception, *, context: str | None = None) -> ApplicationError:
    """What the client sees: the workflow's failure for an activity that raised `exc`."""
    activity = ActivityError(
        "activity failed",
        scheduled_event_id=1,
        started_event_id=2,
        identity="test",
        activity_type="neuron.execute_turn",
        activity_id="1",
        retry_state=RetryState.NON_RETRYABLE_FAILURE,
    )
    activity.__cause__ = application_error(exc)
    return workflow_failure(activity, context=context)


def test_a_turn_error_comes_back_as_dispatch_failed_with_the_error_rebuilt() -> None:
    failure = failed_workflow(
        RetryableError("busy", retry_after=2.5), context="agent 'a' failed in workflow w (route: a)"
    )
    error = orch_error(failure)
    assert type(error) is DispatchFailed
    assert str(error) == "agent 'a' failed in workflow w (route: a): RetryableError: busy"
    assert isinstance(error.__cause__, RetryableError)
    assert error.__cause__.retry_after == 2.5


def test_a_tool_error_keeps_its_fields() -> None:
    error = orch_error(failed_workflow(ToolExecutionError("search", "timed out")))
    assert isinstance(error.__cause__, ToolExecutionError)
    assert (error.__cause__.tool, error.__cause__.message) == ("search", "timed out")


@pytest.mark.parametrize(
    "exc",
    [
        AgentNotFound("ghost", "no agent named 'ghost'"),
        WorkflowNotFound("w", "no such workflow"),
        SignalFailed("finished"),
        DispatchFailed("too deep"),
    ],
)
def test_orchestration_errors_come_back_as_themselves(exc: Exception) -> None:
    error = orch_error(failed_workflow(exc, context="ignored for these"))
    assert type(error) is type(exc)
    assert str(error) == str(exc)
    if isinstance(exc, AgentNotFound):
        assert isinstance(error, AgentNotFound) and error.agent == "ghost"
    if isinstance(exc, WorkflowNotFound):
        assert isinstance(error, WorkflowNotFound) and error.workflow == "w"


def test_a_childs_failure_keeps_its_own_context() -> None:
    child = failed_workflow(
        ModelError("truncated"), context="agent 'b' failed in workflow w/t0/d0-b"
    )
    parent = workflow_failure(child, context="agent 'a' failed in workflow w")
    assert (
        str(orch_error(parent)) == "agent 'b' failed in workflow w/t0/d0-b: ModelError: truncated"
    )


def test_a_timeout_without_application_error_is_dispatch_failed() -> None:
    timeout = TimeoutError(
        "activity timeout", type=TimeoutType.HEARTBEAT, last_heartbeat_details=[]
    )
    error = orch_error(workflow_failure(timeout, context="agent 'a' failed in workflow w"))
    assert type(error) is DispatchFailed
    assert "activity timeout" in str(error)
