"""`AnswerStream`: a turn's streamed text sent as artifact updates, a bounded number of them.

Each artifact update makes the SDK store the task again, copying it whole: an
update per model delta made a streamed answer cost the square of its deltas
(8,000 one-token deltas: some 9 s of the server's CPU; big ones, gigabytes).
So deltas coming faster than one update per `every` seconds wait (that long at
most) and go together in the next.
"""

from __future__ import annotations

import asyncio
import logging
import math
from typing import Final

from a2a.server.tasks import TaskUpdater

from ._convert import text_part

_logger: Final = logging.getLogger(__name__)

EVERY: Final = 0.05
"""The least seconds between two updates: quick to read, few for a long answer."""


class AnswerStream:
    """The answer's text as artifact `artifact_id` of `updater`'s task, as it comes."""

    def __init__(self, updater: TaskUpdater, artifact_id: str, every: float = EVERY) -> None:
        """Stream to `updater`'s task, at most one update per `every` seconds."""
        self._updater = updater
        self._artifact_id = artifact_id
        self._every = every
        self._pending: list[str] = []
        self._fresh = True  # the next update starts the artifact anew
        self._last = -math.inf
        self._timer: asyncio.Task[None] | None = None  # a later flush
        self._sleeping = False  # the later flush has not started sending
        self._lock = asyncio.Lock()  # one update at a time, in order

    async def add(self, text: str) -> None:
        """Send `text`, now or with the next update."""
        self._pending.append(text)
        wait = self._last + self._every - asyncio.get_running_loop().time()
        if wait <= 0:
            await self.flush()
        elif self._timer is None:
            self._later(wait)

    async def restart(self) -> None:
        """A new model call's text follows: it starts the artifact anew."""
        await self.flush()
        self._fresh = True

    async def flush(self) -> None:
        """Send what waits now (before a status update, say, so the order holds)."""
        if self._timer is not None and self._sleeping:
            self._timer.cancel()  # one already sending goes first: the lock keeps the order
            self._timer = None
        async with self._lock:
            if not self._pending:
                return
            text = "".join(self._pending)
            self._pending.clear()
            await self._updater.add_artifact(
                [text_part(text)],
                artifact_id=self._artifact_id,
                name=self._artifact_id,
                append=not self._fresh,
                last_chunk=False,
            )
            self._fresh = False
            self._last = asyncio.get_running_loop().time()

    def close(self) -> None:
        """Stop a later update, even one sending: the dispatch ended (cancelled, say)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _later(self, wait: float) -> None:
        self._sleeping = True
        self._timer = asyncio.create_task(self._flush_in(wait))

    async def _flush_in(self, wait: float) -> None:
        await asyncio.sleep(wait)
        self._sleeping = False
        # A piece that fails to go (the task ended meanwhile) is not lost to the
        # remote: the whole answer replaces the pieces at the end.
        try:
            await self.flush()
        except Exception:
            _logger.debug("a streamed piece of the answer did not go", exc_info=True)
        if self._timer is asyncio.current_task():
            self._timer = None
            if self._pending:  # what came while this one was sending
                self._later(self._every)
