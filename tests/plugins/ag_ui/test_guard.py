"""`serve_ag_ui`'s guard over real loopback HTTP: the token on every request, the Host and
Origin checks, the body limit, requests that are no run; and the token never leaks."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio
from neuron_ag_ui import RunLimits, serve_ag_ui

from layer0.testing import InMemoryStore
from neuron_orch_local import LocalOrchestrator
from neuron_turn import NeuronTurn
from neuron_turn.testing import FunctionProvider, ScriptedProvider, text_response

from ._server import TOKEN, Served, run, run_input, serving, text_of, types, user

# One server for the module: these tests change nothing a later one reads.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def served() -> AsyncIterator[Served]:
    model = FunctionProvider(lambda request: text_response("Hello!"))
    async with serving(model, limits=RunLimits(max_request_bytes=16_384)) as served:
        yield served


def model_calls(served: Served) -> int:
    return len(served.model.requests)


async def post(served: Served, body: Any = None, **headers: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=10) as http:
        return await http.post(
            served.url + "/",
            json=run_input("g", user("Hi")) if body is None else body,
            headers=headers,
        )


def authorized() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


async def test_the_right_token_runs_the_agent(served: Served) -> None:
    response = await post(served, **authorized())

    assert response.status_code == 200 and '"RUN_FINISHED"' in response.text


async def test_a_request_without_the_token_is_refused_with_401_and_nothing_runs(
    served: Served,
) -> None:
    calls = model_calls(served)
    response = await post(served)

    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Bearer realm="ag-ui"'
    assert "missing or wrong bearer token" in response.json()["error"]
    assert model_calls(served) == calls


@pytest.mark.parametrize(
    "authorization",
    ["Bearer wrong-token-0123456789abcdefgh", "Bearer " + TOKEN[:-1], "Basic " + TOKEN, TOKEN],
)
async def test_a_wrong_token_is_refused_with_401_and_nothing_runs(
    served: Served, authorization: str
) -> None:
    calls = model_calls(served)
    response = await post(served, Authorization=authorization)

    assert response.status_code == 401 and model_calls(served) == calls


async def test_a_foreign_host_header_is_refused_even_with_the_token(served: Served) -> None:
    calls = model_calls(served)
    response = await post(served, Host="evil.example:80", **authorized())

    assert response.status_code == 421 and model_calls(served) == calls


async def test_a_foreign_origin_is_refused_even_with_the_token(served: Served) -> None:
    calls = model_calls(served)
    response = await post(served, Origin="http://evil.example", **authorized())
    port = served.url.rsplit(":", 1)[1]
    own = await post(served, Origin=f"http://127.0.0.1:{port}", **authorized())

    assert response.status_code == 403 and model_calls(served) == calls + 1
    assert own.status_code == 200


async def test_a_body_past_the_limit_is_refused_declared_or_chunked(served: Served) -> None:
    calls = model_calls(served)
    body = run_input("g", user("x" * 20_000))
    declared = await post(served, body, **authorized())

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: the limit holds as it reads
        data = json.dumps(body).encode()
        for start in range(0, len(data), 1024):
            yield data[start : start + 1024]

    async with httpx.AsyncClient(timeout=10) as http:
        headers = {**authorized(), "Content-Type": "application/json"}
        chunked = await http.post(served.url + "/", content=chunks(), headers=headers)

    assert declared.status_code == 413 and "larger than 16384 bytes" in declared.json()["error"]
    assert chunked.status_code == 413
    assert model_calls(served) == calls


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b"{not json", "not an AG-UI RunAgentInput"),
        (b"[]", "not an AG-UI RunAgentInput"),
        (b'{"threadId": "t", "runId": "r"}', "messages"),
    ],
)
async def test_a_body_that_is_no_run_gets_400_saying_why(
    served: Served, body: bytes, said: str
) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        headers = {**authorized(), "Content-Type": "application/json"}
        response = await http.post(served.url + "/", content=body, headers=headers)

    assert response.status_code == 400 and said in response.json()["error"]


async def test_other_methods_and_paths_are_refused(served: Served) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        get = await http.get(served.url + "/", headers=authorized())
        elsewhere = await http.post(served.url + "/x", json={}, headers=authorized())

    assert get.status_code == 405 and elsewhere.status_code == 404


@pytest.mark.parametrize("thread", ["x" * 129, "../other", "a\nb", "t 1", "é"])
async def test_a_hostile_thread_id_ends_with_run_error_and_reaches_no_session(
    served: Served, thread: str
) -> None:
    calls = model_calls(served)
    events = await run(served, run_input(thread, user("Hi")))

    assert types(events) == ["RUN_STARTED", "RUN_ERROR"]
    assert events[-1].code == "InvalidThreadError" and model_calls(served) == calls


async def test_the_token_never_reaches_the_logs(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    await run(served, run_input("g", user("Hi")))
    await post(served, Authorization="Bearer " + TOKEN + "-wrong")

    assert not [r for r in caplog.records if TOKEN in r.getMessage()]


async def test_a_generated_token_is_printed_on_stderr_and_works(
    capsys: pytest.CaptureFixture[str],
) -> None:
    model = ScriptedProvider([text_response("Hello!")])
    async with serving(model, token=None) as served:
        printed = capsys.readouterr().err
        token = re.search(r"Bearer ([\w-]{43})'", printed)
        assert token is not None and served.url in printed
        served.token = token.group(1)
        events = await run(served, run_input("g", user("Hi")))

    assert text_of(events) == "Hello!"


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
        await serve_ag_ui(orchestrator, "a", port=0, **options)
