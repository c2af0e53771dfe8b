"""Serve one agent of an orchestrator over AG-UI (server-sent events over HTTP), behind a token.

`ag_ui_app` builds the ASGI app: one POST endpoint taking a `RunAgentInput`
and answering the run's events as `text/event-stream`, behind the guard (Host
and Origin checks, the bearer token, a body size limit). `serve_ag_ui` runs it
with uvicorn until cancelled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from starlette.types import ASGIApp

from layer0 import AgentId, Orchestrator
from neuron_tool.http_guard import (
    LOOPBACK_HOSTS,
    GuardRules,
    RequestGuard,
    allowed_hosts_for,
    check_token,
)
from neuron_tool.serving import serve_asgi, server_token

from ._endpoint import RunEndpoint
from ._guard import refuse
from .limits import RunLimits
from .runner import AgUiRunner

__all__ = ["RUN_PATH", "ag_ui_app", "serve_ag_ui"]

RUN_PATH: Final = "/"
"""The path runs are POSTed to."""
# Open streams get this long to finish when the server stops; then their runs are cancelled.


def ag_ui_app(
    orchestrator: Orchestrator,
    agent: AgentId,
    *,
    token: str,
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
    session_prefix: str = "ag-ui:",
    limits: RunLimits | None = None,
    max_running: int = 32,
    messages_snapshot: bool = True,
) -> ASGIApp:
    """The guarded ASGI app serving `agent` of `orchestrator` over AG-UI at `RUN_PATH`.

    Why: `serve_ag_ui` runs it, and an application with a server of its own
    mounts it. Every request needs `Authorization: Bearer <token>`; the Host
    header must be one of `allowed_hosts` (`"name:port"`, or `"name:*"` for any
    port; default: the loopback names); an Origin header, one of
    `allowed_origins` (default: `http://` and each allowed host); bodies past
    `limits.max_request_bytes` are refused. See `AgUiRunner` for the runs
    (`messages_snapshot` among them).

    Raises:
        ValueError: the token is too short or not header-safe.
    """
    check_token(token)
    hosts = tuple(LOOPBACK_HOSTS if allowed_hosts is None else allowed_hosts)
    runner = AgUiRunner(
        orchestrator,
        agent,
        session_prefix=session_prefix,
        limits=limits,
        max_running=max_running,
        messages_snapshot=messages_snapshot,
    )
    # The endpoint bounds a chunked body itself, as it reads it.
    rules = GuardRules.serving(token, hosts, allowed_origins, runner.limits.max_request_bytes)
    return RequestGuard(RunEndpoint(runner, RUN_PATH), rules, refuse)


async def serve_ag_ui(
    orchestrator: Orchestrator,
    agent: AgentId,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    token: str | None = None,
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
    on_ready: Callable[[str], object] | None = None,
    session_prefix: str = "ag-ui:",
    limits: RunLimits | None = None,
    max_running: int = 32,
    messages_snapshot: bool = True,
) -> None:
    """Serve `agent` of `orchestrator` over AG-UI at `http://host:port/` until cancelled.

    Why: AG-UI frontends (CopilotKit, the `@ag-ui/client` `HttpAgent`) talk to
    agents this way; this makes a neuron agent one of theirs, as pydantic-ai's
    `agent.to_ag_ui()` does, with the house's security.

    Every request must carry `Authorization: Bearer <token>`, on loopback too:
    any local user can reach a loopback port. Without a `token` one is made
    (`secrets.token_urlsafe(32)`) and printed on stderr with the URL. Requests
    whose Host or Origin header is not allowed are refused (DNS-rebinding
    protection). It binds the loopback interface unless told otherwise.
    Cancelling the call (or SIGINT / SIGTERM) stops the server: running runs
    are cancelled.

    Args:
        orchestrator: runs the agent's turns (`LocalOrchestrator`, `TemporalOrchestrator`, …).
        agent: the agent served.
        host: the address to bind; a wider bind is explicit and still needs the token.
        port: the port; 0 picks a free one (`on_ready` gets the URL).
        token: the bearer token clients send; at least 16 printable ASCII characters.
        allowed_hosts: the Host header values accepted (`"name:port"`, or
            `"name:*"` for any port). By default the loopback names on a
            loopback bind and the bound address otherwise; required when
            binding every interface (`"0.0.0.0"`, `"::"`), which has no name.
        allowed_origins: the Origin header values accepted (default: `http://`
            and each allowed host); a request without one is not checked.
        on_ready: called with the server's base URL once connections are accepted.
        session_prefix: see `AgUiRunner`.
        limits: what one run may carry (default: `RunLimits()`).
        max_running: the most runs at once (see `AgUiRunner`).
        messages_snapshot: send a MESSAGES_SNAPSHOT before a finished or paused
            run's end (see `AgUiRunner`).

    Raises:
        ValueError: the token is too short or not header-safe, or a wildcard
            `host` comes without `allowed_hosts`.
    """
    hosts = allowed_hosts_for(host, allowed_hosts)
    token, show = server_token(token)
    app = ag_ui_app(
        orchestrator,
        agent,
        token=token,
        allowed_hosts=hosts,
        allowed_origins=allowed_origins,
        session_prefix=session_prefix,
        limits=limits,
        max_running=max_running,
        messages_snapshot=messages_snapshot,
    )
    await serve_asgi(
        lambda base: app,
        host=host,
        port=port,
        what=f"AG-UI agent {agent!r}",
        token=token,
        show_token=show,
        on_ready=on_ready,
    )
