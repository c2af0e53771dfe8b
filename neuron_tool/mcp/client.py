"""`MCPClient`: one MCP server's tools, prompts and resources, with deadlines and restarts."""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Protocol, Self, TypeVar

import mcp_types as types
from mcp import Client, MCPError
from mcp_types import CONNECTION_CLOSED
from pydantic import JsonValue, ValidationError
from pydantic_core import to_json

from .._json_path import json_path
from .._tool_changes import ToolChanges
from ..context import RunContext
from ..errors import MCPBridgeError, ToolRegistrationError
from ..files import ToolReturn
from ._backoff import DEFAULT_STREAM_BACKOFF, StreamBackoff
from ._connection import Connection
from ._convert import call_result
from ._deliveries import Deliveries
from ._describe import describe
from ._list_watch import ListWatch
from ._listen import Listener
from ._listings import KIND_OF_NOTICE, ListKind
from ._log_secrets import hide_url_secrets_in_logs
from ._refusals import (
    SUBSCRIBE_RETRIES,
    stream_refusal,
    subscribe_refusal,
    subscription_given_up,
    subscription_refused,
)
from ._reopen import Consequences
from ._resource_watch import Opener, ResourceWatch
from ._response_size import DEFAULT_MAX_RESPONSE_BYTES, too_large
from .completions import MCPCompletion, completion_of, completion_request, reference
from .elicitation import ElicitationHandler, refusal
from .endpoint import Endpoint, HttpEndpoint, StdioCommand
from .errors import (
    MCPCapabilityError,
    MCPConnectionError,
    MCPElicitationError,
    MCPInvalidAnswerError,
    MCPRequestError,
    MCPResponseTooLargeError,
    MCPSamplingError,
    MCPSubscriptionClosedError,
    MCPTimeoutError,
)
from .list_changes import ListChangeHandler, MCPListChange
from .prompts import (
    MCPPrompt,
    MCPPromptMessages,
    find_prompt,
    prompt_messages,
    prompt_of,
    prompt_request,
)
from .resources import (
    MCPResource,
    MCPResourceContents,
    MCPResourceTemplate,
    read_request,
    resource_contents,
    resource_of,
    template_of,
)
from .sampling import SamplingHandler
from .sampling import refusal as sampling_refusal
from .subscriptions import PendingSubscription, ResourceUpdateHandler, ResourceUpdates
from .tool import MCPTool

logger = logging.getLogger(__name__)

_T = TypeVar("_T")
_Item_co = TypeVar("_Item_co", covariant=True)
# A server whose cursors never end must not keep a listing busy forever.
_MAX_PAGES: Final = 1000
# How much of an invalid answer a message quotes: a hostile server's may be megabytes.
_ERRORS_SHOWN: Final = 3
_INPUT_SHOWN: Final = 60
_REASON_SHOWN: Final = 300
DEFAULT_CONNECT_TIMEOUT: Final = 10.0
"""Seconds starting a server and the MCP handshake may take unless told otherwise."""
# How the SDK words the `CONNECTION_CLOSED` errors it makes up itself over HTTP.
# A lost response stream ends that request only; the HTTP session goes on.
_HTTP_STREAM_LOST: Final = "SSE stream "
_HTTP_CLOSURES: Final = ("Connection closed", _HTTP_STREAM_LOST)


class _Pager(Protocol[_Item_co]):
    """Fetches one page of a listing: its items and the cursor of the next page, if any."""

    def __call__(
        self, client: Client, *, cursor: str | None
    ) -> Awaitable[tuple[Sequence[_Item_co], str | None]]: ...


