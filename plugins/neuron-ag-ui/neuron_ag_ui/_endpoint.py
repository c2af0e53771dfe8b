"""The HTTP side of a run: a POSTed `RunAgentInput` in, a `text/event-stream` of events out.

A raw ASGI app rather than a framework's streaming response, because the run
must stop when the client goes away, not at the next event written: a tool
running for a minute writes nothing meanwhile. So a task waits for the
client's disconnect beside the one streaming, and cancels it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Final

from ag_ui.core import RunAgentInput
from ag_ui.encoder import EventEncoder
from starlette.types import Receive, Scope, Send

from neuron_tool.serving import error_text

from ._guard import refuse
from ._input import parse_run
from .errors import InvalidRunInputError
from .runner import AgUiRunner

_logger: Final = logging.getLogger("neuron_ag_ui")
_SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),  # a proxy in front must not hold events back
]


class RunEndpoint:
    """ASGI app: POST at `path` runs the agent, answering its events as server-sent events."""

    def __init__(self, runner: AgUiRunner, path: str = "/") -> None:
        """Serve `runner`'s runs at `path`."""
        self._runner = runner
        self._path = path
        self._encoder = EventEncoder()

    def __repr__(self) -> str:
        return f"RunEndpoint({self._runner!r}, path={self._path!r})"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one request (or the server's lifespan messages)."""
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        if scope["path"] != self._path:
            await refuse(send, 404, f"not found; POST runs to {self._path}")
            return
        if scope["method"] != "POST":
            await refuse(send, 405, f"POST a RunAgentInput to {self._path}")
            return
        limit = self._runner.limits.max_request_bytes
        try:
            body = await _body(receive, limit)
        except _ClientGone:
            return
        if body is None:
            await refuse(send, 413, f"the request body is larger than {limit} bytes")
            return
        try:
            run = parse_run(body)
        except InvalidRunInputError as exc:
            await refuse(send, 400, str(exc))
            return
        await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
        streaming = asyncio.create_task(self._stream(run, send))
        gone = asyncio.create_task(_disconnected(receive))
        try:
            await asyncio.wait([streaming, gone], return_when=asyncio.FIRST_COMPLETED)
        finally:
            # The client gone (or the server stopping): the run is cancelled with its dispatch.
            streaming.cancel()
            gone.cancel()
            await asyncio.wait([streaming, gone])
        problem = None if streaming.cancelled() else streaming.exception()
        if problem is not None:  # the client went away as an event was written
            _logger.info("AG-UI stream ended early: %s", error_text(problem))

    async def _stream(self, run: RunAgentInput, send: Send) -> None:
        async with contextlib.aclosing(self._runner.run(run)) as events:
            async for event in events:
                data = self._encoder.encode(event).encode()
                await send({"type": "http.response.body", "body": data, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


class _ClientGone(Exception):
    """The client went away before its request's body was read."""


async def _body(receive: Receive, limit: int) -> bytes | None:
    """The request body; None once it passes `limit` bytes (sent chunked, unannounced)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise _ClientGone
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _disconnected(receive: Receive) -> None:
    """Return once the client has gone."""
    while (await receive())["type"] != "http.disconnect":
        pass


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
