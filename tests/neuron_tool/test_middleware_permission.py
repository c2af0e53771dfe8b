from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from neuron_tool import (
    PermissionDecision,
    ToolCall,
    ToolCallError,
    ToolPermissionError,
    ToolRegistry,
    permission,
)

if TYPE_CHECKING:
    # Only for annotations: fixtures hand the class over at run time.
    from conftest import FakeTool


def read_only(call: ToolCall) -> PermissionDecision:
    if call.name.startswith("read"):
        return PermissionDecision.allow()
    return PermissionDecision.deny("this session is read-only")


async def ask_nobody(call: ToolCall) -> PermissionDecision:
    return PermissionDecision.deny(f"nobody approved {call.input}")


def broken_policy(call: ToolCall) -> PermissionDecision:
    raise RuntimeError("policy store down")


def test_decisions_built_by_allow_and_deny() -> None:
    assert PermissionDecision.allow() == PermissionDecision(allowed=True, reason="")
    assert PermissionDecision.deny("no") == PermissionDecision(allowed=False, reason="no")


async def test_allowed_call_runs_the_tool(make_tool: type[FakeTool]) -> None:
    reader = make_tool("read_file")
    registry = ToolRegistry([reader], middleware=[permission(read_only)])
    assert await registry.call("read_file", {"text": "x"}) == {"text": "x"}
    assert reader.inputs == [{"text": "x"}]


async def test_denied_call_raises_with_the_reason_and_never_runs(
    make_tool: type[FakeTool],
) -> None:
    writer = make_tool("write_file")
    registry = ToolRegistry([writer], middleware=[permission(read_only)])
    with pytest.raises(ToolPermissionError) as caught:
        await registry.call("write_file", {"text": "x"})
    assert (caught.value.tool, caught.value.reason) == ("write_file", "this session is read-only")
    assert writer.inputs == []


async def test_async_policy_is_awaited_and_sees_the_call(echo: FakeTool) -> None:
    registry = ToolRegistry([echo], middleware=[permission(ask_nobody)])
    with pytest.raises(ToolPermissionError) as caught:
        await registry.call("echo", {"text": "rm -rf"})
    assert caught.value.reason == "nobody approved {'text': 'rm -rf'}"


async def test_policy_that_raises_fails_closed(echo: FakeTool) -> None:
    registry = ToolRegistry([echo], middleware=[permission(broken_policy)])
    with pytest.raises(ToolCallError) as caught:
        await registry.call("echo", {"text": "x"})
    assert isinstance(caught.value.__cause__, RuntimeError)
    assert echo.inputs == []