class MCPClient:
    """A session with one MCP server, whose tools it offers as `ToolDyn`s.

    It also lists the server's prompts and resources and gets them as layer0
    content (`get_prompt`, `read_resource`), as pydantic-ai's and the OpenAI
    Agents SDK's `MCPServer` do.

    Use it as an async context manager (`async with MCPClient.stdio(...) as
    client`), which connects on entry and always stops the server on exit. It
    also connects by itself on first use, which is what tools registered from a
    manifest rely on. Every request has a deadline; a server found stopped is
    restarted (once per request, logged at WARNING); `close()` reaps a stdio
    server's process. Failures come out as `MCPBridgeError`s naming the server.

    Listings (tools, prompts, resources, templates) are cached until the server
    says the list changed, the session restarts, or `invalidate_cache()`, as
    pydantic-ai's `MCPServer` does, and each change is told to `on_list_changed`;
    a subscribed resource's changes go to `on_resource_updated`; `complete` asks
    for an argument's completions. On an MCP 2026-07-28 session these changes
    come on `subscriptions/listen` streams: one the server ends (or that fails)
    is reopened as `reopen_streams` says (by default after a pause doubling from
    0.5 s to 30 s, ten times in a row at most), for the same lists and resources;
    the lists are not cached while it is down, and what it carries is told as
    changed once it is back. A server that answers the request for a stream with
    an error before acknowledging it refuses it: if the error may pass (an
    internal error, as the MCP SDK's limit of open streams is) it is tried again
    as a stream that ended is; if it is final (method not found, invalid params)
    it is not asked again. Each step is logged with the server's name.
    """

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        name: str | None = None,
        prefix: str = "",
        timeout: float = 60.0,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        elicitation: ElicitationHandler | None = None,
        sampling: SamplingHandler | None = None,
        strict_tools: bool | None = None,
        sequential_tools: bool = False,
        cache_lists: bool = True,
        on_resource_updated: ResourceUpdateHandler | None = None,
        on_list_changed: ListChangeHandler | None = None,
        reopen_streams: StreamBackoff | None = DEFAULT_STREAM_BACKOFF,
    ) -> None:
        """Describe a session with the server at `endpoint`; nothing starts until first use.

        Args:
            endpoint: Where the server is.
            name: The server's name in messages; defaults to the command's file name or the URL.
            prefix: Put before every tool name, so that two servers' tools never collide.
            timeout: Seconds each request (a tool call, a page of tools) may take.
            connect_timeout: Seconds starting the server and the MCP handshake may take
                (default 10); past it, connecting raises `MCPConnectTimeoutError` naming
                the server and the timeout, and a stdio server is stopped. It bounds
                the first use too, so a caller with a deadline of its own passes
                what is left of it here.
            max_response_bytes: The largest answer the server may send, in bytes as
                sent (one JSON-RPC message, content and envelope; default 8 MiB). A
                larger one fails its request with `MCPResponseTooLargeError` naming
                both sizes, and is never held in memory whole. A listing's pages
                together are held to it too (their items measured as JSON).
            elicitation: Answers the server's questions in the middle of a tool call
                (`neuron_tool.mcp.elicitation`); without it the client declares it
                cannot, and a server that asks is told so.
            sampling: Runs the client's model when the server asks for it in the middle
                of a tool call (`neuron_tool.mcp.sampling`; `neuron_turn.ProviderSampler`
                answers with a turn's provider); without it the client declares it
                cannot, and a server that asks is told so.
            strict_tools: True: every tool of the server is strict (`neuron_tool.strict`),
                its input constrained to its schema as the model decodes it, on a
                provider with strict mode; a schema with no strict form is refused
                before the call naming the tool. None: not asked.
            sequential_tools: True: every tool of the server runs alone (`sequential`): a
                model answer calling one has all its calls run one after another, for a
                server that cannot serve calls at once.
            cache_lists: True (the default): a listing of tools, prompts, resources or
                templates is kept and served again until the server says that list
                changed (MCP's `list_changed` notices), the session restarts, or
                `invalidate_cache()`; not while the stream those changes come on (MCP
                2026-07-28) is down and being reopened, nor after the server refused
                it. False, for a server that changes a list without saying so: every
                listing asks the server.
            on_resource_updated: Awaited with an `MCPResourceUpdate` each time the
                server says a resource subscribed to with `subscribe_resource` changed
                (`neuron_tool.mcp.subscriptions`: one at a time, in a task of its own,
                updates of one URI merged and the waiting ones bounded).
            on_list_changed: Awaited with an `MCPListChange` each time the server says
                its tools, prompts or resources changed (`neuron_tool.mcp.list_changes`:
                one at a time, in a task of its own, the changes of one list merged),
                with or without `cache_lists`; a handler that raises is logged.
            reopen_streams: How a change stream (MCP 2026-07-28) that ended, failed to
                open, or was refused with an error that may pass is reopened: a
                `StreamBackoff` (by default 0.5 s doubling to 30 s, ten attempts in a
                row), or None to reopen none, giving each up at once (its lists are
                not cached any more, its resources told as updated and their
                subscriptions ended).

        Raises:
            ValueError: A timeout is not a positive number of seconds, or the cap
                not a positive number of bytes.
            TypeError: `reopen_streams` is neither a `StreamBackoff` nor None.
        """
        for seconds in (timeout, connect_timeout):
            if not 0 < seconds < math.inf:
                raise ValueError(f"timeouts must be a positive number of seconds, got {seconds!r}")
        if isinstance(max_response_bytes, bool) or not (
            isinstance(max_response_bytes, int) and max_response_bytes > 0
        ):
            message = (
                f"max_response_bytes must be a positive number of bytes, got {max_response_bytes!r}"
            )
            raise ValueError(message)
        given: object = reopen_streams  # checked as given: callers need not be typed
        if given is not None and not isinstance(given, StreamBackoff):
            message = f"reopen_streams must be a StreamBackoff or None, got {given!r}"
            raise TypeError(message)
        if isinstance(endpoint, HttpEndpoint):
            hide_url_secrets_in_logs()  # httpx logs each request's URL whole
        self.endpoint: Final = endpoint
        self.name: Final = name if name is not None else endpoint.default_name
        self.prefix: Final = prefix
        self.timeout: Final = timeout
        self.connect_timeout: Final = connect_timeout
        self.max_response_bytes: Final = max_response_bytes
        self.elicitation: Final = elicitation
        self.sampling: Final = sampling
        self.strict_tools: Final = strict_tools
        self.sequential_tools: Final = sequential_tools
        self.cache_lists: Final = cache_lists
        self.reopen_streams: Final = reopen_streams
        self.on_resource_updated: Final = on_resource_updated
        self._updates: Final = (
            None if on_resource_updated is None else ResourceUpdates(self.name, on_resource_updated)
        )
        self.on_list_changed: Final = on_list_changed
        self.tool_changes: Final = ToolChanges()
        """Told each time the server's tools may have changed, as `on_list_changed` is: a
        gateway serving this client (`serve_http`) listens, to tell its own clients."""
        self._list_changes: Final = (
            None
            if on_list_changed is None
            else Deliveries(
                server=self.name,
                handler=on_list_changed,
                event=partial(MCPListChange, self.name),
                # One waiting per list: none is ever dropped, however many the server sends.
                limit=len(set(KIND_OF_NOTICE.values())),
                what="list changes",
                handler_name="on_list_changed",
            )
        )
        described = endpoint.describe()
        self._label: Final = f"MCP server {self.name!r}" + (
            f" ({described})" if described != self.name else ""
        )
        self._closed = False
        self._connection: Connection | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = asyncio.Lock()

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        name: str | None = None,
        prefix: str = "",
        timeout: float = 60.0,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        elicitation: ElicitationHandler | None = None,
        sampling: SamplingHandler | None = None,
        strict_tools: bool | None = None,
        sequential_tools: bool = False,
        cache_lists: bool = True,
        on_resource_updated: ResourceUpdateHandler | None = None,
        on_list_changed: ListChangeHandler | None = None,
        reopen_streams: StreamBackoff | None = DEFAULT_STREAM_BACKOFF,
    ) -> MCPClient:
        """A client for the server that `command` starts, speaking MCP on its stdin and stdout.

        `env` is added to a minimal safe environment (`PATH`, `HOME`, ...), not
        to this process's whole environment. The other keywords are as for
        `MCPClient`.
        """
        endpoint = StdioCommand(command, tuple(args), env=env, cwd=cwd)
        return cls(
            endpoint,
            name=name,
            prefix=prefix,
            timeout=timeout,
            connect_timeout=connect_timeout,
            max_response_bytes=max_response_bytes,
            elicitation=elicitation,
            sampling=sampling,
            strict_tools=strict_tools,
            sequential_tools=sequential_tools,
            cache_lists=cache_lists,
            on_resource_updated=on_resource_updated,
            on_list_changed=on_list_changed,
            reopen_streams=reopen_streams,
        )

    @classmethod
    def http(
        cls,
        url: str,
        *,
        token: str | None = None,
        headers: Mapping[str, str] | None = None,
        name: str | None = None,
        prefix: str = "",
        timeout: float = 60.0,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        elicitation: ElicitationHandler | None = None,
        sampling: SamplingHandler | None = None,
        strict_tools: bool | None = None,
        sequential_tools: bool = False,
        cache_lists: bool = True,
        on_resource_updated: ResourceUpdateHandler | None = None,
        on_list_changed: ListChangeHandler | None = None,
        reopen_streams: StreamBackoff | None = DEFAULT_STREAM_BACKOFF,
    ) -> MCPClient:
        """A client for the Streamable HTTP server at `url`, sending `headers` with every request.

        `token` is sent as `Authorization: Bearer <token>`, as `serve_http`
        requires; it never appears in a `repr` or a message. The other keywords
        are as for `MCPClient`.

        Raises:
            ValueError: Both `token` and an `Authorization` header are given.
        """
        sent = dict(headers or {})
        if token is not None:
            if any(key.lower() == "authorization" for key in sent):
                raise ValueError("give either token or an Authorization header, not both")
            sent["Authorization"] = f"Bearer {token}"
        return cls(
            HttpEndpoint(url, sent),
            name=name,
            prefix=prefix,
            timeout=timeout,
            connect_timeout=connect_timeout,
            max_response_bytes=max_response_bytes,
            elicitation=elicitation,
            sampling=sampling,
            strict_tools=strict_tools,
            sequential_tools=sequential_tools,
            cache_lists=cache_lists,
            on_resource_updated=on_resource_updated,
            on_list_changed=on_list_changed,
            reopen_streams=reopen_streams,
        )

    def __repr__(self) -> str:
        return f"MCPClient({self.endpoint!r}, name={self.name!r})"

    async def __aenter__(self) -> Self:
        await self.connect()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    async def connect(self) -> None:
        """Start or reach the server now rather than on first use, so a broken one fails early.

        Raises:
            MCPConnectionError: The server did not start, was not reached, or failed the handshake.
            MCPConnectTimeoutError: Starting it and the handshake took longer than
                `connect_timeout`.
        """
        self._closed = False
        await self._live()

    async def close(self) -> None:
        """End the session and stop the server; later calls fail until `connect()` is called.

        Subscriptions end with it: after `connect()`, subscribe again. A change
        stream being reopened stops being reopened, at once and without a word;
        a `subscribe_resource` waiting to ask again raises
        `MCPSubscriptionClosedError` (an `MCPConnectionError`) at once, and one
        being asked once its request ends, saying the client was closed.
        """
        self._closed = True
        if self._updates is not None:
            await self._updates.close()
        if self._list_changes is not None:
            await self._list_changes.close()
        if self._loop is not asyncio.get_running_loop():
            self._connection = None  # its event loop has ended, and stopped it
            return
        async with self._lock:
            connection, self._connection = self._connection, None
            if connection is not None:
                await connection.close()

    async def list_tools(self) -> list[MCPTool]:
        """List the server's tools, following pagination cursors, as `ToolDyn`s.

        The listing is cached (`cache_lists`): a tool the server added is in the
        next listing after it says its tools changed. Tools listed into a registry
        stay that registry's; put the client itself among a turn's tools (a tool
        source, `tools_for`) for each run to list them again. An `MCPTool` listed
        earlier goes on calling the server's tool of its name, and one the server
        removed answers with the server's error (`MCPRequestError`).
        """
        return [
            MCPTool(self, tool) for tool in await self._send(self._list_all, retry_if_lost=True)
        ]

    async def tools_for(self, context: RunContext[Any]) -> list[MCPTool]:
        """The server's tools for one run: the client is a tool source (`neuron_tool.source`).

        `NeuronTurn(provider, tools=[client])` lists them at the start of each run
        (cached until the server says they changed), so a run after a change
        offers the server's new tools, as the Agents SDK lists its MCP servers.
        """
        return await self.list_tools()

    async def fetch_manifest(self) -> list[dict[str, Any]]:
        """The server's tools in MCP's wire form: what a plugin ships for `tools_from_manifest`."""
        tools = await self._send(self._list_all, retry_if_lost=True)
        return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]

    def invalidate_cache(self) -> None:
        """Drop the cached listings, so that the next of each asks the server again.

        For a server that changed a list without saying so; one that says so
        needs none of this. A listing under way when this is called is not kept.
        """
        connection = self._connection
        if connection is not None:
            connection.listings.clear()

    def tools_from_manifest(self, manifest: Iterable[Mapping[str, Any]]) -> list[MCPTool]:
        """`ToolDyn`s for tools described in MCP's wire form, without connecting.

        The server starts on the first call of any of them, so a plugin can
        register a server's tools without starting it. The session lives until
        `close()` or the end of the event loop; a new loop starts a new one.

        Example::

            TIME = MCPClient.stdio("uvx", ["mcp-server-time"], name="time", prefix="time_")
            # Saved once from `await TIME.fetch_manifest()` and shipped with the plugin.
            MANIFEST = json.loads(files(__package__).joinpath("time.json").read_text())


            @hookimpl
            def register_tools(register):
                for tool in TIME.tools_from_manifest(MANIFEST):
                    register(tool)

        Raises:
            ToolRegistrationError: An entry is not an MCP tool description.
        """
        tools = []
        for entry in manifest:
            try:
                tool = types.Tool.model_validate(entry)
            except ValidationError as exc:
                name = str(entry.get("name", "?"))
                reason = f"not an MCP tool description: {describe(exc)}"
                raise ToolRegistrationError(name, reason) from exc
            tools.append(MCPTool(self, tool))
        return tools

    async def call_tool(
        self, name: str, arguments: Mapping[str, JsonValue], *, retry_if_lost: bool = False
    ) -> JsonValue | ToolReturn:
        """Call the server's tool `name` (its own name, without our prefix) and return its result.

        The result is the structured content if the server sent some, else the
        content as text (images and resources described). Images (PNG, JPEG,
        GIF, WebP) and embedded PDF or plain-text blobs also come as files: the
        result is then a `ToolReturn` of that value and those files. Data that
        does not decode as base64 is only described, saying so, as is an image
        whose bytes are none of those four; an image's type is its bytes', not
        what the server calls it (a model API refuses a mismatch). If the session is
        lost during the call, the call is sent again to a restarted server only
        if `retry_if_lost` (say, for a read-only tool); otherwise the error says
        the server stopped, and the next call restarts it.

        Raises:
            MCPToolError: The tool answered with an error result.
            MCPConnectionError: The server could not be started or stopped during the call.
            MCPTimeoutError: The call took longer than `timeout`.
            MCPRequestError: The server answered with a JSON-RPC error.
            MCPResponseTooLargeError: The answer was larger than `max_response_bytes`.
            MCPBridgeError: The server answered with nonsense.
        """
        send = partial(self._call_tool, name=name, arguments=dict(arguments))
        result = await self._send(send, retry_if_lost=retry_if_lost)
        return call_result(result, server=self.name, tool=name)

    async def _call_tool(
        self, connection: Connection, *, name: str, arguments: dict[str, JsonValue]
    ) -> types.CallToolResult:
        call = partial(_call_tool, name=name, arguments=arguments)
        return await self._request(connection, f"the call to tool {name!r}", call)

    async def list_prompts(self) -> list[MCPPrompt]:
        """List the server's prompts, following pagination cursors; none if it declares none.

        Cached as `list_tools` is, until the server says its prompts changed.

        Raises:
            MCPBridgeError: As for `call_tool` (`MCPInvalidAnswerError` for a
                listing that is not MCP's, or a cursor sent twice).
        """
        listed = await self._send(self._list_prompts, retry_if_lost=True)
        return [prompt_of(prompt, server=self.name) for prompt in listed]

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None
    ) -> MCPPromptMessages:
        """The server's prompt `name` filled in with `arguments`: its messages as layer0 content.

        The prompt is looked up in the server's listing first, and `arguments`
        checked against what it declares; nothing is sent for a prompt it does
        not list or arguments it does not take. `.text()` of the answer is a
        system prompt, `.content()` a turn's input message.

        Raises:
            MCPUnknownPromptError: The server lists no prompt `name`.
            MCPUndeclaredArgumentError: An argument the prompt does not declare.
            MCPMissingArgumentError: A required argument is missing.
            TypeError: An argument's value is not a string.
            MCPRequestError: The server answered with a JSON-RPC error.
            MCPInvalidAnswerError: The answer is not MCP's (a role other than user
                or assistant, base64 that does not decode...).
            MCPBridgeError: As for `call_tool`: not started, lost, timed out, too large.
        """
        send = partial(self._get_prompt, name=name, arguments=dict(arguments or {}))
        result = await self._send(send, retry_if_lost=True)
        return prompt_messages(result, server=self.name, prompt=name)

    async def list_resources(self) -> list[MCPResource]:
        """List the server's resources, following pagination cursors; none if it declares none.

        Raises:
            MCPBridgeError: As for `list_prompts`.
        """
        send = partial(self._list_offered, method="resources/list", page=_resources_page)
        listed = await self._send(send, retry_if_lost=True)
        return [resource_of(resource, server=self.name) for resource in listed]

    async def list_resource_templates(self) -> list[MCPResourceTemplate]:
        """List the server's resource templates, following pagination cursors; none if it has none.

        Raises:
            MCPBridgeError: As for `list_prompts`.
        """
        send = partial(self._list_offered, method="resources/templates/list", page=_templates_page)
        listed = await self._send(send, retry_if_lost=True)
        return [template_of(template, server=self.name) for template in listed]

    async def subscribe_resource(self, uri: str) -> None:
        """Ask the server to say when the resource at `uri` changes; `on_resource_updated` hears it.

        On an MCP 2026-07-28 session every subscribed URI shares one
        `subscriptions/listen` stream, opened anew for the new set (then the old
        one closed); on an earlier one this sends `resources/subscribe`.
        Subscribing again is a no-op. The subscription outlives a restarted
        server: the new session subscribes again and an update is delivered for
        `uri`, as it may have changed unseen. If the server ends the stream, it
        is reopened for the same URIs (as `MCPClient` says, logged) and an update
        delivered for each once it is back, for the same reason; if it cannot be
        (the server refuses it, or it keeps failing), an update is delivered for
        each and the subscriptions end, a restarted server not asked for them
        either: subscribe again to resume.

        A server that refuses the subscription (either era) is judged by the
        error's JSON-RPC code, never its words, as a refused change stream is
        (`_refusals`): one that may pass (an internal error such as the MCP SDK's
        "Subscription limit reached", a timeout, a server error) is asked again
        after the pauses of `reopen_streams`, each refusal logged with the
        server's name (not at all with `reopen_streams=None`); a final one (method
        not found, invalid params) is not asked again. Whatever fails, the URI is
        left unsubscribed and the stream as it was, so no later reopening or
        restart subscribes it; cancelling the call, in a pause too, leaves the
        same and no task behind. The later call wins over one under way: an
        `unsubscribe_resource(uri)` made during a pause ends it at once, or one
        made as the server is asked has its subscription ended once answered,
        and this returns, as if it had been taken and then unsubscribed (no
        update of `uri` is heard; a subscribe made after the unsubscribe is
        kept). So does one whose request then fails (refused for good, its
        attempts spent, the server lost): the caller withdrew it, so how asking
        ended is logged, not raised. `close()` ends a pause at once, and one
        being asked once the request ends, raising `MCPSubscriptionClosedError`:
        an `MCPConnectionError`, as any call to a closed client raises, saying the
        client was closed and nothing is subscribed, rather than a refusal, since
        the server refused nothing.

        Raises:
            ValueError: The client has no `on_resource_updated`, so no update could be heard.
            MCPCapabilityError: The server does not declare `resources.subscribe`;
                nothing was sent.
            MCPSubscriptionClosedError: `close()` was called while this waited to ask
                again or as the server was asked (it says which).
            MCPConnectionError: As for `call_tool`.
            MCPSubscriptionFinalError: The server refused it with a final error, after
                one request: asking again will not change it.
            MCPSubscriptionGaveUpError: The server refused it with an error that may
                pass each time it was asked (`attempts`, over `seconds`).
            MCPBridgeError: As for `call_tool`: not started, lost, timed out.
        """
        updates = self._require_updates(uri)
        with updates.pending(uri) as pending:
            await self._subscribe_until_done(pending)

    async def _subscribe_until_done(self, pending: PendingSubscription) -> None:
        """Ask for `pending`'s subscription until taken, refused, or stopped in a pause."""
        uri = pending.uri
        backoff = self.reopen_streams
        loop = asyncio.get_running_loop()
        started = loop.time()
        asked = 0
        while True:
            try:
                await self._send(partial(self._subscribe, pending=pending), retry_if_lost=True)
            except MCPBridgeError as exc:
                # A stop made as the server was asked decides what its failure means.
                stopped = pending.stopped
                if stopped == "closed":
                    raise self._closed_during(uri, "was asked") from exc
                if stopped == "unsubscribed":
                    self._withdrawn(uri, exc)
                    return
                if not isinstance(exc, MCPRequestError):
                    raise
                asked += 1
                refused = subscribe_refusal(exc)
                if not refused.transient:
                    raise subscription_refused(self.name, uri, refused) from exc
                if backoff is None or asked > min(backoff.attempts, SUBSCRIBE_RETRIES):
                    seconds = loop.time() - started
                    raise subscription_given_up(
                        self.name,
                        uri,
                        refused,
                        attempts=asked,
                        seconds=seconds,
                        backoff=backoff is not None,
                    ) from exc
            else:
                if pending.stopped == "closed":
                    raise self._closed_during(uri, "was asked")
                return
            pause = backoff.pause(asked - 1)
            logger.log(
                logging.WARNING if asked == 1 else logging.INFO,
                "%s: the subscription to resource %r was refused for now (asked %d of at most"
                " %d times: %s); asking again in %g s",
                self._label,
                uri,
                asked,
                min(backoff.attempts, SUBSCRIBE_RETRIES) + 1,
                refused,
                pause,
            )
            # The caller's own task waits: cancelling it leaves nothing behind, and the
            # URI is unsubscribed meanwhile, so nothing reopened or restarted takes it.
            await pending.pause(pause)
            if pending.stopped == "closed":
                waited = f"waited to be asked again (refused for now {asked} times)"
                raise self._closed_during(uri, waited)
            if pending.stopped == "unsubscribed":
                logger.info(
                    "%s: the subscription to resource %r, waiting to be asked again, is not"
                    " asked again: unsubscribe_resource was called meanwhile",
                    self._label,
                    uri,
                )
                return

    async def unsubscribe_resource(self, uri: str) -> None:
        """Stop hearing of changes to the resource at `uri`; a no-op if not subscribed.

        A `subscribe_resource(uri)` under way is stopped: one waiting to ask a
        server that refused it for now at once, one being answered once it is
        (its subscription ended, or its failure logged and not raised); it
        returns, and the later call wins.

        Raises:
            MCPCapabilityError: The server does not declare `resources.subscribe`;
                nothing was sent.
            MCPBridgeError: As for `call_tool`: refused, not started, lost, timed out.
        """
        if self._updates is not None:
            self._updates.unsubscribe(uri)
        await self._send(partial(self._unsubscribe, uri=uri), retry_if_lost=True)

    async def complete(
        self,
        ref: MCPPrompt | MCPResourceTemplate,
        argument_name: str,
        value: str,
        context_arguments: Mapping[str, str] | None = None,
    ) -> MCPCompletion:
        """The server's completions of `value`, what is typed so far of an argument of `ref`.

        `ref` is a prompt or a resource template (as listed, or made by hand with
        its name or `uri_template`); `context_arguments` are its arguments already
        filled in, which a server may use to narrow its suggestions. A prompt is
        looked up in the server's listing first, and the argument names checked
        against those it declares, as for `get_prompt`; a template's are checked
        against the variables of its URI template (`MCPResourceTemplate.variables`)
        before the server is even reached.

        Raises:
            MCPCapabilityError: The server does not declare `completions`; nothing was sent.
            MCPUnknownPromptError: The server lists no prompt of `ref`'s name.
            MCPUndeclaredArgumentError: A name the prompt does not declare, or that is no
                variable of the template's URI template; nothing was sent.
            TypeError: `value` or an argument of `context_arguments` is not a string.
            MCPInvalidAnswerError: The answer is not MCP's (more than 100 values,
                values that are not strings, a total below their number).
            MCPBridgeError: As for `call_tool`: refused, not started, lost, timed out.
        """
        context = dict(context_arguments or {})
        given: dict[str, object] = {argument_name: value, **context}  # typed or not
        for name, each in given.items():
            if not isinstance(each, str):
                kind = type(each).__name__
                raise TypeError(f"completion arguments are strings; {name!r} is a {kind}")
        if isinstance(ref, MCPResourceTemplate):
            ref.check_declared(given)  # its URI says what it takes: no listing to ask for
        send = partial(
            self._complete, ref=ref, argument=argument_name, value=value, context=context
        )
        return await self._send(send, retry_if_lost=True)

    async def read_resource(self, uri: str) -> list[MCPResourceContents]:
        """Read the resource at `uri`, sent as given (nothing is fetched here): its contents.

        Text comes as a `TextBlock`, a blob as a file of its media type (see
        `MCPResourceContents`), each naming its uri.

        Raises:
            MCPRequestError: The server answered with a JSON-RPC error (say, no such resource).
            MCPInvalidAnswerError: The answer is not MCP's, or a blob's base64 does not decode.
            MCPBridgeError: As for `call_tool`: not started, lost, timed out, too large.
        """
        read = partial(_read_resource, uri=uri)
        result = await self._send(
            partial(self._request, what=read_request(uri), send=read), retry_if_lost=True
        )
        return resource_contents(result, server=self.name, uri=uri)

    def _require_updates(self, uri: str) -> ResourceUpdates:
        if self._updates is None:
            message = (
                f"subscribing to {uri!r} needs MCPClient(on_resource_updated=...), the handler"
                " its updates go to; this client has none"
            )
            raise ValueError(message)
        return self._updates

    def _heard_update(self, uri: str) -> None:
        if self._updates is not None:
            self._updates.push(uri)

    def _closed_during(self, uri: str, how: str) -> MCPSubscriptionClosedError:
        """The error of a subscribe to `uri` that `close()` stopped as it `how` ("was asked")."""
        return MCPSubscriptionClosedError(self.name, self._label, uri, how)

    def _withdrawn(self, uri: str, failure: MCPBridgeError) -> None:
        """Log the failure of a subscribe to `uri` that an unsubscribe withdrew as it was asked.

        Not raised: the caller said it no longer wants the subscription, so how asking
        for it ended is no error of theirs (and nothing of it is left subscribed).
        """
        logger.info(
            "%s: the subscription to resource %r failed after unsubscribe_resource withdrew"
            " it (not raised): %s",
            self._label,
            uri,
            failure,
        )

    async def _subscribe(self, connection: Connection, *, pending: PendingSubscription) -> None:
        uri = pending.uri
        updates = self._require_updates(uri)
        if pending.stopped is not None:
            return  # stopped as the session was reached: nothing is asked
        # Taken before the request, so that an update sent as it is answered is not lost.
        updates.add(uri)
        if uri in _subscribed(connection):
            return
        try:
            await self._subscribe_on(connection, uri)
        except BaseException:
            # Unless a call made at once took it meanwhile: then it is subscribed.
            if uri not in _subscribed(connection):
                updates.discard(uri)
            raise
        await self._subscribed_unless_stopped(connection, pending)

    async def _subscribed_unless_stopped(
        self, connection: Connection, pending: PendingSubscription
    ) -> None:
        """The server took `pending`'s subscription: kept, unless it was stopped meanwhile.

        Then the later call wins. An unsubscribe made meanwhile found nothing to end
        yet, or ended it already; a close dropped it all (the caller's loop raises).
        """
        uri = pending.uri
        if pending.stopped is None:
            self._require_updates(uri).add(uri)  # again: a call made at once may have dropped it
        elif pending.stopped == "unsubscribed":
            await self._unsubscribe_unless_wanted(connection, uri)

    async def _unsubscribe_unless_wanted(self, connection: Connection, uri: str) -> None:
        """End the session's subscription to `uri` unless a later subscribe wants it again."""
        updates = self._require_updates(uri)
        what = f"the end of the subscription to resource {uri!r}"
        watch = connection.resource_watch
        if watch is not None:
            # Judged under the watch's lock, so a subscribe made meanwhile is kept.
            def wanted(uris: frozenset[str]) -> frozenset[str]:
                return uris if uri in updates.subscribed else uris - {uri}

            await watch.change(wanted, self._opener(connection, what))
        elif uri in connection.subscribed and uri not in updates.subscribed:
            connection.subscribed.discard(uri)
            await self._request(connection, what, partial(_unsubscribe, uri=uri))

    async def _subscribe_on(self, connection: Connection, uri: str) -> None:
        what = _subscription_request(uri)
        self._require_subscribe(connection, what)
        if not connection.modern:
            await self._request(connection, what, partial(_subscribe, uri=uri))
            connection.subscribed.add(uri)
            return
        watch = self._resource_watch(connection)
        await watch.change(lambda uris: (*uris, uri), self._opener(connection, what))
        if uri not in watch.uris:
            reason = "its acknowledgment of the stream leaves the resource out"
            raise MCPInvalidAnswerError(self.name, what, reason)

    async def _unsubscribe(self, connection: Connection, *, uri: str) -> None:
        what = f"the end of the subscription to resource {uri!r}"
        self._require_subscribe(connection, what)
        if uri not in _subscribed(connection):
            return
        watch = connection.resource_watch
        if watch is not None:
            await watch.change(lambda uris: uris - {uri}, self._opener(connection, what))
        else:
            connection.subscribed.discard(uri)
            await self._request(connection, what, partial(_unsubscribe, uri=uri))

    async def _resubscribe(self, connection: Connection) -> None:
        """Subscribe a new session to what the last one was, and say each may have changed."""
        if self._updates is None or not self._updates.subscribed:
            return
        wanted = self._updates.subscribed
        if connection.modern:
            if not await self._resubscribe_modern(connection, wanted):
                return  # a stream for them is being reopened, and tells of each once back
        else:
            for uri in wanted:
                try:
                    await self._subscribe_on(connection, uri)
                except MCPConnectionError:
                    raise
                except MCPBridgeError as exc:
                    logger.warning("%s: %s", self._label, exc)
        taken = _subscribed(connection)
        for uri in wanted:
            if uri in taken:
                self._heard_update(uri)  # it may have changed unseen
            else:
                logger.warning("%s: dropped the subscription to %r", self._label, uri)
                self._updates.discard(uri)

    async def _resubscribe_modern(self, connection: Connection, wanted: tuple[str, ...]) -> bool:
        """Open a new session's stream of updates of `wanted`: False if it is being reopened.

        A refusal that may pass leaves them subscribed, on a stream reopened as
        one that ended is; any other failure is logged, and drops those not taken.
        """
        what = f"the subscription to {len(wanted)} resources"
        try:
            self._require_subscribe(connection, what)
        except MCPBridgeError as exc:
            logger.warning("%s: %s", self._label, exc)
            return True
        watch = self._resource_watch(connection)
        try:
            await watch.change(lambda _: wanted, self._opener(connection, what))
        except MCPConnectionError:
            raise
        except MCPRequestError as exc:
            refused = stream_refusal(exc)
            if not refused.transient:
                logger.warning("%s: %s (%s, which is final)", self._label, exc, refused.meaning)
                return True
            watch.failed(wanted, f"was refused for now ({refused})")
            return False
        except MCPBridgeError as exc:
            logger.warning("%s: %s", self._label, exc)
        return True

    def _resource_watch(self, connection: Connection) -> ResourceWatch:
        if connection.resource_watch is None:
            told = "each is told as updated, as it may have changed unseen"
            connection.resource_watch = ResourceWatch(
                connection.client,
                label=self._label,
                reopen_stream=self._opener(connection, "the stream of updates of its resources"),
                alive=partial(self._alive, connection),
                on_back=self._heard_updates,
                on_end=self._subscriptions_ended,
                backoff=self.reopen_streams,
                consequences=Consequences(
                    down="their updates go unheard",
                    back=told,
                    over=f"{told}; subscribe again to resume",
                ),
            )
        return connection.resource_watch

    def _opener(self, connection: Connection, what: str) -> Opener:
        async def open_stream(listener: Listener) -> types.SubscriptionFilter:
            return await self._request(connection, what, lambda _client: listener.open())

        return open_stream

    def _alive(self, connection: Connection) -> bool:
        """Whether the session of `connection` goes on, so its streams are worth reopening."""
        return connection.lost is None and not self._closed

    def _heard_updates(self, uris: tuple[str, ...]) -> None:
        """Updates of `uris` went unheard for a while (their stream was down): each may be one."""
        for uri in uris:
            self._heard_update(uri)

    def _subscriptions_ended(self, uris: tuple[str, ...]) -> None:
        """Their stream was given up: each is told as updated once more, and is subscribed no more.

        So a restarted server is not asked for them: subscribe again to resume.
        """
        if self._updates is not None:
            self._updates.end(uris)

    def _require_subscribe(self, connection: Connection, what: str) -> None:
        resources = connection.client.server_capabilities.resources
        declared = resources is not None and bool(resources.subscribe)
        self._require(declared, "resources.subscribe", what)

    async def _watch_lists(self, connection: Connection) -> None:
        """On a 2026-07-28 session, open the stream the server tells list changes on.

        For the cache, `on_list_changed` and `tool_changes` (which a gateway may
        listen to at any time, so even a client that caches nothing opens it); an
        earlier session hears them unasked. A list whose changes cannot be heard
        (the stream is down, or refused) is not cached, lest it go stale. A stream
        that ends, fails to open, or is refused with an error that may pass is
        reopened (`_reopen`); one refused with a final error is not asked again.
        """
        if not connection.modern:
            return
        declared = _list_capabilities(connection).items()
        kinds = [kind for kind, cap in declared if getattr(cap, "list_changed", None)]
        if not kinds:
            return
        watch = connection.list_watch = self._list_watch(connection, kinds)
        try:
            honored = await watch.open()
        except MCPConnectionError:
            raise
        except MCPRequestError as exc:
            refused = stream_refusal(exc)
            if refused.transient:
                watch.failed(f"was refused for now ({refused})")
                return
            connection.listings.unheard(kinds)
            logger.warning(
                "%s: its stream of list changes is refused (%s); it is not asked again; %s",
                self._label,
                refused,
                self._unheard_means(now=True),
            )
            return
        except MCPBridgeError as exc:
            watch.failed(f"could not be opened ({exc})")
            return
        connection.listings.unheard(kind for kind in kinds if kind not in honored)

    def _list_watch(self, connection: Connection, kinds: list[ListKind]) -> ListWatch:
        """The stream of changes of `kinds`, to be opened; what its state means, for the log."""
        return ListWatch(
            connection.client,
            kinds,
            label=self._label,
            open_stream=self._opener(connection, "the stream of list changes"),
            alive=partial(self._alive, connection),
            on_down=partial(connection.listings.unheard, kinds),
            on_back=partial(self._lists_back, connection, kinds),
            on_over=partial(self._lists_unseen, kinds),
            backoff=self.reopen_streams,
            consequences=Consequences(
                down=self._unheard_means(now=True),
                back=self._heard_means(),
                over=self._unheard_means(now=False),
            ),
        )

    def _lists_back(
        self, connection: Connection, kinds: list[ListKind], honored: frozenset[ListKind]
    ) -> None:
        """The stream of list changes is back: cache again, and tell each list as changed."""
        connection.listings.heard(honored)
        self._lists_unseen(kinds)

    def _lists_unseen(self, kinds: list[ListKind]) -> None:
        """Changes of `kinds` went unheard for a while: tell each as changed, as it may have."""
        for kind in kinds:
            self._list_changed(kind)

    def _list_changed(self, kind: ListKind) -> None:
        """Tell `on_list_changed`, and `tool_changes` for the tools, that a list changed."""
        if kind == "tools":
            self.tool_changes.changed()
        if self._list_changes is not None:
            self._list_changes.push(kind)

    def _unheard_means(self, *, now: bool) -> str:
        """What a list's changes going unheard costs this client, for the log."""
        means = []
        if self.cache_lists:
            means.append("its lists are not cached" + ("" if now else " any more"))
        if self._list_changes is not None:
            means.append("on_list_changed hears of no " + ("change" if now else "more changes"))
        return "; ".join(means)

    def _heard_means(self) -> str:
        """What a list's changes being heard again does, for the log."""
        means = []
        if self.cache_lists:
            means.append("its lists are cached again")
        if self._list_changes is not None:
            means.append("on_list_changed is told each changed, as it may have unseen")
        return "; ".join(means)

    def _require(self, declared: bool, capability: str, what: str) -> None:
        if not declared:
            raise MCPCapabilityError(self.name, capability, what)

    async def _complete(
        self,
        connection: Connection,
        *,
        ref: MCPPrompt | MCPResourceTemplate,
        argument: str,
        value: str,
        context: dict[str, str],
    ) -> MCPCompletion:
        what = completion_request(ref, argument)
        self._require(
            connection.client.server_capabilities.completions is not None, "completions", what
        )
        if isinstance(ref, MCPPrompt):
            listed = await self._list_prompts(connection)
            prompts = (prompt_of(prompt, server=self.name) for prompt in listed)
            find_prompt(prompts, ref.name, server=self.name).check_declared(
                {**context, argument: value}
            )
        ask = partial(
            _complete,
            ref=reference(ref),
            argument={"name": argument, "value": value},
            context=context or None,
        )
        result = await self._request(connection, what, ask)
        return completion_of(result, server=self.name, what=what)

    async def _list_prompts(self, connection: Connection) -> list[types.Prompt]:
        return await self._list_offered(connection, method="prompts/list", page=_prompts_page)

    async def _get_prompt(
        self, connection: Connection, *, name: str, arguments: dict[str, str]
    ) -> types.GetPromptResult:
        listed = (
            prompt_of(prompt, server=self.name) for prompt in await self._list_prompts(connection)
        )
        find_prompt(listed, name, server=self.name).check(arguments)
        get = partial(_get_prompt, name=name, arguments=arguments or None)
        return await self._request(connection, prompt_request(name), get)

    async def _list_offered(
        self, connection: Connection, *, method: str, page: _Pager[_T]
    ) -> list[_T]:
        """Every page of `method`; nothing, unasked, from a server not declaring the capability."""
        capabilities = connection.client.server_capabilities
        offered = capabilities.prompts if method.startswith("prompts/") else capabilities.resources
        if offered is None:
            return []
        return await self._listing(connection, method, page)

    async def _list_all(self, connection: Connection) -> list[types.Tool]:
        return await self._listing(connection, "tools/list", _tools_page)

    async def _listing(self, connection: Connection, method: str, page: _Pager[_T]) -> list[_T]:
        """The listing `method` from the session's cache, or from the server (and then cached)."""
        listings = connection.listings
        cached = listings.get(method)
        if cached is not None:
            return cached
        generation = listings.generation(method)
        items = await self._list_pages(connection, method, page)
        listings.keep(method, generation, items)
        return items

    async def _list_pages(self, connection: Connection, method: str, page: _Pager[_T]) -> list[_T]:
        """Every item of a paginated listing, each page in its deadline; `_MAX_PAGES` at most.

        The pages together are held to `max_response_bytes`, as one answer is:
        each page is within it, but a thousand of them need not be.

        Raises:
            MCPResponseTooLargeError: The pages' items, as JSON, are past the cap.
        """
        items: list[_T] = []
        cursor: str | None = None
        seen: set[str] = set()
        size = 0
        for number in range(_MAX_PAGES):
            found, cursor = await self._request(connection, method, partial(page, cursor=cursor))
            items.extend(found)
            if cursor is None and number == 0:
                return items  # one page: its transport held it to the cap already
            # Measured as JSON again, as the SDK gives no page's size as sent.
            size += len(to_json(found, by_alias=True, exclude_none=True))
            if size > self.max_response_bytes:
                raise MCPResponseTooLargeError(self.name, method, size, self.max_response_bytes)
            if cursor is None:
                return items
            if cursor in seen:
                raise MCPInvalidAnswerError(self.name, method, f"the cursor {cursor!r} came twice")
            seen.add(cursor)
        raise MCPInvalidAnswerError(self.name, method, f"more than {_MAX_PAGES} pages")

    async def _send(
        self, send: Callable[[Connection], Awaitable[_T]], *, retry_if_lost: bool
    ) -> _T:
        """Run `send` on the live connection, and if lost and `retry_if_lost`, on a new one."""
        connection = await self._live()
        try:
            return await send(connection)
        except MCPConnectionError:
            if not retry_if_lost:
                raise
        return await send(await self._live())

    async def _live(self) -> Connection:
        """The open connection, after starting the server if it is not running."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            # Another event loop (a new `asyncio.run`): the old loop's end
            # cancelled the old session's task, which stopped the server.
            self._loop, self._lock, self._connection = loop, asyncio.Lock(), None
        async with self._lock:
            connection = self._connection
            if connection is not None and connection.lost is None:
                return connection
            if self._closed:
                raise MCPConnectionError(self.name, f"{self._label} is closed")
            if connection is not None:
                logger.warning("%s stopped (%s); restarting it", self._label, connection.lost)
                await connection.close()
            self._connection = await self._open()
            if connection is not None:
                self._lists_may_have_changed(self._connection)
            return self._connection

    def _lists_may_have_changed(self, connection: Connection) -> None:
        """Tell `on_list_changed` of each list a restarted server offers: it may differ now."""
        for kind in _offered_lists(connection):
            self._list_changed(kind)

    async def _open(self) -> Connection:
        connection = await Connection.open(
            self.endpoint,
            server=self.name,
            label=self._label,
            timeout=self.connect_timeout,
            max_response_bytes=self.max_response_bytes,
            elicitation=self.elicitation,
            sampling=self.sampling,
            cache_lists=self.cache_lists,
            on_resource_updated=self._heard_update if self._updates is not None else None,
            on_list_changed=self._list_changed,
        )
        try:
            await self._watch_lists(connection)
            if connection.client.server_capabilities.tools is not None:
                # The SDK checks results against the output schemas of the tools it
                # has seen listed, and lists page one again for any other; listing
                # every page up front spares a request on such calls (and is cached).
                await self._list_all(connection)
            await self._resubscribe(connection)
        except BaseException:
            await connection.close()
            raise
        return connection

    async def _request(
        self, connection: Connection, what: str, send: Callable[[Client], Awaitable[_T]]
    ) -> _T:
        deadline = asyncio.timeout(self.timeout)
        try:
            async with deadline:
                return await send(connection.client)
        except TimeoutError as exc:
            if deadline.expired():
                raise MCPTimeoutError(self.name, what, self.timeout) from exc
            raise MCPBridgeError(f"{self._label} timed out in {what}: {describe(exc)}") from exc
        except MCPError as exc:
            oversize = too_large(exc, self.max_response_bytes)
            if oversize is not None:
                size, limit = oversize
                raise MCPResponseTooLargeError(self.name, what, size, limit) from exc
            if exc.code == CONNECTION_CLOSED and _ended(connection, exc):
                if not exc.message.startswith(_HTTP_STREAM_LOST):
                    await connection.settle()  # the session is ending: wait for its reason
                message = f"{self._label} stopped during {what}: {connection.lost or exc.message}"
                stderr = connection.stderr_tail()
                raise MCPConnectionError(self.name, message, stderr=stderr) from exc
            reason = refusal(exc)
            if reason is not None:
                raise MCPElicitationError(self.name, what, reason) from exc
            reason = sampling_refusal(exc)
            if reason is not None:
                raise MCPSamplingError(self.name, what, reason) from exc
            raise MCPRequestError(self.name, what, exc.code, exc.message) from exc
        except ValidationError as exc:
            raise MCPInvalidAnswerError(self.name, what, _invalid(exc)) from exc
        except RuntimeError as exc:
            raise MCPInvalidAnswerError(self.name, what, _refused_output(exc)) from exc


def _ended(connection: Connection, exc: MCPError) -> bool:
    """Whether a `CONNECTION_CLOSED` error means the session ended, not that the server sent it.

    A live server may answer with that code (-32000 is also the usual "server
    error"). The stdio transport marks the connection lost before the SDK sees
    the end of the stream, so there `lost` alone tells; over HTTP the SDK also
    reports a dropped response stream with the code, in words of its own.
    """
    if connection.lost is not None:
        return True
    if isinstance(connection.endpoint, StdioCommand):
        return False
    return exc.data is None and exc.message.startswith(_HTTP_CLOSURES)


async def _call_tool(
    client: Client, *, name: str, arguments: dict[str, JsonValue]
) -> types.CallToolResult:
    return await client.call_tool(name, arguments)


def _invalid(exc: ValidationError) -> str:
    """Where the answer is wrong and how, briefly: pydantic's own text runs to many lines."""
    errors = exc.errors(include_url=False)
    shown = "; ".join(
        f"{'.'.join(map(str, error['loc']))}: {error['msg']} (got {_brief(error['input'])})"
        for error in errors[:_ERRORS_SHOWN]
    )
    more = len(errors) - _ERRORS_SHOWN
    return shown + (f"; and {more} more" if more > 0 else "")


def _refused_output(exc: RuntimeError) -> str:
    """Why the SDK refused an answer, briefly: its words quote the answer and the schema whole.

    The SDK checks a tool's structured content against its output schema and
    raises a `RuntimeError` from jsonschema's error, whose text holds the value
    that failed, the schema and the whole instance: megabytes from a hostile server.
    """
    from jsonschema.exceptions import SchemaError, ValidationError

    cause = exc.__cause__ or exc.__context__
    if isinstance(cause, SchemaError):
        whose = "the tool's output schema is not a JSON Schema"
    elif isinstance(cause, ValidationError):
        whose = "its structured content does not match the tool's output schema"
    else:
        return _cut(describe(exc), _REASON_SHOWN)
    rule = f"{cause.validator} {_brief(cause.validator_value)}"
    where = json_path(cause.absolute_path)
    return f"{whose} at {where}: {rule} is not met (got {_brief(cause.instance)})"


def _brief(value: object) -> str:
    return _cut(repr(value), _INPUT_SHOWN)


def _cut(text: str, shown: int) -> str:
    return text if len(text) <= shown else text[: shown - 3] + "..."


async def _get_prompt(
    client: Client, *, name: str, arguments: dict[str, str] | None
) -> types.GetPromptResult:
    return await client.get_prompt(name, arguments)


async def _read_resource(client: Client, *, uri: str) -> types.ReadResourceResult:
    return await client.read_resource(uri)


def _list_capabilities(connection: Connection) -> dict[ListKind, object]:
    """What the server of `connection` declares of each of its lists (`None`: it has none)."""
    capabilities = connection.client.server_capabilities
    return {
        "tools": capabilities.tools,
        "prompts": capabilities.prompts,
        "resources": capabilities.resources,
    }


def _offered_lists(connection: Connection) -> list[ListKind]:
    """The lists the server of `connection` declares it has."""
    declared = _list_capabilities(connection).items()
    return [kind for kind, capability in declared if capability is not None]


def _subscribed(connection: Connection) -> AbstractSet[str]:
    """The resources `connection` is subscribed to, in either era."""
    watch = connection.resource_watch
    return watch.uris if watch is not None else connection.subscribed


def _subscription_request(uri: str) -> str:
    return f"the subscription to resource {uri!r}"


async def _subscribe(client: Client, *, uri: str) -> None:
    # The SDK's own subscribe_resource is deprecated (MCP 2026-07-28 has streams);
    # this request is what a session of an earlier version sends.
    request = types.SubscribeRequest(params=types.SubscribeRequestParams(uri=uri))
    await client.session.send_request(request, types.EmptyResult)


async def _unsubscribe(client: Client, *, uri: str) -> None:
    request = types.UnsubscribeRequest(params=types.UnsubscribeRequestParams(uri=uri))
    await client.session.send_request(request, types.EmptyResult)


async def _complete(
    client: Client,
    *,
    ref: types.PromptReference | types.ResourceTemplateReference,
    argument: dict[str, str],
    context: dict[str, str] | None,
) -> types.CompleteResult:
    return await client.complete(ref, argument, context)


async def _tools_page(client: Client, *, cursor: str | None) -> tuple[list[types.Tool], str | None]:
    page = await client.list_tools(cursor=cursor)
    return page.tools, page.next_cursor


async def _prompts_page(
    client: Client, *, cursor: str | None
) -> tuple[list[types.Prompt], str | None]:
    page = await client.list_prompts(cursor=cursor)
    return page.prompts, page.next_cursor


async def _resources_page(
    client: Client, *, cursor: str | None
) -> tuple[list[types.Resource], str | None]:
    page = await client.list_resources(cursor=cursor)
    return page.resources, page.next_cursor


async def _templates_page(
    client: Client, *, cursor: str | None
) -> tuple[list[types.ResourceTemplate], str | None]:
    page = await client.list_resource_templates(cursor=cursor)
    return page.resource_templates, page.next_cursor
