"""`ToolPolicyHook`: skip tool calls that an allow or deny list rules out."""

from __future__ import annotations

from collections.abc import Sequence, Set
from fnmatch import fnmatchcase
from typing import Final

from layer0 import HookAction, HookContext, HookPoint, SkipTool

from .errors import HookConfigError
from .registry import CONTINUE

__all__ = ["ToolPolicyHook"]

_POINTS: Final = frozenset({HookPoint.PRE_TOOL_USE})


class ToolPolicyHook:
    """Skips tool calls by name, using case-sensitive glob patterns (`fnmatchcase`).

    A tool matching a `deny` pattern is skipped, whatever `allow` says. When
    `allow` is given, a tool matching none of its patterns is skipped too;
    `allow=[]` therefore denies every tool.
    """

    def __init__(self, *, allow: Sequence[str] | None = None, deny: Sequence[str] = ()) -> None:
        """Set the patterns.

        Raises:
            HookConfigError: `allow` or `deny` is a single string rather than a
                sequence of patterns (it would be read one character at a time).
        """
        self.allow: tuple[str, ...] | None = None if allow is None else _patterns("allow", allow)
        self.deny: tuple[str, ...] = _patterns("deny", deny)

    @property
    def points(self) -> Set[HookPoint]:
        """Only `pre_tool_use`: the one point where a call can still be skipped."""
        return _POINTS

    async def on_event(self, ctx: HookContext) -> HookAction:
        """Skip the call, naming the rule that ruled it out, or continue."""
        reason = None if ctx.tool_name is None else self.refusal(ctx.tool_name)
        return CONTINUE if reason is None else SkipTool(reason=reason)

    def refusal(self, tool_name: str) -> str | None:
        """Why `tool_name` may not run, or None if it may."""
        for pattern in self.deny:
            if fnmatchcase(tool_name, pattern):
                return f"tool {tool_name!r} denied by rule {pattern!r}"
        if self.allow is not None and not any(fnmatchcase(tool_name, p) for p in self.allow):
            return f"tool {tool_name!r} not in allow list {list(self.allow)!r}"
        return None

    def __repr__(self) -> str:
        return f"ToolPolicyHook(allow={self.allow!r}, deny={self.deny!r})"


def _patterns(field: str, patterns: Sequence[str]) -> tuple[str, ...]:
    if isinstance(patterns, str):
        raise HookConfigError(f"{field} takes a sequence of patterns; got the string {patterns!r}")
    bad = [pattern for pattern in patterns if not isinstance(pattern, str)]
    if bad:
        raise HookConfigError(f"{field} patterns must be strings; got {bad!r}")
    return tuple(patterns)
