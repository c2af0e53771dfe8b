"""The token in a page's URL: the redirect that drops it goes back to that very page.

The path was sent back decoded: a session named `a?b#c` came back as another
page (`/sessions/a`, query `b`), one holding a line break as no answer at
all, and a path opening with `//` as a URL naming another host.
"""

from __future__ import annotations

import httpx

from .conftest import TOKEN, Served


def _url(served: Served, raw_path: bytes) -> httpx.URL:
    return httpx.URL(served.base).copy_with(raw_path=raw_path + b"?token=" + TOKEN.encode())


async def test_the_redirect_keeps_the_path_as_it_was_sent(served: Served) -> None:
    path = b"/sessions/a%3Fb%23c%20%2F%C3%A9%0D%0A"
    async with httpx.AsyncClient() as http:
        answer = await http.get(_url(served, path))
        assert answer.status_code == 303
        assert answer.headers["location"] == path.decode()
        page = await http.get(httpx.URL(served.base).copy_with(raw_path=path))
    assert page.status_code == 404  # the session's own page: no turns recorded for it
    assert "No turns recorded for session a?b#c /é" in page.text


async def test_a_path_opening_with_two_slashes_redirects_to_this_host(served: Served) -> None:
    async with httpx.AsyncClient() as http:
        answer = await http.get(_url(served, b"//elsewhere.example/turns"))
    assert answer.status_code == 303
    assert answer.headers["location"] == "/elsewhere.example/turns"
