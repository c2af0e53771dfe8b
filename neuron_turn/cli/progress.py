"""`ProgressHook`: an observer hook that reports each model and tool call as it happens.

`neuron-turn run` adds it to the turn's `HookRegistry` with `observer=True`,
so progress reporting is an ordinary hook, not special code in the loop, and
no other hook's action can hide a call from it.
"""

from __future__ import annotations

import json
from collections.abc import Set
from typing import Final, TextIO

from layer0 import Continue, HookAction, HookContext, HookPoint, ToolUseBlock

from ._visible import shown_on

__all__ = ["ProgressHook", "describe_event"]

_CONTINUE: Final = Continue()


class ProgressHook:
    """Writes one line to `stream` at every model call and tool call."""

    name: Final = "neuron-turn.progress"
    points: Final[Set[HookPoint]] = frozenset(
        {
            HookPoint.PRE_INFERENCE,
            HookPoint.POST_INFERENCE,
            HookPoint.PRE_TOOL_USE,
            HookPoint.POST_TOOL_USE,
        }
    )

    def __init__(self, stream: TextIO, *, width: int = 80) -> None:
        """Report to `stream`, shortening tool inputs, results and answers to `width` chars."""
        self.stream = stream
        self.width = width

    async def on_event(self, ctx: HookContext) -> HookAction:
        """Write the line for `ctx` and let the turn go on."""
        # A model's answer and a tool's result are untrusted: on a terminal, shown inert.
        self.stream.write(shown_on(self.stream)(describe_event(ctx, width=self.width)) + "\n")
        self.stream.flush()
        return _CONTINUE


def describe_event(ctx: HookContext, *, width: int = 80) -> str:
    """Return the progress line for one hook event."""
    elapsed = f"{ctx.elapsed / 1000:.1f}s"
    if ctx.point is HookPoint.PRE_INFERENCE:
        return f"[model] call {ctx.turns_completed + 1} ({elapsed})"
    if ctx.point is HookPoint.POST_INFERENCE:
        answer = _model_output(ctx, width)
        totals = f"{ctx.tokens_used} tokens, ${ctx.cost.amount:.4f} so far"
        return f"[model] answered: {answer} ({totals})"
    if ctx.point is HookPoint.PRE_TOOL_USE:
        arguments = _shorten(json.dumps(ctx.tool_input, ensure_ascii=False), width)
        return f"[tool] {ctx.tool_name}({arguments})"
    result = _shorten(ctx.tool_result or "", width)
    return f"[tool] {ctx.tool_name} -> {result} ({elapsed})"


def _model_output(ctx: HookContext, width: int) -> str:
    if ctx.model_output is None:
        return "(nothing)"
    blocks = ctx.model_output.blocks
    calls = [block.name for block in blocks if isinstance(block, ToolUseBlock)]
    if calls:
        return "calls " + ", ".join(calls)
    text = ctx.model_output.as_text()
    return _shorten(text, width) if text else f"{len(blocks)} block(s)"


def _shorten(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
