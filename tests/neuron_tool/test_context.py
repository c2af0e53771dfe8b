"""`RunContext`: tools that ask for it by annotation get it; the others see no change."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import JsonValue

from layer0 import usd
from neuron_tool import (
    ContextTool,
    FunctionTool,
    Next,
    RunContext,
    RunUsage,
    ToolCall,
    ToolContextError,
    ToolRegistrationError,
    ToolRegistry,
    tool,
)


@dataclass
class Database:
    rows: dict[str, str]


@tool
async def lookup(context: RunContext[Database], key: str) -> str | None:
    """Look a key up in the caller's database.

    Args:
        context: The run.
        key: What to look up.
    """
    return context.deps.rows.get(key)


@tool
async def whose(context: RunContext) -> dict[str, JsonValue]:
    """Say which session and call this is."""
    return {"session": context.session, "tool": context.tool_name, "id": context.tool_call_id}


@tool
async def plain(a: int) -> int:
    """No context here."""
    return a


def test_the_context_parameter_is_not_in_the_schema() -> None:
    assert lookup.takes_context and not plain.takes_context
    assert lookup.input_schema["properties"] == {
        "key": {"type": "string", "description": "What to look up."}
    }
    assert lookup.input_schema["required"] == ["key"]
    assert whose.input_schema.get("properties", {}) == {}
    assert isinstance(lookup, ContextTool)


async def test_a_tool_gets_the_callers_deps_and_the_session_through_the_registry() -> None:
    registry = ToolRegistry([lookup, whose, plain])
    assert registry.any_takes_context and registry.takes_context("lookup")
    assert not registry.takes_context("plain") and not registry.takes_context("nope")
    context = RunContext(deps=Database({"ann": "admin"}), session="s-1")
    assert await registry.call("lookup", {"key": "ann"}, context=context) == "admin"
    call = context.for_call("whose", "call_7")
    assert await registry.call("whose", {}, context=call) == {
        "session": "s-1",
        "tool": "whose",
        "id": "call_7",
    }
    assert await registry.call("plain", {"a": 3}, context=context) == 3


async def test_deps_of_the_wrong_type_fail_naming_the_type_not_the_value() -> None:
    registry = ToolRegistry([lookup])
    with pytest.raises(ToolContextError, match=r"RunContext\[Database\].*deps are None"):
        await registry.call("lookup", {"key": "ann"})
    with pytest.raises(ToolContextError, match="deps are a str") as raised:
        await registry.call("lookup", {"key": "k"}, context=RunContext(deps="sk-secret-123"))
    assert "sk-secret" not in str(raised.value)


async def test_without_a_context_a_tool_asking_for_one_gets_one_without_deps() -> None:
    assert await whose.call({}) == {"session": None, "tool": None, "id": None}
    assert await ToolRegistry([whose]).call("whose", {}) == {
        "session": None,
        "tool": None,
        "id": None,
    }


def test_a_run_context_anywhere_but_first_is_refused_at_registration() -> None:
    def late(key: str, context: RunContext[Database]) -> str:
        return key

    with pytest.raises(ToolRegistrationError, match="only its first parameter may be"):
        FunctionTool(late)

    def twice(a: RunContext, b: RunContext) -> str:
        return ""

    with pytest.raises(ToolRegistrationError, match="only its first parameter may be"):
        FunctionTool(twice)


async def test_a_keyword_only_context_and_a_sync_tool_work_too() -> None:
    def sync_lookup(*, context: RunContext[Database], key: str) -> dict[str, Any]:
        return {"value": context.deps.rows[key], "thread": threading.get_ident()}

    sync_tool = FunctionTool(sync_lookup)
    properties = sync_tool.input_schema["properties"]
    assert isinstance(properties, dict) and list(properties) == ["key"]
    result = await sync_tool.call_in_context({"key": "a"}, RunContext(deps=Database({"a": "b"})))
    assert isinstance(result, dict) and result["value"] == "b"
    assert result["thread"] != threading.get_ident()


async def test_middleware_sees_the_context_and_with_input_keeps_it() -> None:
    seen: list[object] = []

    async def rewrite(call: ToolCall, next: Next) -> JsonValue:
        seen.append(call.context)
        if call.name == "plain":
            return await next(call)
        return await next(call.with_input({"key": "bob"}))

    registry = ToolRegistry([lookup, plain], middleware=[rewrite])
    context = RunContext(deps=Database({"bob": "user"}))
    assert await registry.call("lookup", {"key": "ann"}, context=context) == "user"
    assert await registry.call("plain", {"a": 1}) == 1
    assert seen == [context, None]


class _Counter:
    """A hand-written tool asking for the context by shape."""

    name = "counter"
    description = "Counts."
    input_schema: dict[str, JsonValue] = {"type": "object"}
    output_schema = None
    annotations = None
    takes_context = True

    async def call(self, input: JsonValue) -> JsonValue:
        raise AssertionError("a context tool is called in its context")

    async def call_in_context(self, input: JsonValue, context: RunContext[Any]) -> JsonValue:
        return f"deps={context.deps}"


async def test_a_hand_written_tool_asks_by_shape() -> None:
    registry = ToolRegistry([_Counter()])
    assert await registry.call("counter", {}, context=RunContext(deps=7)) == "deps=7"
    assert await registry.call("counter", {}) == "deps=None"


async def test_progress_goes_to_the_reporter_and_bad_reports_are_refused() -> None:
    reports: list[tuple[str, float | None, JsonValue]] = []

    async def reporter(message: str, fraction: float | None, data: JsonValue) -> None:
        reports.append((message, fraction, data))

    context = RunContext(deps=None, reporter=reporter)
    await context.progress("half", fraction=0.5, data={"pages": 5})
    await context.progress("going")
    assert reports == [("half", 0.5, {"pages": 5}), ("going", None, None)]
    for bad in (1.5, -0.1, float("nan"), "half"):
        with pytest.raises(ValueError, match="from 0 to 1"):
            await context.progress("x", fraction=bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="a progress message is a str"):
        await context.progress(42)  # type: ignore[arg-type]
    await RunContext(deps=None).progress("nobody listens")


def test_remaining_counts_down_to_the_deadline_and_never_below_zero() -> None:
    assert RunContext(deps=None).remaining() is None
    left = RunContext(deps=None, deadline=time.monotonic() + 30).remaining()
    assert left is not None and 29 < left <= 30
    assert RunContext(deps=None, deadline=time.monotonic() - 5).remaining() == 0.0


def test_a_context_built_by_hand_is_at_step_0_having_used_nothing() -> None:
    context = RunContext(deps=None)

    assert context.step == 0
    assert context.usage == RunUsage(input_tokens=0, output_tokens=0, cost=usd(), tool_calls=0)
    assert context.for_call("t", "c1").usage is context.usage  # a call keeps the run's
