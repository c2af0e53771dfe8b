from __future__ import annotations

import pytest

from neuron_tool import (
    MCPBridgeError,
    ModelRetry,
    ToolCallError,
    ToolError,
    ToolInputError,
    ToolNotFoundError,
    ToolPermissionError,
    ToolRegistrationError,
    ToolTimeoutError,
)


@pytest.mark.parametrize(
    ("error", "builtin"),
    [
        (ToolNotFoundError("x", []), LookupError),
        (ToolInputError("x", "$", "bad"), ValueError),
        (ToolTimeoutError("x", 1.0), TimeoutError),
    ],
)
def test_errors_are_also_the_matching_builtin(error: ToolError, builtin: type[Exception]) -> None:
    assert isinstance(error, ToolError)
    assert isinstance(error, builtin)


@pytest.mark.parametrize(
    "error",
    [
        ToolRegistrationError("x", "why"),
        ToolCallError("x", "boom"),
        ToolPermissionError("x", "no"),
        MCPBridgeError("server gone"),
    ],
)
def test_every_error_derives_from_tool_error(error: Exception) -> None:
    assert isinstance(error, ToolError)


def test_model_retry_is_not_a_tool_error_so_except_tool_error_cannot_swallow_it() -> None:
    retry = ModelRetry("use ISO dates")
    assert not isinstance(retry, ToolError)
    assert retry.hint == "use ISO dates"
    assert str(retry) == "use ISO dates"


def test_not_found_message_lists_available_tools_and_suggests_a_near_miss() -> None:
    error = ToolNotFoundError("serch", ["search", "fetch"])
    assert error.name == "serch"
    assert error.available == ("search", "fetch")
    assert str(error) == "unknown tool 'serch' (did you mean 'search'?); available: search, fetch"


def test_not_found_message_says_when_no_tools_are_registered() -> None:
    assert str(ToolNotFoundError("x", [])) == "unknown tool 'x'; no tools are registered"


def test_input_error_carries_tool_path_and_message() -> None:
    error = ToolInputError("order", "$.items[2].name", "'name' is a required property")
    assert (error.tool, error.path, error.message) == (
        "order",
        "$.items[2].name",
        "'name' is a required property",
    )
    assert str(error) == (
        "invalid input for tool 'order' at $.items[2].name: 'name' is a required property"
    )


def test_structured_errors_name_the_tool_in_their_message() -> None:
    assert str(ToolRegistrationError("a", "duplicate")) == "cannot register tool 'a': duplicate"
    assert str(ToolCallError("a", "ValueError: boom")) == "tool 'a' failed: ValueError: boom"
    assert str(ToolTimeoutError("a", 2.5)) == "tool 'a' timed out after 2.5 s"
    assert str(ToolPermissionError("a", "read-only session")) == (
        "permission denied for tool 'a': read-only session"
    )
