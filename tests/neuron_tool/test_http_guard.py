"""The rules every server we start shares: its token, and the Host names it answers."""

from __future__ import annotations

import json
from typing import Any

import pytest

from neuron_tool.http_guard import (
    LOOPBACK_HOSTS,
    GuardRules,
    RequestGuard,
    allowed_hosts_for,
    bearer_matches,
    check_token,
    is_loopback,
    json_refusal,
    url_host,
)


def test_a_loopback_bind_answers_the_loopback_names_and_another_address_only_itself() -> None:
    assert allowed_hosts_for("127.0.0.1", None) == LOOPBACK_HOSTS
    assert allowed_hosts_for("127.0.0.2", None) == (*LOOPBACK_HOSTS, "127.0.0.2:*")
    assert allowed_hosts_for("::1", None) == LOOPBACK_HOSTS
    assert allowed_hosts_for("192.0.2.7", None) == ("192.0.2.7:*",)
    assert allowed_hosts_for("0.0.0.0", ["box.example:8000"]) == ("box.example:8000",)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", ""])
def test_a_bind_on_every_interface_must_name_its_hosts(host: str) -> None:
    with pytest.raises(ValueError, match="needs allowed_hosts"):
        allowed_hosts_for(host, None)


@pytest.mark.parametrize(
    ("token", "why"),
    [("short", "at least 16"), ("sixteen chars ok", "without spaces"), ("é" * 16, "ASCII")],
)
def test_a_token_too_short_or_unfit_for_a_header_is_refused(token: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        check_token(token)


def test_names_and_addresses() -> None:
    assert is_loopback("localhost") and is_loopback("::1") and not is_loopback("example.com")
    assert url_host("::1") == "[::1]" and url_host("127.0.0.1") == "127.0.0.1"


@pytest.mark.parametrize(
    ("headers", "matches"),
    [
        ([(b"authorization", b"Bearer the-token-0123456789")], True),
        ([(b"authorization", b"bearer the-token-0123456789")], True),
        ([(b"authorization", b"Basic the-token-0123456789")], False),
        ([(b"authorization", b"Bearer the-token-012345678")], False),
        ([], False),
        # Two headers: which one a proxy or the app reads is not ours to guess.
        ([(b"authorization", b"Bearer the-token-0123456789")] * 2, False),
    ],
)
def test_only_one_bearer_header_with_the_token_matches(
    headers: list[tuple[bytes, bytes]], matches: bool
) -> None:
    assert bearer_matches({"headers": headers}, b"the-token-0123456789") is matches


# --- RequestGuard: a browser page of an allowed origin (CORS) -------------------------

TOKEN = "guard-test-token-0123456789"
RULES = GuardRules.serving(TOKEN, ["127.0.0.1:8000"], ["http://app.example:3000"], 1024)


async def _guarded(
    method: str, *headers: tuple[bytes, bytes]
) -> tuple[list[dict[str, Any]], list[str]]:
    """What the guard sends for a request with `headers`, and the paths the app was given."""
    reached: list[str] = []
    sent: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["path"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def refuse(send: Any, status: int, message: str, *, authenticate: bool = False) -> None:
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": message.encode()})

    scope = {
        "type": "http",
        "method": method,
        "path": "/",
        "headers": [(b"host", b"127.0.0.1:8000"), *headers],
    }
    await RequestGuard(app, RULES, refuse)(scope, receive, send)
    return sent, reached


def _started(sent: list[dict[str, Any]]) -> tuple[int, dict[bytes, bytes]]:
    start = sent[0]
    return start["status"], dict(start["headers"])


APP_ORIGIN = (b"origin", b"http://app.example:3000")
PREFLIGHT = (b"access-control-request-method", b"POST")
BEARER = (b"authorization", f"Bearer {TOKEN}".encode())


async def test_an_allowed_pages_preflight_is_answered_without_the_token_and_runs_nothing() -> None:
    sent, reached = await _guarded("OPTIONS", APP_ORIGIN, PREFLIGHT)

    status, headers = _started(sent)
    assert (status, reached) == (204, [])
    assert headers[b"access-control-allow-origin"] == b"http://app.example:3000"
    assert b"authorization" in headers[b"access-control-allow-headers"]


async def test_another_pages_preflight_is_refused() -> None:
    sent, reached = await _guarded("OPTIONS", (b"origin", b"http://evil.example"), PREFLIGHT)

    status, headers = _started(sent)
    assert (status, reached) == (403, [])
    assert b"access-control-allow-origin" not in headers


async def test_an_allowed_pages_request_still_needs_the_token_and_may_read_the_answer() -> None:
    without, reached_without = await _guarded("POST", APP_ORIGIN)
    with_token, reached = await _guarded("POST", APP_ORIGIN, BEARER)

    assert (_started(without)[0], reached_without) == (401, [])
    assert _started(without)[1][b"access-control-allow-origin"] == b"http://app.example:3000"
    assert (_started(with_token)[0], reached) == (200, ["/"])
    assert _started(with_token)[1][b"access-control-allow-origin"] == b"http://app.example:3000"


async def test_an_options_request_that_is_no_preflight_needs_the_token() -> None:
    sent, reached = await _guarded("OPTIONS", APP_ORIGIN)

    assert (_started(sent)[0], reached) == (401, [])


async def test_a_json_refusal_sends_its_body_and_names_its_realm_only_when_asking_for_a_token() -> (
    None
):
    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    await json_refusal("demo")(send, 401, "no token", authenticate=True)
    rpc = json_refusal("rpc", lambda status, message: {"code": -status, "message": message})
    await rpc(send, 403, "foreign origin")

    starts, bodies = sent[0::2], sent[1::2]
    assert [s["status"] for s in starts] == [401, 403]
    assert [json.loads(b["body"]) for b in bodies] == [
        {"error": "no token"},
        {"code": -403, "message": "foreign origin"},
    ]
    challenge = (b"www-authenticate", b'Bearer realm="demo"')
    assert challenge in starts[0]["headers"]
    assert all(name != b"www-authenticate" for name, _ in starts[1]["headers"])
    assert (b"content-length", str(len(bodies[0]["body"])).encode()) in starts[0]["headers"]
