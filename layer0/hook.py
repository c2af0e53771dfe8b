"""Hooks: observers and guards called at fixed points of a turn."""

from __future__ import annotations

from collections.abc import Set
from enum import StrEnum
from typing import Annotated, Literal, Protocol, TypeAlias, runtime_checkable

from pydantic import Field

from ._scalars import U32, U64
from ._tagged import Frozen
from .content import Content
from .duration import DurationMs
from .json_value import Json
from .money import Cost

__all__ = [
    "Continue",
    "Halt",
    "Hook",
    "HookAction",
    "HookContext",
    "HookPoint",
    "ModifyToolInput",
    "SkipTool",
]


class HookPoint(StrEnum):
    """Where in a turn a hook is called."""

    PRE_INFERENCE = "pre_inference"
    POST_INFERENCE = "post_inference"
    PRE_TOOL_USE = "pre_tool_use"
    POST_TOOL_USE = "post_tool_use"
    EXIT_CHECK = "exit_check"


class HookContext(Frozen):
    """What a hook sees: the point, the tool or model output at hand, and the running totals."""

    point: HookPoint
    tool_name: str | None = None
    tool_input: Json = None
    tool_result: str | None = None
    model_output: Content | None = None
    tokens_used: U64
    cost: Cost
    turns_completed: U32
    elapsed: DurationMs


class Continue(Frozen):
    """Go on as normal."""

    action: Literal["continue"] = "continue"


class Halt(Frozen):
    """Stop the turn; it exits with `observer_halt` and this reason."""

    action: Literal["halt"] = "halt"
    reason: str


class SkipTool(Frozen):
    """Do not run this tool call; the model is told it was skipped and why."""

    action: Literal["skip_tool"] = "skip_tool"
    reason: str


class ModifyToolInput(Frozen):
    """Run this tool call with `new_input` instead of the model's input."""

    action: Literal["modify_tool_input"] = "modify_tool_input"
    new_input: Json


HookAction: TypeAlias = Annotated[
    Continue | Halt | SkipTool | ModifyToolInput, Field(discriminator="action")
]
"""What a hook asks the turn to do; tagged by `"action"`."""


@runtime_checkable
class Hook(Protocol):
    """Called at the points it declares; returns what the turn should do.

    A hook that raises does not halt the turn: the error is logged and the
    pipeline goes on. Only `Halt` halts.
    """

    @property
    def points(self) -> Set[HookPoint]:
        """The points at which this hook is called."""
        ...

    async def on_event(self, ctx: HookContext) -> HookAction:
        """React to one event."""
        ...
