"""`timeout`: middleware that bounds how long a tool call may run."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping

from pydantic import JsonValue

from .errors import ToolTimeoutError
from .files import ToolReturn
from .middleware import Middleware, Next, ToolCall


def timeout(seconds: float | None, *, per_tool: Mapping[str, float] | None = None) -> Middleware:
    """Return middleware that cancels a call after `seconds` and raises `ToolTimeoutError`.

    A sync tool runs in a worker thread, which cannot be stopped: the call is
    abandoned on time, but the thread finishes in the background.

    Args:
        seconds: The limit for every tool, or `None` for no default limit.
        per_tool: Limits by tool name that override `seconds`.

    Raises:
        ValueError: A limit is not a positive finite number.
    """
    limits = dict(per_tool or {})
    for limit in (seconds, *limits.values()):
        if limit is not None and not (0 < limit < math.inf):
            raise ValueError(f"timeout must be a positive number of seconds, got {limit!r}")

    async def timeout_middleware(call: ToolCall, next: Next) -> JsonValue | ToolReturn:
        limit = limits.get(call.name, seconds)
        if limit is None:
            return await next(call)
        deadline = asyncio.timeout(limit)
        try:
            async with deadline:
                return await next(call)
        except TimeoutError as exc:
            # Only our own expiry is ours to report; an inner timeout (or a
            # nested timeout middleware) keeps its own error.
            if not deadline.expired():
                raise
            raise ToolTimeoutError(call.name, limit) from exc

    return timeout_middleware
