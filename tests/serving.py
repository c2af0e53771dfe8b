"""Servers the tests start in their own task: the URL once it accepts, a stop at the end."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from concurrent.futures import Future
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager

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


@contextmanager
def running_in_thread(server: Callable[[], AbstractAsyncContextManager[str]]) -> Iterator[str]:
    """Enter `server()` on an event loop of its own thread; yield its URL; leave it at the end.

    Why: a test calling the command line's `main` in this thread has `main` run its
    own loop, so a server it talks to must run on another.
    """
    ready: Future[str] = Future()
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()

    async def serve() -> None:
        try:
            async with server() as url:
                ready.set_result(url)
                await stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)  # a server that fails to start fails the test
            raise

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    try:
        yield ready.result(timeout=30)
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(timeout=30)
        assert not thread.is_alive(), "the server did not stop"
        loop.close()
