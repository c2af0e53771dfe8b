"""`Listings`: one session's cached listings, each dropped when the server says its list changed.

A listing is kept only if no change of its list was heard while it was being
fetched (a generation count per list), so a change racing a listing never
leaves the old list cached. Resource templates go with resources: MCP has no
change notice of their own for them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final, Literal, TypeAlias

ListKind: TypeAlias = Literal["tools", "prompts", "resources"]
"""Which of a server's lists a listing or a change notice is about."""

KIND_OF_LISTING: Final[dict[str, ListKind]] = {
    "tools/list": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resources",
}
KIND_OF_NOTICE: Final[dict[str, ListKind]] = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
}


class Listings:
    """The listings of one session, served until a change of their list is heard.

    `enabled` False keeps nothing. A kind marked `unheard` (its changes cannot
    reach this session, say while its stream of changes is being reopened)
    keeps nothing either, as a cached listing of it could go stale unnoticed,
    until it is marked `heard` again.
    """

    def __init__(self, *, enabled: bool) -> None:
        """Start with nothing cached; with `enabled` False, nothing ever is."""
        self.enabled: Final = enabled
        self._generations: dict[ListKind, int] = {"tools": 0, "prompts": 0, "resources": 0}
        self._kept: dict[str, tuple[int, tuple[Any, ...]]] = {}
        self._unheard: set[ListKind] = set()

    def get(self, method: str) -> list[Any] | None:
        """The cached items of the listing `method` (say `tools/list`), or `None` if not cached."""
        kept = self._kept.get(method)
        if kept is None or kept[0] != self._generations[KIND_OF_LISTING[method]]:
            return None
        return list(kept[1])

    def generation(self, method: str) -> int:
        """A token taken before fetching `method`: `keep` tells by it if its list changed since."""
        return self._generations[KIND_OF_LISTING[method]]

    def keep(self, method: str, generation: int, items: Iterable[Any]) -> None:
        """Cache `items` as the listing `method`, unless its list changed since `generation`."""
        kind = KIND_OF_LISTING[method]
        if self.enabled and kind not in self._unheard and generation == self._generations[kind]:
            self._kept[method] = (generation, tuple(items))

    def changed(self, kind: ListKind) -> None:
        """The server said the list `kind` changed: its listings are fetched again."""
        self._generations[kind] += 1
        for method, listed in KIND_OF_LISTING.items():
            if listed == kind:
                self._kept.pop(method, None)

    def unheard(self, kinds: Iterable[ListKind]) -> None:
        """Changes of `kinds` can no longer reach this session: drop and stop caching them."""
        for kind in kinds:
            self._unheard.add(kind)
            self.changed(kind)

    def heard(self, kinds: Iterable[ListKind]) -> None:
        """Changes of `kinds` reach this session again: cache them anew, from a new listing.

        A listing fetched while they went unheard is not kept: it may be stale.
        """
        for kind in kinds:
            self._unheard.discard(kind)
            self.changed(kind)

    def clear(self) -> None:
        """Drop every cached listing (`MCPClient.invalidate_cache`)."""
        for kind in tuple(self._generations):
            self.changed(kind)
