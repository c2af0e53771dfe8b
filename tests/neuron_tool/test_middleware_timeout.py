from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest
from pydantic import JsonValue

from neuron_tool import ToolCallError, ToolRegistry, ToolTimeoutError, timeout

if TYPE_CHECKING:
    # Only for annotations: fixtures hand the class over at run time.
    from conftest import FakeTool


async def wait_forever(input: JsonValue) -> JsonValue:
    await asyncio.Event().wait()
    raise AssertionError("the event is never set")


async def raise_own_timeout(input: JsonValue) -> JsonValue:
    raise TimeoutError("upstream took too long")


async def test_call_that_outlives_the_limit_raises_tool_timeout_error(
    make_tool: type[FakeTool],
) -> None:
    registry = ToolRegistry([make_tool("slow", behaviour=wait_forever)], middleware=[timeout(0.01)])
    with pytest.raises(ToolTimeoutError) as caught:
        await registry.call("slow", {"text": "x"})
    assert (caught.value.tool, caught.value.seconds) == ("slow", 0.01)
    assert isinstance(caught.value, TimeoutError)


async def test_call_within_the_limit_returns_its_result(echo: FakeTool) -> None:
    registry = ToolRegistry([echo], middleware=[timeout(60)])
    assert await registry.call("echo", {"text": "x"}) == {"text": "x"}


async def test_per_tool_limit_overrides_the_default(make_tool: type[FakeTool]) -> None:
    middleware = timeout(None, per_tool={"slow": 0.01})
    registry = ToolRegistry([make_tool("slow", behaviour=wait_forever)], middleware=[middleware])
    with pytest.raises(ToolTimeoutError) as caught:
        await registry.call("slow", {"text": "x"})
    assert caught.value.seconds == 0.01


async def test_no_default_limit_leaves_other_tools_unbounded(echo: FakeTool) -> None:
    registry = ToolRegistry([echo], middleware=[timeout(None, per_tool={"slow": 0.01})])
    assert await registry.call("echo", {"text": "x"}) == {"text": "x"}


async def test_timeout_error_raised_by_the_tool_itself_is_a_call_error(
    make_tool: type[FakeTool],
) -> None:
    registry = ToolRegistry([make_tool("t", behaviour=raise_own_timeout)], middleware=[timeout(60)])
    with pytest.raises(ToolCallError) as caught:
        await registry.call("t", {"text": "x"})
    assert not isinstance(caught.value, ToolTimeoutError)


async def test_nested_timeouts_report_the_one_that_expired(make_tool: type[FakeTool]) -> None:
    slow = make_tool("slow", behaviour=wait_forever)
    registry = ToolRegistry(middleware=[timeout(60)])
    registry.register(slow, middleware=[timeout(0.01)])
    with pytest.raises(ToolTimeoutError) as caught:
        await registry.call("slow", {"text": "x"})
    assert caught.value.seconds == 0.01


@pytest.mark.parametrize("seconds", [0, -1, float("inf"), float("nan")])
def test_limit_must_be_positive_and_finite(seconds: float) -> None:
    with pytest.raises(ValueError, match="positive"):
        timeout(seconds)
    with pytest.raises(ValueError, match="positive"):
        timeout(1, per_tool={"t": seconds})
