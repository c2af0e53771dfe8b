"""The rules every server we start shares: its token, and the Host names it answers."""

from __future__ import annotations

import pytest

from neuron_tool.http_guard import (
    LOOPBACK_HOSTS,
    allowed_hosts_for,
    bearer_matches,
    check_token,
    is_loopback,
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
