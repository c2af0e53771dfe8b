"""`serve_http` asks every request for its bearer token and checks Host and Origin, over
real loopback HTTP."""

from __future__ import annotations

import asyncio
import hmac
import re
from collections.abc import AsyncIterator

import httpx
import pytest
import pytest_asyncio

from neuron_tool import http_guard
from neuron_tool.mcp import MCPClient, MCPConnectionError, _http_guard, serve_http

from .mcp_servers.registry import build_registry

# The server and the HTTP client are shared by the tests of this module.
shared_loop = pytest.mark.asyncio(loop_scope="module")

TOKEN = "auth-test-token-0123456789abcdef"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def url() -> AsyncIterator[str]:
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    server = asyncio.create_task(
        serve_http(build_registry(), port=0, token=TOKEN, on_ready=ready.set_result)
    )
    yield await ready
    server.cancel()
    await asyncio.wait([server])


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as client:
        yield client


async def _post(http: httpx.AsyncClient, url: str, **headers: str) -> httpx.Response:
    return await http.post(url, json=INITIALIZE, headers={**ACCEPT, **headers})


@shared_loop
async def test_a_request_without_a_token_is_refused_with_401(
    http: httpx.AsyncClient, url: str
) -> None:
    response = await _post(http, url)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Bearer realm="mcp"'
    assert "missing or wrong bearer token" in response.json()["error"]["message"]


@shared_loop
@pytest.mark.parametrize(
    "authorization",
    [
        "Bearer wrong-token-0123456789abcdefgh",
        "Bearer " + TOKEN[:-1],
        "Bearer " + TOKEN + "x",
        "Basic " + TOKEN,
        TOKEN,
        "Bearer",
    ],
)
async def test_a_wrong_token_is_refused_with_401(
    http: httpx.AsyncClient, url: str, authorization: str
) -> None:
    assert (await _post(http, url, Authorization=authorization)).status_code == 401


@shared_loop
async def test_the_token_is_compared_in_constant_time(
    http: httpx.AsyncClient, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    compared: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(http_guard.hmac, "compare_digest", spy)
    wrong = "Bearer " + "w" * len(TOKEN)
    assert (await _post(http, url, Authorization=wrong)).status_code == 401
    assert compared == [(b"w" * len(TOKEN), TOKEN.encode())]


@shared_loop
async def test_the_right_token_reaches_the_tools(url: str) -> None:
    async with MCPClient.http(url, token=TOKEN, name="sample") as client:
        assert await client.call_tool("add", {"a": 2, "b": 40}) == 42


@shared_loop
async def test_a_client_without_the_token_is_told_why(url: str) -> None:
    client = MCPClient.http(url, name="sample", connect_timeout=5)
    with pytest.raises(MCPConnectionError, match="missing or wrong bearer token"):
        await client.connect()


@shared_loop
async def test_a_foreign_host_header_is_refused_even_with_the_token(
    http: httpx.AsyncClient, url: str
) -> None:
    response = await _post(http, url, Authorization=f"Bearer {TOKEN}", Host="evil.example:80")
    assert response.status_code == 421


@shared_loop
async def test_a_foreign_origin_is_refused_even_with_the_token(
    http: httpx.AsyncClient, url: str
) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}", "Origin": "http://evil.example"}
    assert (await _post(http, url, **headers)).status_code == 403
    headers["Origin"] = "http://127.0.0.1:1234"
    assert (await _post(http, url, **headers)).status_code == 200


@shared_loop
async def test_a_generated_token_is_printed_and_works(capsys: pytest.CaptureFixture[str]) -> None:
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    server = asyncio.create_task(serve_http(build_registry(), port=0, on_ready=ready.set_result))
    try:
        url = await ready
        printed = capsys.readouterr().err
        match = re.search(
            r"serving MCP at (\S+); clients send 'Authorization: Bearer (\S+)'", printed
        )
        assert match is not None and match.group(1) == url
        token = match.group(2)
        assert len(token) >= 40 and token != TOKEN
        async with MCPClient.http(url, token=token) as client:
            assert await client.call_tool("greet", {"name": "Ada"}) == "Hello, Ada!"
    finally:
        server.cancel()
        await asyncio.wait([server])


@shared_loop
async def test_a_passed_token_is_never_printed(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    async with MCPClient.http(url, token=TOKEN) as client:
        await client.list_tools()
    captured = capsys.readouterr()
    assert TOKEN not in captured.out + captured.err
    assert TOKEN not in repr(client)


@shared_loop
@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
async def test_binding_every_interface_needs_an_explicit_list_of_hosts(host: str) -> None:
    with pytest.raises(ValueError, match=r"needs allowed_hosts: the Host header values"):
        await serve_http(build_registry(), host=host, port=0, token=TOKEN)


@shared_loop
@pytest.mark.parametrize(
    "token", ["short", "has a space in it 0123456789", "tab\t0123456789abcdef"]
)
async def test_a_weak_or_unsendable_token_is_refused(token: str) -> None:
    with pytest.raises(ValueError, match="the token must be"):
        await serve_http(build_registry(), port=0, token=token)


def test_host_lists_default_to_the_bound_name() -> None:
    loopback = _http_guard.security_settings("127.0.0.1", None, None)
    assert loopback.allowed_hosts == ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    assert loopback.allowed_origins == [
        "http://127.0.0.1:*",
        "http://localhost:*",
        "http://[::1]:*",
    ]
    lan = _http_guard.security_settings("192.0.2.7", None, None)
    assert (lan.allowed_hosts, lan.allowed_origins) == (["192.0.2.7:*"], ["http://192.0.2.7:*"])
    every = _http_guard.security_settings("0.0.0.0", ["box.example:8000"], None)
    assert every.enable_dns_rebinding_protection
    assert every.allowed_origins == ["http://box.example:8000"]


def test_a_client_takes_a_token_or_an_authorization_header_not_both() -> None:
    with pytest.raises(ValueError, match="either token or an Authorization header"):
        MCPClient.http("http://127.0.0.1:1/mcp", token=TOKEN, headers={"authorization": "x"})
