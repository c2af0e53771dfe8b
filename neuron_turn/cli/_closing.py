"""Closing whatever a plugin built, whether it closes sync or async."""

from __future__ import annotations


async def close_resource(resource: object) -> None:
    """Close `resource` through its `aclose()` or `close()`, sync or async, if it has one."""
    for name in ("aclose", "close"):
        method = getattr(resource, name, None)
        if callable(method):
            result = method()
            if hasattr(result, "__await__"):
                await result
            return
