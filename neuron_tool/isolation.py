"""Tools that must run isolated: how a tool declares it, and how a process says it is isolated.

A tool declares it with a true `requires_isolation` attribute (`@tool(requires_isolation=True)`
sets it on a `FunctionTool`; any other `ToolDyn` may carry it too). An
environment that does not isolate refuses to offer such a tool, and a
`FunctionTool` that declares it refuses to run unless the process was marked
isolated by the environment's sandbox. The mark guards against running a
shell on the caller's machine by mistake; it is not a security boundary of
its own (the sandbox is).
"""

from __future__ import annotations

from typing import Final

from .errors import ToolIsolationError

__all__ = [
    "REQUIRES_ISOLATION",
    "check_isolated",
    "isolation",
    "mark_isolated",
    "requires_isolation",
]

REQUIRES_ISOLATION: Final = "requires_isolation"
"""The attribute a tool sets to True to say it must run only inside a sandbox."""

_boundary: str | None = None


def requires_isolation(tool: object) -> bool:
    """Whether `tool` declares that it must run only inside a sandbox."""
    return getattr(tool, REQUIRES_ISOLATION, False) is True


def mark_isolated(boundary: str) -> None:
    """Record that this process runs inside `boundary` (a sandbox's child calls it once)."""
    global _boundary
    if not boundary:
        raise ValueError("the isolation boundary needs a name")
    _boundary = boundary


def isolation() -> str | None:
    """Return the boundary this process was marked as running inside, if any."""
    return _boundary


def check_isolated(tool: str) -> None:
    """Raise `ToolIsolationError` for `tool` unless this process was marked isolated."""
    if _boundary is None:
        raise ToolIsolationError(tool)
