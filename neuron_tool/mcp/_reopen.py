"""`Reopener`: reopens a change stream that ended while its session lives, within bounds.

MCP 2026-07-28 has no replay: a `subscriptions/listen` stream that ends loses
what it would have told, so the client listens again and has what depended on
it looked at anew, as the SDK's own docstrings advise. A stream that ended (a
graceful close, a dropped HTTP response, one that failed to open) is tried
again after the pauses of the client's `StreamBackoff`, or given up at once if
it has none. A server that answers the request for a stream with a JSON-RPC
error before acknowledging it refuses it: an error that may pass (`_refusals`:
an internal error such as the MCP SDK's limit of open streams) is one more
failed attempt, tried again; a final one (method not found) gives the stream
up, and it is not asked again. An error after the acknowledgment ends the
stream, which is reopened: the SDK raises `SubscriptionLost` then. The
session's end (a restart opens its own streams) and the watch's `close` stop
the reopening at once, cancelling a pause or an attempt under way.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

from ..errors import MCPBridgeError
from ._backoff import StreamBackoff
from ._refusals import stream_refusal
from .errors import MCPRequestError

logger = logging.getLogger(__name__)


Attempt = Callable[[], Awaitable[str | None]]
"""Opens the stream once more: `None` once it is back, else why not (then tried again).

Raises `MCPRequestError` if the server refused it (tried again if the refusal
may pass), another `MCPBridgeError` if the attempt failed in a way worth trying again.
"""


@dataclass(frozen=True)
class Consequences:
    """What a stream's state means to its user, for the log lines that tell of it."""

    down: str
    """While it is down, say "until then its lists are not cached"."""
    back: str
    """Once it is back, say "each list is told as changed"."""
    over: str
    """Once it is given up, say "subscribe again to resume"."""


class Reopener:
    """Reopens one stream each time `ended` says it ended, logging each step with the server's name.

    `what` names the stream as it is now ("stream of list changes"); `alive`
    says whether its session still lives; `on_over` is called once the stream
    is given up (refused for good, too many attempts, or no `backoff` to
    reopen it with), after the log says why.
    """

    def __init__(
        self,
        *,
        label: str,
        what: Callable[[], str],
        attempt: Attempt,
        alive: Callable[[], bool],
        on_over: Callable[[], None],
        consequences: Consequences,
        backoff: StreamBackoff | None,
    ) -> None:
        """Nothing to reopen until `ended`."""
        self._label: Final = label
        self._what: Final = what
        self._attempt: Final = attempt
        self._alive: Final = alive
        self._on_over: Final = on_over
        self._consequences: Final = consequences
        self._backoff: Final = backoff
        self._tries = 0
        self._back_at = asyncio.get_running_loop().time()
        self._task: asyncio.Task[None] | None = None

    @property
    def reopening(self) -> bool:
        """Whether a pause or an attempt is under way."""
        return self._task is not None and not self._task.done()

    def ended(self, how: str) -> None:
        """The stream `how` ("ended (the server ended it)"): reopen it, or give it up.

        A call while reopening is already under way is of a stream it replaced: ignored.
        """
        if self.reopening or not self._alive():
            return
        backoff = self._backoff
        if backoff is None:
            self._give_up(f"it {how}, and this client reopens none (reopen_streams=None)")
            return
        loop = asyncio.get_running_loop()
        if loop.time() - self._back_at >= backoff.settle:
            self._tries = 0  # it stayed open: this is a new trouble, not the last one again
        if self._tries >= backoff.attempts:
            spent = f"all {self._tries} attempts spent"
            self._give_up(f"it {how} again too soon after being reopened, with {spent}")
            return
        logger.warning(
            "%s: its %s %s; reopening it in %g s; until then %s",
            self._label,
            self._what(),
            how,
            backoff.pause(self._tries),
            self._consequences.down,
        )
        self._task = loop.create_task(
            self._reopen(backoff), name=f"{self._label}: reopen a change stream"
        )

    async def stop(self) -> None:
        """Stop reopening, cancelling a pause or an attempt under way; nothing is logged."""
        task, self._task = self._task, None
        if task is None or task.done() or task is asyncio.current_task():
            return
        if task.get_loop() is not asyncio.get_running_loop():
            return  # its event loop has ended, and cancelled it
        task.cancel()
        await asyncio.wait([task])

    async def _reopen(self, backoff: StreamBackoff) -> None:
        while True:
            await asyncio.sleep(backoff.pause(self._tries))
            self._tries += 1
            failure = await self._try()
            if failure is None or not self._alive():
                return  # back, given up, or its session ended and a new one has its own
            if self._tries >= backoff.attempts:
                self._give_up(f"it did not reopen in {self._tries} attempts; the last: {failure}")
                return
            logger.info(
                "%s: reopening its %s failed (attempt %d of %d: %s); trying again in %g s",
                self._label,
                self._what(),
                self._tries,
                backoff.attempts,
                failure,
                backoff.pause(self._tries),
            )

    async def _try(self) -> str | None:
        """One attempt: `None` once it is back or given up, else why it failed."""
        if not self._alive():
            return None
        try:
            failure = await self._attempt()
        except MCPRequestError as exc:
            refused = stream_refusal(exc)
            if refused.transient:
                return f"the server refused it for now: {refused}"
            if self._alive():
                self._give_up(f"the server refused to reopen it: {refused}")
            return None
        except MCPBridgeError as exc:
            return str(exc)
        if failure is None and self._alive():
            self._back_at = asyncio.get_running_loop().time()
            logger.info(
                "%s: its %s is reopened (attempt %d); %s",
                self._label,
                self._what(),
                self._tries,
                self._consequences.back,
            )
        return failure

    def _give_up(self, why: str) -> None:
        logger.warning(
            "%s: its %s is given up (%s); %s",
            self._label,
            self._what(),
            why,
            self._consequences.over,
        )
        self._on_over()
