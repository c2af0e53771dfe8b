"""Serve one agent of an orchestrator to AI SDK frontends (a UI message stream), behind a token.

`vercel_ai_app` builds the ASGI app: one POST endpoint taking `useChat`'s
request and answering its chunks as server-sent events, behind the guard
(Host and Origin checks, the bearer token, a body size limit, CORS for the
allowed origins). `serve_vercel_ai` runs it with uvicorn until cancelled.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Final

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp

from layer0 import AgentId, Orchestrator
from neuron_tool import ExternalTool
from neuron_tool.http_guard import (
    LOOPBACK_HOSTS,
    GuardRules,
    Refuse,
    RequestGuard,
    allowed_hosts_for,
    check_token,
    json_refusal,
)
from neuron_tool.serving import serve_asgi, server_token

from ._chunks import Chunk, dumps
from ._request import parse_chat
from .errors import InvalidChatRequestError
from .limits import ChatLimits
from .runner import VercelAiRunner

__all__ = ["CHAT_PATH", "STREAM_HEADERS", "serve_vercel_ai", "vercel_ai_app"]

CHAT_PATH: Final = "/"
"""The path chat requests are POSTed to (the `api` of `DefaultChatTransport`)."""
STREAM_HEADERS: Final = {
    "x-vercel-ai-ui-message-stream": "v1",
    "cache-control": "no-cache",
    "x-accel-buffering": "no",  # a proxy in front must not hold chunks back
}
"""The headers of a UI message stream response, beside its `text/event-stream` type."""
_DONE: Final = b"data: [DONE]\n\n"


class _BodyTooLarge(Exception):
    """A body sent without a length (chunked) went past the limit as it was read."""


def vercel_ai_app(
    orchestrator: Orchestrator,
    agent: AgentId,
    *,
    token: str,
    frontend_tools: Sequence[ExternalTool] = (),
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
    session_prefix: str = "vercel:",
    limits: ChatLimits | None = None,
    max_running: int = 32,
) -> ASGIApp:
    """The guarded ASGI app serving `agent` of `orchestrator` to AI SDK clients at `CHAT_PATH`.

    Why: `serve_vercel_ai` runs it, and an application with a server of its own
    mounts it. Every request needs `Authorization: Bearer <token>`; the Host
    header must be one of `allowed_hosts` (`"name:port"`, or `"name:*"` for any
    port; default: the loopback names); an Origin header, one of
    `allowed_origins` (default: `http://` and each allowed host), whose
    pages may then call it from a browser (CORS); bodies past
    `limits.max_request_bytes` are refused. See `VercelAiRunner` for the chats.

    Raises:
        ValueError: the token is too short or not header-safe.
    """
    check_token(token)
    hosts = tuple(LOOPBACK_HOSTS if allowed_hosts is None else allowed_hosts)
    runner = VercelAiRunner(
        orchestrator,
        agent,
        frontend_tools=frontend_tools,
        session_prefix=session_prefix,
        limits=limits,
        max_running=max_running,
    )
    limit = runner.limits.max_request_bytes

    async def chat(request: Request) -> Response:
        try:
            body = await request.body()
        except _BodyTooLarge:
            return _error(413, f"the request body is larger than {limit} bytes")
        except ClientDisconnect:
            return Response(status_code=400)  # nobody reads it
        try:
            parsed = parse_chat(body)
        except InvalidChatRequestError as exc:
            return _error(400, str(exc))
        # Starlette's streaming response cancels the stream (and so the dispatch) when
        # the client goes away, even while nothing is written.
        return StreamingResponse(
            _events(runner.chat(parsed)), media_type="text/event-stream", headers=STREAM_HEADERS
        )

    async def http_error(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        said = {404: f"not found; POST chats to {CHAT_PATH}", 405: f"POST chats to {CHAT_PATH}"}
        return _error(status, said.get(status, "the request cannot be answered"))

    app = Starlette(
        routes=[Route(CHAT_PATH, chat, methods=["POST"])],
        exception_handlers={HTTPException: http_error},
    )
    rules = GuardRules.serving(token, hosts, allowed_origins, limit)
    return RequestGuard(app, rules, _refuse, overflow=lambda limit: _BodyTooLarge())


async def _events(chunks: AsyncIterator[Chunk]) -> AsyncIterator[bytes]:
    async for chunk in chunks:
        yield dumps(chunk)
    yield _DONE


def _error(status: int, message: str) -> Response:
    return JSONResponse({"error": message}, status_code=status)


_refuse: Final[Refuse] = json_refusal("vercel-ai")


async def serve_vercel_ai(
    orchestrator: Orchestrator,
    agent: AgentId,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    token: str | None = None,
    frontend_tools: Sequence[ExternalTool] = (),
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
    on_ready: Callable[[str], object] | None = None,
    session_prefix: str = "vercel:",
    limits: ChatLimits | None = None,
    max_running: int = 32,
) -> None:
    """Serve `agent` of `orchestrator` to AI SDK frontends at `http://host:port/` until cancelled.

    Why: `useChat` (`@ai-sdk/react`, AI SDK 5 and 6) talks to its backend with
    the UI message stream protocol; this makes a neuron agent one, as
    pydantic-ai's `VercelAIAdapter` does, with the house's security.

    Every request must carry `Authorization: Bearer <token>` (the transport's
    `headers`), on loopback too: any local user can reach a loopback port.
    Without a `token` one is made (`secrets.token_urlsafe(32)`) and printed on
    stderr with the URL. Requests whose Host or Origin header is not allowed
    are refused (DNS-rebinding protection). It binds the loopback interface
    unless told otherwise. Cancelling the call (or SIGINT / SIGTERM) stops the
    server: running chats are cancelled.

    Args:
        orchestrator: runs the agent's turns (`LocalOrchestrator`, `TemporalOrchestrator`, …).
        agent: the agent served.
        host: the address to bind; a wider bind is explicit and still needs the token.
        port: the port; 0 picks a free one (`on_ready` gets the URL).
        token: the bearer token clients send; at least 16 printable ASCII characters.
        frontend_tools: the tools the client runs (see `VercelAiRunner`).
        allowed_hosts: the Host header values accepted (`"name:port"`, or
            `"name:*"` for any port). By default the loopback names on a
            loopback bind and the bound address otherwise; required when
            binding every interface (`"0.0.0.0"`, `"::"`), which has no name.
        allowed_origins: the Origin header values accepted (default: `http://`
            and each allowed host); a request without one is not checked.
        on_ready: called with the server's base URL once connections are accepted.
        session_prefix: see `VercelAiRunner`.
        limits: what one request may carry (default: `ChatLimits()`).
        max_running: the most chats at once (see `VercelAiRunner`).

    Raises:
        ValueError: the token is too short or not header-safe, or a wildcard
            `host` comes without `allowed_hosts`.
    """
    hosts = allowed_hosts_for(host, allowed_hosts)
    token, show = server_token(token)
    app = vercel_ai_app(
        orchestrator,
        agent,
        token=token,
        frontend_tools=frontend_tools,
        allowed_hosts=hosts,
        allowed_origins=allowed_origins,
        session_prefix=session_prefix,
        limits=limits,
        max_running=max_running,
    )
    await serve_asgi(
        lambda base: app,
        host=host,
        port=port,
        what=f"AI SDK agent {agent!r}",
        token=token,
        show_token=show,
        on_ready=on_ready,
    )
