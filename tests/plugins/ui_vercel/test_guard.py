"""`serve_vercel_ai`'s guard over real loopback HTTP: the token on every request, the Host and
Origin checks, CORS for allowed origins, the body limit, requests that are no chat."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio
from neuron_ui_vercel import ChatLimits, serve_vercel_ai

from layer0.testing import InMemoryStore
from neuron_orch_local import LocalOrchestrator
from neuron_turn import NeuronTurn
from neuron_turn.testing import FunctionProvider, ScriptedProvider, text_response

from ._server import TOKEN, Served, chat, post, serving, types, user

# One server for the module: these tests change nothing a later one reads.
pytestmark = pytest.mark.asyncio(loop_scope="module")
FRONTEND = "http://localhost:3000"


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def served() -> AsyncIterator[Served]:
    model = FunctionProvider(lambda request: text_response("Hello!"))
    limits = ChatLimits(max_request_bytes=16_384)
    async with serving(model, limits=limits, allowed_origins=[FRONTEND]) as served:
        yield served


def model_calls(served: Served) -> int:
    return len(served.model.requests)


async def send(served: Served, body: Any = None, **headers: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=10) as http:
        return await http.post(
            served.url + "/", json=chat("g", user("Hi")) if body is None else body, headers=headers
        )


def authorized() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


async def test_the_right_token_runs_the_agent(served: Served) -> None:
    response = await send(served, **authorized())

    assert response.status_code == 200 and response.text.endswith("data: [DONE]\n\n")


@pytest.mark.parametrize(
    "authorization",
    [None, "Bearer wrong-token-0123456789abcdefgh", "Bearer " + TOKEN[:-1], "Basic " + TOKEN],
)
async def test_a_missing_or_wrong_token_is_refused_with_401_and_nothing_runs(
    served: Served, authorization: str | None
) -> None:
    calls = model_calls(served)
    headers = {} if authorization is None else {"Authorization": authorization}
    response = await send(served, **headers)

    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Bearer realm="vercel-ai"'
    assert "missing or wrong bearer token" in response.json()["error"]
    assert model_calls(served) == calls


async def test_a_foreign_host_header_is_refused_even_with_the_token(served: Served) -> None:
    calls = model_calls(served)
    response = await send(served, Host="evil.example:80", **authorized())

    assert response.status_code == 421 and model_calls(served) == calls


async def test_a_foreign_origin_is_refused_and_an_allowed_one_may_read_the_answer(
    served: Served,
) -> None:
    calls = model_calls(served)
    foreign = await send(served, Origin="http://evil.example", **authorized())
    allowed = await send(served, Origin=FRONTEND, **authorized())

    assert foreign.status_code == 403 and model_calls(served) == calls + 1
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == FRONTEND


async def test_an_allowed_origins_preflight_is_answered_without_the_token(served: Served) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        preflight = await http.options(
            served.url + "/",
            headers={"Origin": FRONTEND, "Access-Control-Request-Method": "POST"},
        )

    assert preflight.status_code == 204
    assert preflight.headers["access-control-allow-origin"] == FRONTEND
    assert "authorization" in preflight.headers["access-control-allow-headers"]


async def test_a_body_past_the_limit_is_refused_declared_or_chunked(served: Served) -> None:
    calls = model_calls(served)
    body = chat("g", user("x" * 20_000))
    declared = await send(served, body, **authorized())

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: the limit holds as it reads
        data = json.dumps(body).encode()
        for start in range(0, len(data), 1024):
            yield data[start : start + 1024]

    async with httpx.AsyncClient(timeout=10) as http:
        headers = {**authorized(), "Content-Type": "application/json"}
        chunked = await http.post(served.url + "/", content=chunks(), headers=headers)

    assert declared.status_code == 413 and "larger than 16384 bytes" in declared.json()["error"]
    assert chunked.status_code == 413 and "larger than 16384 bytes" in chunked.json()["error"]
    assert model_calls(served) == calls


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b"{not json", "not an AI SDK chat request"),
        (b"[]", "not an AI SDK chat request"),
        (b'{"id": "c"}', "messages"),
        (b'{"id": "c", "messages": [{"role": "robot", "parts": []}]}', "role"),
    ],
)
async def test_a_body_that_is_no_chat_gets_400_saying_why(
    served: Served, body: bytes, said: str
) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        headers = {**authorized(), "Content-Type": "application/json"}
        response = await http.post(served.url + "/", content=body, headers=headers)

    assert response.status_code == 400 and said in response.json()["error"]


async def test_other_methods_and_paths_are_refused_saying_where_to_post(served: Served) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        get = await http.get(served.url + "/", headers=authorized())
        elsewhere = await http.post(served.url + "/x", json={}, headers=authorized())

    assert get.status_code == 405 and "POST chats to /" in get.json()["error"]
    assert elsewhere.status_code == 404 and "POST chats to /" in elsewhere.json()["error"]


@pytest.mark.parametrize("chat_id", ["", "x" * 129, "../other", "a\nb", "t 1", "é"])
async def test_a_hostile_chat_id_ends_with_an_error_and_reaches_no_session(
    served: Served, chat_id: str
) -> None:
    calls = model_calls(served)
    chunks = await post(served, chat(chat_id, user("Hi")))

    assert types(chunks) == ["start", "error", "finish"]
    assert chunks[1]["errorText"].startswith("InvalidChatIdError: ")
    assert model_calls(served) == calls


async def test_regenerating_is_refused_saying_to_send_a_new_message(served: Served) -> None:
    chunks = await post(served, {**chat("g", user("Hi")), "trigger": "regenerate-message"})

    assert chunks[1]["errorText"].startswith("UnsupportedTriggerError: ")


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"token": "short"}, "at least 16 characters"),
        ({"token": TOKEN, "host": "0.0.0.0"}, "needs allowed_hosts"),
    ],
)
async def test_serve_refuses_an_unsafe_token_or_a_wildcard_bind_without_hosts(
    options: dict[str, Any], said: str
) -> None:
    store = InMemoryStore()
    orchestrator = LocalOrchestrator({"a": NeuronTurn(ScriptedProvider([]), state=store)}, store)
    with pytest.raises(ValueError, match=said):
        await serve_vercel_ai(orchestrator, "a", port=0, **options)


async def test_the_token_never_reaches_the_logs(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    await send(served, **authorized())
    await send(served, Authorization="Bearer " + TOKEN + "-wrong")
    await send(served, body=chat("bad id!", user("Hi")), **authorized())

    assert caplog.records  # the server did log: what it logged holds no token
    assert not [r for r in caplog.records if TOKEN in r.getMessage()]
