"""The progress observer `neuron-turn run` shows on stderr."""

from __future__ import annotations

import io
from typing import Any

import pytest

from layer0 import Content, Continue, Hook, HookContext, HookPoint, TextBlock, ToolUseBlock, usd
from neuron_turn.cli.progress import ProgressHook, describe_event


def context(point: HookPoint, **fields: Any) -> HookContext:
    base: dict[str, Any] = {
        "tokens_used": 1500,
        "cost": usd("0.00123"),
        "turns_completed": 1,
        "elapsed": 2340,
    }
    return HookContext(point=point, **{**base, **fields})


def test_it_is_a_hook_at_the_model_and_tool_points() -> None:
    hook = ProgressHook(io.StringIO())
    assert isinstance(hook, Hook)
    assert hook.points == {
        HookPoint.PRE_INFERENCE,
        HookPoint.POST_INFERENCE,
        HookPoint.PRE_TOOL_USE,
        HookPoint.POST_TOOL_USE,
    }


async def test_it_writes_one_line_per_event_and_continues() -> None:
    stream = io.StringIO()
    hook = ProgressHook(stream)
    action = await hook.on_event(context(HookPoint.PRE_INFERENCE))
    assert action == Continue()
    assert stream.getvalue() == "[model] call 2 (2.3s)\n"


@pytest.mark.parametrize(
    ("ctx", "line"),
    [
        (context(HookPoint.PRE_INFERENCE, turns_completed=0), "[model] call 1 (2.3s)"),
        (
            context(HookPoint.POST_INFERENCE, model_output=Content("All done.")),
            "[model] answered: All done. (1500 tokens, $0.0012 so far)",
        ),
        (
            context(
                HookPoint.POST_INFERENCE,
                model_output=Content(
                    [
                        TextBlock(text="Let me look."),
                        ToolUseBlock(id="1", name="search", input={}),
                        ToolUseBlock(id="2", name="fetch", input={}),
                    ]
                ),
            ),
            "[model] answered: calls search, fetch (1500 tokens, $0.0012 so far)",
        ),
        (
            context(HookPoint.PRE_TOOL_USE, tool_name="search", tool_input={"q": "ünïcode"}),
            '[tool] search({"q": "ünïcode"})',
        ),
        (
            context(HookPoint.POST_TOOL_USE, tool_name="search", tool_result="3 hits\nfirst"),
            "[tool] search -> 3 hits first (2.3s)",
        ),
    ],
)
def test_describe_event(ctx: HookContext, line: str) -> None:
    assert describe_event(ctx) == line


def test_long_values_are_shortened() -> None:
    ctx = context(HookPoint.POST_TOOL_USE, tool_name="read", tool_result="x" * 500)
    line = describe_event(ctx, width=20)
    assert line == "[tool] read -> " + "x" * 19 + "… (2.3s)"
