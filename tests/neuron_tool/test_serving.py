"""A server we start answers each request at once and stops when its task is cancelled."""

from __future__ import annotations

import asyncio
import socket

import httpx
import pytest
import uvicorn
from starlette.types import Receive, Scope, Send

from neuron_tool.serving import serve_until_cancelled

pytestmark = pytest.mark.asyncio


async def _hello(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"hello"})


async def test_responses_go_out_without_nagle_delay_and_cancelling_stops_the_server() -> None:
    sock = socket.create_server(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    server = uvicorn.Server(uvicorn.Config(_hello, log_config=None, lifespan="off"))
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    serving = asyncio.create_task(serve_until_cancelled(server, sock, url, ready.set_result))
    async with httpx.AsyncClient() as http:
        assert await ready == url
        # Accepted connections inherit it; without it, each response after a
        # connection's first waited ~40 ms on the client's delayed ACK.
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
        answers = [(await http.get(url)).text for _ in range(3)]  # one kept-alive connection
    serving.cancel()
    await asyncio.wait([serving])

    assert answers == ["hello"] * 3
    assert serving.cancelled() and server.should_exit
