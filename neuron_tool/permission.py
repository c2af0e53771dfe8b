"""`permission`: middleware that asks a policy before each tool call."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeAlias

from pydantic import JsonValue

from .errors import ToolPermissionError
from .files import ToolReturn
from .middleware import Middleware, Next, ToolCall


@dataclass(frozen=True, slots=True)
class PermissionDecision:
    """A policy's answer for one call: allowed or not, and why."""

    allowed: bool
    """Whether the call may run."""
    reason: str = ""
    """Why; for a denial this is what the model is told."""

    @classmethod
    def allow(cls, reason: str = "") -> PermissionDecision:
        """Let the call run."""
        return cls(allowed=True, reason=reason)

    @classmethod
    def deny(cls, reason: str) -> PermissionDecision:
        """Refuse the call, telling the model `reason`."""
        return cls(allowed=False, reason=reason)


PermissionPolicy: TypeAlias = Callable[
    [ToolCall], PermissionDecision | Awaitable[PermissionDecision]
]
"""A sync or async callable deciding whether a `ToolCall` may run."""


def permission(policy: PermissionPolicy) -> Middleware:
    """Return middleware that runs a call only if `policy` allows it.

    A sync policy runs on the event loop, so it must not block; make it async
    if it needs I/O (asking a human, reading a policy store).

    A denial raises `ToolPermissionError` with the policy's reason; the tool
    does not run.
    """

    async def permission_middleware(call: ToolCall, next: Next) -> JsonValue | ToolReturn:
        decision = await _decide(policy, call)
        if not decision.allowed:
            raise ToolPermissionError(call.name, decision.reason)
        return await next(call)

    return permission_middleware


async def _decide(policy: PermissionPolicy, call: ToolCall) -> PermissionDecision:
    decision = policy(call)
    if inspect.isawaitable(decision):
        return await decision
    return decision
