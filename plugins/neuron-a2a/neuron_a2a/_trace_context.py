"""W3C trace context across A2A: a remote agent's turn joins its caller's trace.

`RemoteAgent` sends the current OpenTelemetry context with every request
(`traceparent`, `tracestate`), and the server runs the request, and so the
turn it dispatches, in the context those headers carry, as an OpenTelemetry-
instrumented HTTP client and server would. With tracing on at both ends
(`neuron-tracing-otel`), the remote turn's spans are children of the span the
caller was in; with it off, the headers carry nothing and change nothing.
"""

from __future__ import annotations

from opentelemetry import context, propagate
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["TraceContext", "trace_headers"]

_HEADERS = (b"traceparent", b"tracestate")


def trace_headers() -> dict[str, str]:
    """The headers carrying the current trace context (none when nothing traces)."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier


class TraceContext:
    """ASGI middleware: runs each request in the trace context its headers carry.

    Placed inside the guard: only a request with the token joins a trace.
    """

    def __init__(self, app: ASGIApp) -> None:
        """Wrap `app`."""
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, in its caller's trace context when it names one."""
        carried = {
            key.decode("latin-1"): value.decode("latin-1")
            for key, value in scope.get("headers", ())
            if key in _HEADERS
        }
        if scope["type"] != "http" or not carried:
            await self._app(scope, receive, send)
            return
        token = context.attach(propagate.extract(carried))
        try:
            await self._app(scope, receive, send)
        finally:
            context.detach(token)
