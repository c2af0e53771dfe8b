"""A server's word that one of its lists changed, told to `MCPClient(on_list_changed=...)`.

An MCP server may add and remove tools, prompts and resources while it runs,
and say so: a `notifications/tools/list_changed` notice (or `prompts/`,
`resources/`) sent unasked before MCP 2026-07-28, on the `subscriptions/listen`
stream the client opens from then on. The client drops its cached listing of
that list (`cache_lists`) and awaits its `on_list_changed` handler with an
`MCPListChange`, as the OpenAI Agents SDK's `onToolsChanged` does: to list
again, rebuild what was built from the old list, or tell a person.

A change carries no list: list again to see it. Changes are level triggers, so
they are merged rather than queued: one of a list already waiting for the
handler is the same change, and at most one per list waits however many the
server sends (a flood costs a dictionary update a notice). The handler is
awaited one change at a time, in a task of its own (it may call the client);
a handler that raises is logged with the server's name and the next change is
still delivered. A restarted server's lists are told as changed too, as each
may have changed unseen; so are those of a stream of changes the server ended,
once the client has reopened it (or, if it cannot, once it gives it up).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, TypeAlias

__all__ = ["ListChangeHandler", "MCPListChange"]


@dataclass(frozen=True)
class MCPListChange:
    """The MCP server `server` said its list of `kind` changed: list them again to see how.

    `resources` covers the resource templates too: MCP has no notice of their own
    for them.
    """

    server: str
    kind: Literal["tools", "prompts", "resources"]


ListChangeHandler: TypeAlias = Callable[[MCPListChange], Awaitable[None]]
"""What `MCPClient(on_list_changed=...)` takes: awaited with each change, one at a time."""
