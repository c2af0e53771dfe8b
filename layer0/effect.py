"""`Effect`: a side effect a turn declares for its caller to carry out.

A turn never writes state or contacts other agents itself; it returns these,
and the orchestrator decides when and how they happen.
"""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import Field

from ._tagged import Frozen
from .ids import AgentId, WorkflowId
from .json_value import Json
from .log_level import LogLevel
from .scope import Scope
from .signal import SignalPayload
from .turn_input import TurnInput

__all__ = [
    "CustomEffect",
    "DelegateEffect",
    "DeleteMemoryEffect",
    "Effect",
    "HandoffEffect",
    "LogEffect",
    "SignalEffect",
    "WriteMemoryEffect",
]


class WriteMemoryEffect(Frozen):
    """Store `value` under `key` in `scope`."""

    type: Literal["write_memory"] = "write_memory"
    scope: Scope
    key: str
    value: Json


class DeleteMemoryEffect(Frozen):
    """Remove `key` from `scope` (no-op when missing)."""

    type: Literal["delete_memory"] = "delete_memory"
    scope: Scope
    key: str


class SignalEffect(Frozen):
    """Send `payload` to the workflow `target`."""

    type: Literal["signal"] = "signal"
    target: WorkflowId
    payload: SignalPayload


class DelegateEffect(Frozen):
    """Run `agent` on `input` and give its output back to this workflow."""

    type: Literal["delegate"] = "delegate"
    agent: AgentId
    input: TurnInput


class HandoffEffect(Frozen):
    """Pass the conversation to `agent`, with `state` for it to pick up."""

    type: Literal["handoff"] = "handoff"
    agent: AgentId
    state: Json


class LogEffect(Frozen):
    """A log line for the caller's logging."""

    type: Literal["log"] = "log"
    level: LogLevel
    message: str
    data: Json = None


class CustomEffect(Frozen):
    """An effect of the caller's own kind, routed by `effect_type`."""

    type: Literal["custom"] = "custom"
    effect_type: str
    data: Json


Effect: TypeAlias = Annotated[
    WriteMemoryEffect
    | DeleteMemoryEffect
    | SignalEffect
    | DelegateEffect
    | HandoffEffect
    | LogEffect
    | CustomEffect,
    Field(discriminator="type"),
]
"""A declared side effect; tagged by `"type"`."""
