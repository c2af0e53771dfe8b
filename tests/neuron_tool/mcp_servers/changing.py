"""An MCP server whose tools, prompts and resources change on request, and which says so.

Tools: `add_tool(name)` and `remove_tool(name)` add or remove a tool (which answers
its own name), `add_prompt(name)` and `add_resource(uri)` add to those lists,
`update(uri, text)` sets a resource's text and says it was updated, `end_streams`
ends every change stream it holds (MCP 2026-07-28; new ones are served),
`drop_streams(times)` ends them and answers the next `times` asked for at once,
without acknowledging them, `break_streams` ends them with an error answer (a
failure mid-stream, not a close), `refuse_streams(code)` ends them and refuses every one
asked for from then on (with `code`, by default method not found), `fill_streams` ends
them and has the MCP SDK's own `ListenHandler` refuse the next ones as past its limit
of open streams (an internal error: "Subscription limit reached"), `make_room` serves
them again, `streams` answers how many are open and how many were asked for,
`counts` answers how many listings and completions it served, `pid` its process id,
`echo(text)` the text.

Prompt `greet` (arguments `name`, required, and `style`); resource `note://current`;
template `note://{name}`. Completions of `greet`'s `style` (`many`: 101 values,
`short`: a total below the values sent) and of the template's `name`; a `name` of
`Ada` in the context narrows `style` to `ada`. The values in `UNCHECKED` are answered
as they are, bypassing the MCP SDK's check of what a server sends (which on MCP
2026-07-28 refuses more than 100 values): `over`, 101 values; `hundred`, exactly 100
and more to come; `below`, a total below the values sent; `negative`, a negative
total; `fraction`, a total that is no integer; `text`, a total and a `hasMore` that
are strings.

`update(uri, text)` on a 2026-07-28 stream also tells of a sub-resource of a URI the
stream carries (a URI beginning with it), as MCP lets a server and as the handshake
era does: the SDK's own `ListenHandler` tells of its URIs exactly, so the gate sends
those itself. `tell(uri)` tells every open stream of resource updates that `uri` was
updated, whatever URIs the stream carries, as a careless (or hostile) server might.

`python changing.py [legacy] [quiet] [refuse] [drop] [full]`: `legacy` serves only the
handshake era (MCP 2025-11-25: change notices sent unasked, `resources/subscribe`);
`quiet` changes its lists without saying so; `refuse` declares change streams but
refuses every one, as `refuse_streams` does; `drop` answers the first stream asked for
at once, unacknowledged, as `drop_streams` does; `full` starts as `fill_streams` leaves
it, until `make_room`. Without `legacy` a client speaking MCP
2026-07-28 hears of changes on `subscriptions/listen` streams. `Changing(...).server(...)`
is the same server in this process, for serving over HTTP.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import (
    SUBSCRIPTION_ID_META_KEY,
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import event_to_notification
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

NOT_FOUND = -32002
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603
STYLES = ["formal", "friendly", "funny", "flowery", "plain"]
NAMED = {"type": "object", "properties": {"name": {"type": "string"}}}
TEXT = {"type": "object", "properties": {"text": {"type": "string"}}}
UPDATE = {"type": "object", "properties": {"uri": {"type": "string"}, "text": {"type": "string"}}}
NOTHING: dict[str, Any] = {"type": "object", "properties": {}}
BUILT_IN = {
    "add_tool": NAMED,
    "remove_tool": NAMED,
    "add_prompt": NAMED,
    "add_resource": {"type": "object", "properties": {"uri": {"type": "string"}}},
    "update": UPDATE,
    "tell": {"type": "object", "properties": {"uri": {"type": "string"}}},
    "end_streams": NOTHING,
    "drop_streams": {"type": "object", "properties": {"times": {"type": "integer"}}},
    "refuse_streams": {"type": "object", "properties": {"code": {"type": "integer"}}},
    "fill_streams": NOTHING,
    "make_room": NOTHING,
    "break_streams": NOTHING,
    "streams": NOTHING,
    "counts": NOTHING,
    "pid": NOTHING,
    "echo": TEXT,
}
GREET = types.Prompt(
    name="greet",
    arguments=[
        types.PromptArgument(name="name", required=True),
        types.PromptArgument(name="style"),
    ],
)
TEMPLATE = types.ResourceTemplate(uri_template="note://{name}", name="note")


UNCHECKED: dict[str, dict[str, Any]] = {
    "over": {"values": [f"over{index}" for index in range(101)]},
    "hundred": {"values": [f"v{index}" for index in range(100)], "total": 250, "hasMore": True},
    "below": {"values": ["a", "b", "c"], "total": 2},
    "negative": {"values": [], "total": -1},
    "fraction": {"values": ["a"], "total": 2.5},
    "text": {"values": ["a"], "total": "many", "hasMore": "yes"},
}
"""Completions answered as they are, not as the SDK would let a server send them."""


Carried = tuple[ServerRequestContext[Any], frozenset[str]]
"""An open stream's request, and the URIs it asked to be told of."""

