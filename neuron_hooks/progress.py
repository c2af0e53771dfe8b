"""Progress a tool reports while it runs, and the observers that watch it.

A tool that asks for a `neuron_tool.RunContext` may call
`await context.progress("fetched 3 of 10 pages", fraction=0.3)`. The turn
turns each report into a `ToolProgress` and gives it to the progress
observers of its hook registry and to its event stream (`NeuronTurn.stream`).
As with lifecycle events, `HookPoint` is wire shared with the Rust reference,
so progress is not a hook point: observers get it through a method of their
own, `on_progress`. `HookRegistry.add` subscribes a hook that has one, and
`HookRegistry.add_progress_observer` takes an object that only watches progress.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol, runtime_checkable

from pydantic import JsonValue

__all__ = ["ProgressObserver", "ToolProgress"]


@dataclass(frozen=True, slots=True)
class ToolProgress:
    """One progress report of a running tool call."""

    kind: ClassVar[str] = "tool_progress"
    id: str
    """The model's id of the tool call reporting."""
    name: str
    """The tool's name."""
    message: str
    """What the tool says it is doing."""
    fraction: float | None = None
    """How much is done, from 0 to 1, when the tool knows."""
    data: JsonValue = None
    """Anything else the tool reports (JSON)."""


@runtime_checkable
class ProgressObserver(Protocol):
    """Watches tools' progress; what it returns is ignored, what it raises is logged."""

    async def on_progress(self, event: ToolProgress) -> None:
        """Take note of `event`; the reporting tool waits for it."""
        ...
