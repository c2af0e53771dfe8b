"""Servers the tests start in their own task: the URL once it accepts, a stop at the end."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

Serve = Callable[[Callable[[str], object]], Awaitable[None]]
"""Runs a server until cancelled, calling its argument with the URL once it accepts."""


@asynccontextmanager
async def running(serve: Serve) -> AsyncIterator[str]:
    """Run `serve` in a task; yield the URL it reports ready at; stop it on leaving.

    A server that fails to start fails the test with its error rather than
    leave it waiting.
    """
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    server = asyncio.create_task(serve(ready.set_result))
    try:
        await asyncio.wait([ready, server], return_when=asyncio.FIRST_COMPLETED)
        if not ready.done():
            server.result()
        yield ready.result()
    finally:
        server.cancel()
        await asyncio.wait([server])