REFUSED = "subscriptions/listen is not served here"
BROKEN = "the stream broke"


def _text(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)])


class Gate:
    """Serves `subscriptions/listen` with the bus's handler, unless told to drop or refuse it.

    Without `room` the streams go to a handler of the SDK's with none (no open
    streams allowed), which refuses each as past its limit, in its own words.
    """

    def __init__(self, bus: InMemorySubscriptionBus, *, refusing: int | None = None) -> None:
        self.listen = ListenHandler(bus)
        self.crowded = ListenHandler(bus, max_subscriptions=0)
        self.room = True
        self.refusing = refusing  # the code every stream is refused with, if any
        self.dropping = 0  # how many of the next streams are answered at once, unacknowledged
        self.open = 0
        self.asked = 0
        self.serving: set[anyio.CancelScope] = set()
        # Each open stream's request and the URIs it asked for: for telling of sub-resources.
        self.carrying: dict[anyio.CancelScope, Carried] = {}

    async def __call__(
        self, context: ServerRequestContext[Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        self.asked += 1
        if self.refusing is not None:
            raise MCPError(self.refusing, REFUSED)
        if self.dropping:
            self.dropping -= 1
            # The spec's graceful close, sent before any acknowledgment.
            meta = {SUBSCRIPTION_ID_META_KEY: context.request_id}
            return types.SubscriptionsListenResult(_meta=meta)
        self.open += 1
        scope = anyio.CancelScope()
        self.serving.add(scope)
        if self.room:
            uris = frozenset(params.notifications.resource_subscriptions or ())
            self.carrying[scope] = (context, uris)
        try:
            with scope:
                return await (self.listen if self.room else self.crowded)(context, params)
            # Broken mid-stream: an error answer after the acknowledgment, not a close.
            raise MCPError(INTERNAL_ERROR, BROKEN)
        finally:
            self.serving.discard(scope)
            self.carrying.pop(scope, None)
            self.open -= 1

    async def tell_sub_resource(self, uri: str) -> None:
        """Tell each open stream of `uri` if it is a sub-resource of a URI it carries.

        A URI it carries itself the SDK's handler tells of, from the bus.
        """
        for context, uris in list(self.carrying.values()):
            if uri in uris or not any(map(uri.startswith, uris)):
                continue
            meta = {SUBSCRIPTION_ID_META_KEY: context.request_id}
            notice = event_to_notification(ResourceUpdated(uri=uri), meta)
            await context.session.send_notification(notice, related_request_id=context.request_id)

    async def tell_all(self, uri: str) -> None:
        """Tell every open stream of resource updates that `uri` was, whatever URIs it carries."""
        for context, uris in list(self.carrying.values()):
            if not uris:
                continue  # one of list changes only
            meta = {SUBSCRIPTION_ID_META_KEY: context.request_id}
            notice = event_to_notification(ResourceUpdated(uri=uri), meta)
            await context.session.send_notification(notice, related_request_id=context.request_id)

    def break_all(self) -> None:
        """End every open stream with an error, as a server failing mid-stream does."""
        for scope in self.serving:
            scope.cancel()


class Changing:
    """The server's state, which changes, and its handlers."""

    def __init__(
        self, *, quiet: bool = False, refuse: bool = False, drop: bool = False, full: bool = False
    ) -> None:
        self.quiet = quiet
        self.bus = InMemorySubscriptionBus()
        self.gate = Gate(self.bus, refusing=METHOD_NOT_FOUND if refuse else None)
        self.listen = self.gate.listen
        self.gate.dropping = 1 if drop else 0
        self.gate.room = not full
        self.tools: dict[str, dict[str, Any]] = dict(BUILT_IN)
        self.prompts: dict[str, types.Prompt] = {"greet": GREET}
        self.texts: dict[str, str] = {"note://current": "first"}
        self.subscribed: set[str] = set()  # what a handshake-era client subscribed to
        self.counts: Counter[str] = Counter()

    def server(self, *, legacy: bool = False) -> Server[Any]:
        """The low-level server; `legacy` serves no change streams, as before MCP 2026-07-28."""
        server = Server(
            "changing",
            # Over HTTP a tool call's headers are checked against its schema: from
            # here, so that only a client's listings are counted.
            get_tool_input_schema=self.tools.get,
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
            on_list_prompts=self.list_prompts,
            on_get_prompt=self.get_prompt,
            on_list_resources=self.list_resources,
            on_list_resource_templates=self.list_templates,
            on_read_resource=self.read_resource,
            on_completion=self.complete,
            on_subscribe_resource=self.subscribe,
            on_unsubscribe_resource=self.unsubscribe,
            on_subscriptions_listen=None if legacy else self.gate,
        )
        server.middleware.append(self.unchecked)
        return server

    async def unchecked(self, ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
        """Answer a completion of a value in `UNCHECKED` as it is: the SDK checks only handlers'."""
        params = ctx.params or {}
        argument = params.get("argument")
        value = argument.get("value") if isinstance(argument, dict) else None
        if ctx.method != "completion/complete" or value not in UNCHECKED:
            return await call_next(ctx)
        self.counts["completion/complete"] += 1
        # Returned past the SDK, so with the envelope MCP 2026-07-28 asks of a result.
        return {"completion": UNCHECKED[value], "resultType": "complete"}

    async def list_tools(
        self, context: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        self.counts["tools/list"] += 1
        tools = [types.Tool(name=name, input_schema=schema) for name, schema in self.tools.items()]
        return types.ListToolsResult(tools=tools)

    async def list_prompts(
        self, context: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        self.counts["prompts/list"] += 1
        return types.ListPromptsResult(prompts=list(self.prompts.values()))

    async def list_resources(
        self, context: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        self.counts["resources/list"] += 1
        resources = [types.Resource(uri=uri, name=uri) for uri in self.texts]
        return types.ListResourcesResult(resources=resources)

    async def list_templates(
        self, context: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        self.counts["resources/templates/list"] += 1
        return types.ListResourceTemplatesResult(resource_templates=[TEMPLATE])

    async def get_prompt(
        self, context: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        arguments = params.arguments or {}
        text = f"{params.name}: hello {arguments.get('name', '')}"
        message = types.PromptMessage(role="user", content=types.TextContent(text=text))
        return types.GetPromptResult(messages=[message])

    async def read_resource(
        self, context: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        if params.uri not in self.texts:
            raise MCPError(NOT_FOUND, f"Resource not found: {params.uri}")
        contents = types.TextResourceContents(uri=params.uri, text=self.texts[params.uri])
        return types.ReadResourceResult(contents=[contents])

    async def complete(
        self, context: ServerRequestContext[Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        self.counts["completion/complete"] += 1
        value = params.argument.value
        given = params.context.arguments if params.context and params.context.arguments else {}
        if value == "many":
            return types.CompleteResult(completion=types.Completion(values=["x"] * 101))
        if value == "short":
            return types.CompleteResult(completion=types.Completion(values=["a", "b"], total=1))
        if isinstance(params.ref, types.ResourceTemplateReference):
            names = [uri.removeprefix("note://") for uri in self.texts]
            found = [name for name in names if name.startswith(value)]
        elif given.get("name") == "Ada":
            found = ["ada"]
        else:
            found = [style for style in STYLES if style.startswith(value)]
        completion = types.Completion(values=found[:2], total=len(found), has_more=len(found) > 2)
        return types.CompleteResult(completion=completion)

    async def subscribe(
        self, context: ServerRequestContext[Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        self.subscribed.add(params.uri)
        return types.EmptyResult()

    async def unsubscribe(
        self, context: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        self.subscribed.discard(params.uri)
        return types.EmptyResult()

    async def call_tool(
        self, context: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        arguments = params.arguments or {}
        name = params.name
        if name not in self.tools:
            raise MCPError(-32602, f"Unknown tool: {name}")
        if name == "add_tool":
            self.tools[arguments["name"]] = NOTHING
            await self._say(context, ToolsListChanged())
        elif name == "remove_tool":
            del self.tools[arguments["name"]]
            await self._say(context, ToolsListChanged())
        elif name == "add_prompt":
            self.prompts[arguments["name"]] = types.Prompt(name=arguments["name"])
            await self._say(context, PromptsListChanged())
        elif name == "add_resource":
            self.texts[arguments["uri"]] = "new"
            await self._say(context, ResourcesListChanged())
        elif name == "update":
            self.texts[arguments["uri"]] = arguments["text"]
            await self._say(context, ResourceUpdated(uri=arguments["uri"]))
        elif name == "tell":
            await self.gate.tell_all(arguments["uri"])
        elif name == "end_streams":
            self.listen.close()
        elif name == "drop_streams":
            self.gate.dropping = arguments["times"]
            self.listen.close()
        elif name == "break_streams":
            self.gate.break_all()
        elif name == "refuse_streams":
            self.gate.refusing = arguments.get("code", METHOD_NOT_FOUND)
            self.listen.close()
        elif name == "fill_streams":
            self.gate.room = False
            self.listen.close()
        elif name == "make_room":
            self.gate.room = True
        elif name == "streams":
            return _text(json.dumps({"open": self.gate.open, "asked": self.gate.asked}))
        elif name == "counts":
            return _text(json.dumps(self.counts))
        elif name == "pid":
            return _text(str(os.getpid()))
        elif name == "echo":
            return _text(arguments["text"])
        return _text(name)

    async def _say(self, context: ServerRequestContext[Any], event: Any) -> None:
        """Tell clients of a change: on their streams (2026-07-28), else as notices unasked."""
        if self.quiet:
            return
        if context.protocol_version in MODERN_PROTOCOL_VERSIONS:
            await self.bus.publish(event)
            if isinstance(event, ResourceUpdated):
                await self.gate.tell_sub_resource(event.uri)
            return
        session = context.session
        if isinstance(event, ToolsListChanged):
            await session.send_tool_list_changed()
        elif isinstance(event, PromptsListChanged):
            await session.send_prompt_list_changed()
        elif isinstance(event, ResourcesListChanged):
            await session.send_resource_list_changed()
        elif any(event.uri.startswith(uri) for uri in self.subscribed):
            await session.send_resource_updated(event.uri)


async def main() -> None:
    legacy = "legacy" in sys.argv[1:]
    modes = sys.argv[1:]
    changing = Changing(
        quiet="quiet" in modes, refuse="refuse" in modes, drop="drop" in modes, full="full" in modes
    )
    server = changing.server(legacy=legacy)
    async with stdio_server() as (read_stream, write_stream):
        if not legacy:
            await server.run(read_stream, write_stream, server.create_initialization_options())
            return
        # The handshake era only: a client's MCP 2026-07-28 probe is refused, and it
        # falls back to the initialize handshake.
        changes = NotificationOptions(
            prompts_changed=True, resources_changed=True, tools_changed=True
        )
        options = server.create_initialization_options(changes)
        async with server.lifespan(server) as state:
            await serve_loop(
                server, read_stream, write_stream, lifespan_state=state, init_options=options
            )


if __name__ == "__main__":
    anyio.run(main)
