"""Serve one agent of an orchestrator over A2A (JSON-RPC over HTTP), behind a bearer token.

`a2a_app` builds the ASGI app: the a2a-sdk's JSON-RPC endpoint at `/` and
the agent card at `/.well-known/agent-card.json`, behind the guard (Host and
Origin checks everywhere, the bearer token everywhere but the card, a body
size limit). `serve_a2a` runs it with uvicorn until cancelled.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Final

from a2a.server.context import ServerCallContext
from a2a.server.routes import (
    DefaultServerCallContextBuilder,
    create_agent_card_routes,
    create_jsonrpc_routes,
)
from a2a.server.tasks import TaskStore
from a2a.types import AgentCard, AgentSkill
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.types import ASGIApp

from layer0 import AgentId, Orchestrator, StateReader
from neuron_tool.http_guard import (
    GuardRules,
    RequestGuard,
    allowed_hosts_for,
    check_token,
)
from neuron_tool.serving import serve_asgi, server_token

from ._guard import refuse, too_large
from ._handler import CheckingRequestHandler
from ._trace_context import TraceContext
from .card import agent_card
from .executor import A2AExecutor
from .limits import MessageLimits
from .task_store import BoundedTaskStore

__all__ = ["RPC_PATH", "a2a_app", "serve_a2a"]

RPC_PATH: Final = "/"
"""The path of the JSON-RPC endpoint."""
# Open connections (a stream, say) get this long to finish when the server stops.


class _CallContextBuilder(DefaultServerCallContextBuilder):
    """The SDK's call context, without the Authorization header.

    The SDK keeps the request's headers in the context, and logs contexts at
    debug level: the token must not travel there.
    """

    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        headers = context.state.get("headers")
        if isinstance(headers, dict):
            headers.pop("authorization", None)
        return context


def a2a_app(
    executor: A2AExecutor,
    card: AgentCard,
    *,
    token: str,
    allowed_hosts: Sequence[str],
    allowed_origins: Sequence[str] | None = None,
    task_store: TaskStore | None = None,
) -> ASGIApp:
    """The guarded ASGI app serving `executor`'s agent as described by `card`.

    Why: `serve_a2a` runs it, and an application with a server of its own
    mounts it. Every request but the card's needs `Authorization: Bearer
    <token>`; the Host header must be one of `allowed_hosts` (`"name:port"`,
    or `"name:*"` for any port); an Origin header, one of `allowed_origins`
    (default: `http://` and each allowed host); bodies past the executor's
    `MessageLimits.max_request_bytes` are refused.

    Raises:
        ValueError: the token is too short or not header-safe.
    """
    check_token(token)
    handler = CheckingRequestHandler(executor, task_store or BoundedTaskStore(), card)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await handler.aclose()  # no task of a request outlives the server

    app = Starlette(
        routes=[
            *create_agent_card_routes(card),
            *create_jsonrpc_routes(handler, RPC_PATH, context_builder=_CallContextBuilder()),
        ],
        lifespan=lifespan,
    )
    rules = GuardRules.serving(
        token,
        allowed_hosts,
        allowed_origins,
        executor.limits.max_request_bytes,
        public_paths={AGENT_CARD_WELL_KNOWN_PATH},
    )
    return RequestGuard(TraceContext(app), rules, refuse, overflow=too_large)


async def serve_a2a(
    orchestrator: Orchestrator,
    agent: AgentId,
    *,
    card_name: str,
    description: str,
    skills: Sequence[AgentSkill] = (),
    host: str = "127.0.0.1",
    port: int = 8000,
    token: str | None = None,
    allowed_hosts: Sequence[str] | None = None,
    on_ready: Callable[[str], object] | None = None,
    public_url: str | None = None,
    session_prefix: str = "a2a:",
    limits: MessageLimits | None = None,
    task_store: TaskStore | None = None,
    max_running: int = 32,
    state: StateReader | None = None,
) -> None:
    """Serve `agent` of `orchestrator` over A2A at `http://host:port/` until cancelled.

    Why: other agent systems speak A2A; this makes a neuron agent one of
    theirs, as pydantic-ai's `agent.to_a2a()` does, with the house's security.

    Every request but the agent card (`/.well-known/agent-card.json`, which
    declares the bearer scheme) must carry `Authorization: Bearer <token>`, on
    loopback too: any local user can reach a loopback port. Without a `token`
    one is made (`secrets.token_urlsafe(32)`) and printed on stderr with the
    URL. Requests whose Host or Origin header is not allowed are refused
    (DNS-rebinding protection). It binds the loopback interface unless told
    otherwise. Cancelling the call (or SIGINT / SIGTERM) stops the server:
    running tasks are cancelled.

    Args:
        orchestrator: runs the agent's turns (`LocalOrchestrator`, `TemporalOrchestrator`, …).
        agent: the agent served.
        card_name: the agent's name on its card.
        description: what it does, on its card.
        skills: its skills, on its card.
        host: the address to bind; a wider bind is explicit and still needs the token.
        port: the port; 0 picks a free one (`on_ready` gets the URL).
        token: the bearer token clients send; at least 16 printable ASCII characters.
        allowed_hosts: the Host header values accepted (`"name:port"`, or
            `"name:*"` for any port). By default the loopback names on a
            loopback bind and the bound address otherwise; required when
            binding every interface (`"0.0.0.0"`, `"::"`), which has no name.
        on_ready: called with the server's base URL once connections are accepted.
        public_url: the base URL clients reach the server at, for the card
            (default: `http://host:port`).
        session_prefix: see `A2AExecutor`.
        limits: what one request may carry (default: `MessageLimits()`).
        task_store: where the A2A tasks are kept (default: a `BoundedTaskStore`, in memory,
            keeping every task that may still change and the newest 1,000 finished ones,
            64 MiB of them at most).
        max_running: the most dispatches running at once (see `A2AExecutor`).
        state: the store of the agent's sessions, read to learn what a paused
            session waits on (see `A2AExecutor`; default: the orchestrator's `store`).

    Raises:
        ValueError: the token is too short or not header-safe, or a wildcard
            `host` comes without `allowed_hosts`.
    """
    hosts = allowed_hosts_for(host, allowed_hosts)
    token, show = server_token(token)
    executor = A2AExecutor(
        orchestrator,
        agent,
        session_prefix=session_prefix,
        limits=limits,
        max_running=max_running,
        state=state,
    )

    def app_at(url: str) -> ASGIApp:
        base = (public_url or url).rstrip("/")
        card = agent_card(
            name=card_name, description=description, url=base + RPC_PATH, skills=skills
        )
        return a2a_app(executor, card, token=token, allowed_hosts=hosts, task_store=task_store)

    await serve_asgi(
        app_at,
        host=host,
        port=port,
        what=f"A2A agent {agent!r}",
        token=token,
        show_token=show,
        on_ready=on_ready,
    )
