"""`ToolChanges`: a tool source's word that its tools changed, for whoever listens.

A served registry (`neuron_tool.mcp.serve_http`) asks its sources on every
listing, so a client that lists again sees a source's new tools; it is told
to list again only if someone says they changed. A source says so through a
`ToolChanges` it carries as `tool_changes`; every `MCPClient` has one, told
each time its server's tools may have changed. A view of a source
(`filtered_tools`, `prefixed_tools`, ...) says what its source says.

A change carries nothing but itself: listeners list again to see it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Final, Protocol

__all__ = ["ToolChanges", "tool_changes_of"]

logger = logging.getLogger(__name__)

_MOST_VIEWS: Final = 32
"""How deep views of views are followed to their source: a cycle must not hang a server."""


class _ListChange(Protocol):
    """What an `MCPClient` tells its `on_list_changed` handler (`MCPListChange`)."""

    @property
    def kind(self) -> str:
        """Which of the server's lists changed: `tools`, `prompts` or `resources`."""
        ...


class ToolChanges:
    """Tells each listener that a tool source's tools changed, when `changed()` is called.

    Listeners are plain functions, called at once, in the order they began
    listening; one that raises is logged, and the others are still told.
    """

    def __init__(self) -> None:
        """No listeners yet."""
        self._listeners: dict[object, Callable[[], None]] = {}

    def __repr__(self) -> str:
        return f"ToolChanges(listeners={len(self._listeners)})"

    def listen(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call `listener()` at each change from now on; returns the function that stops it."""
        token = object()  # a listener may listen twice, and stop each once
        self._listeners[token] = listener

        def stop() -> None:
            self._listeners.pop(token, None)

        return stop

    def changed(self) -> None:
        """The source's tools changed: tell each listener."""
        for listener in list(self._listeners.values()):
            try:
                listener()
            except Exception:  # one listener's fault must not keep the others untold
                logger.exception("a listener of tool changes raised; the others are still told")

    async def __call__(self, change: _ListChange) -> None:
        """As an `MCPClient`'s `on_list_changed`: a change of the server's tools is one."""
        if change.kind == "tools":
            self.changed()


def tool_changes_of(source: object) -> ToolChanges | None:
    """What says `source`'s tools changed: its `tool_changes` (every `MCPClient` has one).

    A view is followed to the source it shapes (`source`).
    """
    for _ in range(_MOST_VIEWS):
        found = getattr(source, "tool_changes", None)
        if isinstance(found, ToolChanges):
            return found
        source = getattr(source, "source", None)
        if source is None:
            return None
    return None
