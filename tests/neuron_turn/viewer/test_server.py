"""`serve_viewer` over real HTTP on loopback: the token, the Host check, the pages, read-only."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from neuron_turn.viewer import ViewerSetupError, serve_viewer
from neuron_turn.viewer.guard import allowed_hosts

from .conftest import TOKEN, Filled, Served


def client(served: Served, **options: object) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=served.base, **options)  # type: ignore[arg-type]


async def test_a_request_without_the_token_is_refused_with_401(served: Served) -> None:
    async with client(served) as http:
        for path in ("/", "/turns", "/sessions/calc"):
            answer = await http.get(path)
            assert answer.status_code == 401
            assert "neuron-turn ui" in answer.text and "Sessions" not in answer.text
        wrong = await http.get("/", params={"token": "x" * len(TOKEN)})
        assert wrong.status_code == 401 and "set-cookie" not in wrong.headers


async def test_the_token_in_the_url_sets_a_cookie_and_redirects_without_it(
    served: Served,
) -> None:
    async with client(served) as http:
        answer = await http.get("/turns", params={"token": TOKEN, "x": "1"})
        assert answer.status_code == 303
        assert answer.headers["location"] == "/turns?x=1"
        cookie = answer.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        page = await http.get("/turns")  # the client keeps the cookie
        assert page.status_code == 200 and "All turns" in page.text


async def test_a_bearer_token_is_accepted_too(served: Served) -> None:
    async with client(served, headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        assert (await http.get("/")).status_code == 200


async def test_a_foreign_host_header_is_refused_even_with_the_token(served: Served) -> None:
    async with client(served, headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        answer = await http.get("/", headers={"Host": "attacker.example:80"})
        assert answer.status_code == 403
        assert (
            await http.get("/", params={"token": TOKEN}, headers={"Host": "a.b"})
        ).status_code == 403


async def test_the_viewer_only_reads(served: Served) -> None:
    async with client(served, headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        for method in ("POST", "PUT", "DELETE"):
            answer = await http.request(method, "/")
            assert answer.status_code == 405 and answer.headers["allow"] == "GET, HEAD"


async def test_pages_forbid_scripts_framing_and_caching(served: Served) -> None:
    async with client(served, headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        headers = (await http.get("/")).headers
    assert "default-src 'none'" in headers["content-security-policy"]
    assert "script-src" not in headers["content-security-policy"]  # so none runs
    assert (headers["x-frame-options"], headers["cache-control"]) == ("DENY", "no-store")


async def test_the_pages_list_sessions_and_turns_and_draw_the_waterfall(
    served: Served, filled: Filled
) -> None:
    async with client(served, headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        sessions = (await http.get("/")).text
        calc = (await http.get("/sessions/calc")).text
        turn = (await http.get(f"/turns/{filled.calculator}")).text
    assert '<a href="/sessions/calc">calc</a>' in sessions
    assert '<a href="/sessions/other">other</a>' in sessions
    assert "What is 17*23? Use the calculator." in sessions
    assert (
        f'href="/turns/{filled.calculator}"' in calc and f'href="/turns/{filled.hostile}"' in calc
    )
    assert filled.other not in calc
    kinds = re.findall(r'<div class="wf-row" data-kind="(\w[\w-]*)">', turn)
    assert kinds == ["model", "tool", "model"]
    assert "model call 1 · calculator" in turn and "tool · calculator" in turn
    assert "231 in / 22 out · $0.0003 · tool_use" in turn
    assert "262 in / 12 out · $0.0002 · end_turn" in turn
    assert "17 multiplied by 23 equals 391." in turn
    assert "&quot;expression&quot;: &quot;17*23&quot;" in turn  # the tool's input


async def test_model_text_is_shown_as_text_never_as_markup(served: Served, filled: Filled) -> None:
    async with client(served, headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        pages = [
            (await http.get(path)).text
            for path in ("/", "/sessions/calc", "/turns", f"/turns/{filled.hostile}")
        ]
    for page in pages:
        assert "<script>document" not in page and "<img src=x" not in page
    assert "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;" in pages[3]


async def test_an_unknown_turn_or_session_is_404(served: Served) -> None:
    async with client(served, headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        assert (await http.get("/turns/nope")).status_code == 404
        assert (await http.get("/sessions/nope")).status_code == 404


async def test_browsing_leaves_the_state_file_as_it_was(served: Served, filled: Filled) -> None:
    folder = filled.path.parent
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    async with client(served, headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        for path in ("/", "/turns", "/sessions/calc", f"/turns/{filled.calculator}"):
            assert (await http.get(path)).status_code == 200
    after = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    assert after == before


async def test_a_short_token_and_a_wide_bind_without_a_name_are_refused(tmp_path: Path) -> None:
    from neuron_state_sqlite import SqliteStore

    async with SqliteStore(tmp_path / "s.db", read_only=True) as store:
        with pytest.raises(ViewerSetupError, match="at least 16"):
            await serve_viewer(store, token="short")
        with pytest.raises(ViewerSetupError, match="--allowed-host"):
            await serve_viewer(store, host="0.0.0.0", token=TOKEN)


def test_the_hosts_allowed_follow_the_bind() -> None:
    assert allowed_hosts("127.0.0.1", 8) == {"127.0.0.1:8", "localhost:8", "[::1]:8"}
    assert allowed_hosts("10.1.2.3", 8) == {"10.1.2.3:8"}
    assert allowed_hosts("0.0.0.0", 8, ["box", "box.lan:9"]) == {"box:8", "box.lan:9"}
