from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import pytest
from pydantic import JsonValue

from neuron_tool import Middleware, Next, ToolCall, ToolRegistry

if TYPE_CHECKING:
    # Only for annotations: fixtures hand the class over at run time.
    from conftest import FakeTool


def recorder(label: str, log: list[str]) -> Middleware:
    async def record(call: ToolCall, next: Next) -> JsonValue:
        log.append(f"{label} in")
        result = await next(call)
        log.append(f"{label} out")
        return result

    return record


def test_with_input_replaces_only_the_input(echo: FakeTool) -> None:
    call = ToolCall("echo", {"text": "a"}, tool=echo)
    changed = call.with_input({"text": "b"})
    assert (changed.name, changed.input, changed.tool) == ("echo", {"text": "b"}, echo)
    assert call.input == {"text": "a"}


def test_tool_call_is_frozen(echo: FakeTool) -> None:
    call = ToolCall("echo", {}, tool=echo)
    with pytest.raises(dataclasses.FrozenInstanceError):
        call.name = "other"  # type: ignore[misc]


async def test_global_middleware_runs_outside_per_tool_middleware_in_order(
    echo: FakeTool,
) -> None:
    log: list[str] = []
    registry = ToolRegistry(middleware=[recorder("global 1", log), recorder("global 2", log)])
    registry.register(echo, middleware=[recorder("tool", log)])
    await registry.call("echo", {"text": "x"})
    assert log == [
        "global 1 in",
        "global 2 in",
        "tool in",
        "tool out",
        "global 2 out",
        "global 1 out",
    ]


async def test_use_adds_global_middleware_to_tools_registered_before_it(echo: FakeTool) -> None:
    log: list[str] = []
    registry = ToolRegistry([echo])
    await registry.call("echo", {"text": "x"})
    registry.use(recorder("late", log))
    await registry.call("echo", {"text": "x"})
    assert log == ["late in", "late out"]


async def test_use_returns_the_middleware_so_it_works_as_a_decorator(echo: FakeTool) -> None:
    registry = ToolRegistry([echo])

    @registry.use
    async def shout(call: ToolCall, next: Next) -> JsonValue:
        return str(await next(call)).upper()

    assert callable(shout)
    assert await registry.call("echo", {"text": "hi"}) == "{'TEXT': 'HI'}"


async def test_middleware_can_change_the_input_the_tool_sees(echo: FakeTool) -> None:
    async def redact(call: ToolCall, next: Next) -> JsonValue:
        return await next(call.with_input({"text": "[redacted]"}))

    registry = ToolRegistry([echo], middleware=[redact])
    await registry.call("echo", {"text": "secret"})
    assert echo.inputs == [{"text": "[redacted]"}]


async def test_middleware_can_short_circuit_without_running_the_tool(echo: FakeTool) -> None:
    async def cached(call: ToolCall, next: Next) -> JsonValue:
        return "from cache"

    registry = ToolRegistry([echo], middleware=[cached])
    assert await registry.call("echo", {"text": "x"}) == "from cache"
    assert echo.inputs == []


async def test_middleware_can_post_process_the_result(echo: FakeTool) -> None:
    async def wrap(call: ToolCall, next: Next) -> JsonValue:
        return {"tool": call.name, "result": await next(call)}

    registry = ToolRegistry([echo], middleware=[wrap])
    assert await registry.call("echo", {"text": "x"}) == {"tool": "echo", "result": {"text": "x"}}


async def test_per_tool_middleware_applies_only_to_its_tool(make_tool: type[FakeTool]) -> None:
    log: list[str] = []
    registry = ToolRegistry()
    registry.register(make_tool("a"), middleware=[recorder("a only", log)])
    registry.register(make_tool("b"))
    await registry.call("b", {"text": "x"})
    assert log == []
    await registry.call("a", {"text": "x"})
    assert log == ["a only in", "a only out"]


async def test_middleware_sees_tool_errors_already_wrapped(make_tool: type[FakeTool]) -> None:
    seen: list[BaseException] = []

    async def fail(input: JsonValue) -> JsonValue:
        raise OSError("no route")

    async def observe(call: ToolCall, next: Next) -> JsonValue:
        try:
            return await next(call)
        except Exception as exc:
            seen.append(exc)
            return "recovered"

    registry = ToolRegistry([make_tool("t", behaviour=fail)], middleware=[observe])
    assert await registry.call("t", {"text": "x"}) == "recovered"
    [error] = seen
    assert type(error).__name__ == "ToolCallError"
    assert isinstance(error.__cause__, OSError)
