"""One event loop per thread for blocking calls (`NeuronTurn.run_sync`), kept open between them.

Why not `asyncio.run` each time: it closes its loop when it returns, and a
provider's `httpx.AsyncClient` keeps pooled connections bound to the loop that
opened them, so a second `run_sync` on the same turn failed with "Event loop
is closed". The thread's loop is closed when the interpreter exits.
"""

from __future__ import annotations

import asyncio
import atexit
import contextvars
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["blocking_loop", "run_blocking"]

_T = TypeVar("_T")
_local = threading.local()


def run_blocking(coroutine: Coroutine[Any, Any, _T]) -> _T:
    """Run `coroutine` to its end on this thread's own loop, made on first use.

    In a copy of the caller's context, as `asyncio.run` would: the runner's own
    copy is taken once, at its first use, so context variables set later
    (`NeuronTurn.override`, `checkpointing`) would be missed and ones set then
    would outlive their block.
    """
    return _runner().run(coroutine, context=contextvars.copy_context())


def blocking_loop() -> asyncio.AbstractEventLoop:
    """This thread's own loop (`run_blocking`'s), made on first use.

    So work begun on it can be handed back to it from another thread
    (`call_soon_threadsafe`): a `SyncTurnStream` dropped last elsewhere.
    """
    return _runner().get_loop()


def _runner() -> asyncio.Runner:
    runner: asyncio.Runner | None = getattr(_local, "runner", None)
    if runner is None:
        # A factory, so the runner leaves the thread's current event loop alone.
        runner = _local.runner = asyncio.Runner(loop_factory=asyncio.new_event_loop)
        atexit.register(runner.close)
    return runner
