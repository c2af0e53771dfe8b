"""The guard's rules on their own: which hosts a bind allows, and no websocket gets past."""

from __future__ import annotations

from typing import Any

import pytest

from neuron_a2a._guard import refuse
from neuron_tool.http_guard import LOOPBACK_HOSTS, GuardRules, RequestGuard, allowed_hosts_for

RULES = GuardRules(
    token="guard-test-token-0123456789",
    allowed_hosts=LOOPBACK_HOSTS,
    allowed_origins=(),
    max_body_bytes=1024,
)


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("127.0.0.1", LOOPBACK_HOSTS),
        ("localhost", LOOPBACK_HOSTS),
        ("::1", LOOPBACK_HOSTS),
        ("127.0.0.2", (*LOOPBACK_HOSTS, "127.0.0.2:*")),
        ("192.168.1.5", ("192.168.1.5:*",)),
    ],
)
def test_a_bind_allows_its_own_names_only(host: str, allowed: tuple[str, ...]) -> None:
    assert allowed_hosts_for(host, None) == allowed


@pytest.mark.parametrize("host", ["0.0.0.0", "::", ""])
def test_a_wildcard_bind_needs_its_hosts_named(host: str) -> None:
    with pytest.raises(ValueError, match="needs allowed_hosts"):
        allowed_hosts_for(host, None)
    assert allowed_hosts_for(host, ["agents.example:8000"]) == ("agents.example:8000",)


async def test_no_websocket_gets_past_even_with_the_token() -> None:
    reached: list[Any] = []
    sent: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope)

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    headers = [(b"host", b"127.0.0.1:8000"), (b"authorization", b"Bearer " + b"x" * 27)]
    scope = {"type": "websocket", "path": "/", "headers": headers}
    await RequestGuard(app, RULES, refuse)(scope, receive, send)

    assert reached == [] and sent == [{"type": "websocket.close", "code": 1008}]


def test_the_rules_never_show_the_token() -> None:
    assert RULES.token not in repr(RULES)
    assert RULES.token not in repr(RequestGuard(lambda *a: None, RULES, refuse))  # type: ignore[arg-type,return-value]
