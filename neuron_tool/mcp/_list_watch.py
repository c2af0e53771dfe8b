"""`ListWatch`: the stream a 2026-07-28 session hears its lists' changes on, reopened if it ends.

While the stream is down its lists' changes go unheard, so its user stops
relying on them (`on_down`); once a new stream is acknowledged it relies on
them again (`on_back`, with the lists the server agreed to carry); if the
stream is given up (`_reopen.Reopener`), `on_over` says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from mcp import Client

from ._backoff import StreamBackoff
from ._listen import Listener
from ._listings import ListKind
from ._reopen import Consequences, Reopener
from ._resource_watch import Opener


class ListWatch:
    """The stream of changes of the lists `kinds`, open from `open` until `close`."""

    def __init__(
        self,
        client: Client,
        kinds: Sequence[ListKind],
        *,
        label: str,
        open_stream: Opener,
        alive: Callable[[], bool],
        on_down: Callable[[], None],
        on_back: Callable[[frozenset[ListKind]], None],
        on_over: Callable[[], None],
        consequences: Consequences,
        backoff: StreamBackoff | None,
    ) -> None:
        """No stream yet; `open` opens the first; one that ends is reopened with `backoff`."""
        self._client: Final = client
        self.kinds: Final = tuple(kinds)
        self._open_stream: Final = open_stream
        self._alive: Final = alive
        self._on_down: Final = on_down
        self._on_back: Final = on_back
        self._listener: Listener | None = None
        self._closed = False
        self._reopener: Final = Reopener(
            label=label,
            what=lambda: "stream of list changes",
            attempt=self._reopen,
            alive=self._live,
            on_over=on_over,
            consequences=consequences,
            backoff=backoff,
        )

    async def open(self) -> frozenset[ListKind]:
        """Open the stream: the kinds the server agreed to carry.

        If it ends as it opens, it is reopened as one that ended later is.

        Raises:
            MCPBridgeError: As the opener raises it; nothing is reopened.
        """
        honored = await self._open()
        if self._listener is None:
            self.failed("ended as it opened")
        return honored

    def failed(self, how: str) -> None:
        """The stream `how` ("could not be opened (...)"): rely on it no more, and reopen it."""
        self._on_down()
        self._reopener.ended(how)

    async def close(self) -> None:
        """Close the stream and stop reopening it; nothing more is heard or logged."""
        self._closed = True
        await self._reopener.stop()
        listener, self._listener = self._listener, None
        if listener is not None:
            await listener.close()

    async def _open(self) -> frozenset[ListKind]:
        """Open a stream, current unless it ended as it opened; the kinds it carries."""
        kinds = self.kinds

        def ended(reason: str) -> None:
            if listener is self._listener:  # not one replaced, nor one ended as it opened
                self._listener = None
                self.failed(f"ended ({reason})")

        listener = Listener(
            self._client,
            tools="tools" in kinds,
            prompts="prompts" in kinds,
            resources="resources" in kinds,
            on_end=ended,
        )
        honored = await self._open_stream(listener)
        if not listener.ended:
            self._listener = listener
        flags = {
            "tools": honored.tools_list_changed,
            "prompts": honored.prompts_list_changed,
            "resources": honored.resources_list_changed,
        }
        return frozenset(kind for kind in kinds if flags[kind])

    async def _reopen(self) -> str | None:
        honored = await self._open()
        listener = self._listener
        if listener is None:
            return "it ended as it opened"
        if not honored:
            self._listener = None
            await listener.close()
            return "the server agreed to carry none of its lists"
        if self._live():  # else it is being closed: nothing more is told
            self._on_back(honored)
        return None

    def _live(self) -> bool:
        return not self._closed and self._alive()
