"""`serve_a2a`'s guard over real loopback HTTP: the token on every request but the card,
the Host and Origin checks, the body limit; and a hostile message never harms the server."""

from __future__ import annotations

import hmac
import json
import logging
import re
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio
from a2a.types import Part, TaskState
from a2a.utils.errors import A2AError as ProtocolError

from layer0 import SessionScope, TurnInput
from layer0.testing import InMemoryStore
from neuron_a2a import MessageLimits, serve_a2a
from neuron_orch_local import LocalOrchestrator
from neuron_tool import http_guard
from neuron_turn import NeuronTurn
from neuron_turn.testing import FunctionProvider, ScriptedProvider, text_response

from ._server import TOKEN, Served, send, serving, user_message

# One server for the module: these tests change nothing a later one reads.
pytestmark = pytest.mark.asyncio(loop_scope="module")

CARD_PATH = "/.well-known/agent-card.json"
A2A_VERSION = {"A2A-Version": "1.0"}
COMPLETED = TaskState.TASK_STATE_COMPLETED
LIMITS = MessageLimits(max_request_bytes=16_384, max_text_chars=2000, max_parts=8)


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def served() -> AsyncIterator[Served]:
    model = FunctionProvider(lambda request: text_response("Hello!"))
    async with serving(model, limits=LIMITS) as served:
        yield served


def model_calls(served: Served) -> int:
    return len(served.model.requests)


def rpc(method: str = "SendMessage", **params: Any) -> dict[str, Any]:
    message = {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": [{"text": "Hi"}],
    }
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {"message": message}}


async def post(served: Served, body: Any = None, **headers: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=10) as http:
        return await http.post(
            served.url + "/",
            json=rpc() if body is None else body,
            headers={**A2A_VERSION, **headers},
        )


def authorized() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


async def test_the_right_token_reaches_the_agent_over_raw_http(served: Served) -> None:
    response = await post(served, **authorized())

    assert response.status_code == 200
    assert response.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_a_request_without_the_token_is_refused_with_401_and_nothing_runs(
    served: Served,
) -> None:
    calls = model_calls(served)
    response = await post(served)

    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Bearer realm="a2a"'
    assert "missing or wrong bearer token" in response.json()["error"]["message"]
    assert model_calls(served) == calls


@pytest.mark.parametrize(
    "authorization",
    [
        "Bearer wrong-token-0123456789abcdefgh",
        "Bearer " + TOKEN[:-1],
        "Bearer " + TOKEN + "x",
        "Basic " + TOKEN,
        "bearer  " + TOKEN,
        TOKEN,
        "Bearer",
    ],
)
async def test_a_wrong_token_is_refused_with_401_and_nothing_runs(
    served: Served, authorization: str
) -> None:
    calls = model_calls(served)
    response = await post(served, Authorization=authorization)

    assert response.status_code == 401 and model_calls(served) == calls


async def test_the_token_is_compared_in_constant_time(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    compared: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(http_guard.hmac, "compare_digest", spy)
    assert (await post(served, Authorization="Bearer " + "w" * 31)).status_code == 401

    assert compared == [(b"w" * 31, TOKEN.encode())]


async def test_a_foreign_host_header_is_refused_even_with_the_token(served: Served) -> None:
    calls = model_calls(served)
    async with httpx.AsyncClient() as http:
        response = await post(served, Host="evil.example:80", **authorized())
        card = await http.get(served.url + CARD_PATH, headers={"Host": "evil.example"})

    assert response.status_code == 421 and card.status_code == 421
    assert model_calls(served) == calls


async def test_a_foreign_origin_is_refused_even_with_the_token(served: Served) -> None:
    calls = model_calls(served)
    response = await post(served, Origin="http://evil.example", **authorized())

    assert response.status_code == 403 and model_calls(served) == calls


async def test_the_agent_card_is_public_and_declares_the_bearer_scheme(served: Served) -> None:
    async with httpx.AsyncClient() as http:
        response = await http.get(served.url + CARD_PATH)

    assert response.status_code == 200
    card = response.json()
    scheme = card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]
    assert scheme["scheme"] == "bearer" and "Authorization: Bearer" in scheme["description"]
    assert card["securityRequirements"] == [{"schemes": {"bearer": {}}}]
    assert card["supportedInterfaces"][0]["url"] == served.url + "/"
    assert card["capabilities"]["streaming"] is True
    assert card["name"] == "Helper" and card["skills"][0]["description"] == "Answers questions."


async def test_a_body_past_the_limit_is_refused_before_it_is_read(served: Served) -> None:
    calls = model_calls(served)
    body = rpc()
    body["params"]["message"]["parts"] = [{"text": "x" * 20_000}]
    declared = await post(served, body, **authorized())

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: the limit holds as it reads
        data = json.dumps(body).encode()
        for start in range(0, len(data), 1024):
            yield data[start : start + 1024]

    async with httpx.AsyncClient() as http:
        headers = {**A2A_VERSION, **authorized(), "Content-Type": "application/json"}
        chunked = await http.post(served.url + "/", content=chunks(), headers=headers)
    after = await post(served, **authorized())

    assert declared.status_code == 413
    assert "larger than 16384 bytes" in declared.json()["error"]["message"]
    assert chunked.json()["error"]["message"] == "Payload too large"
    assert after.status_code == 200 and model_calls(served) == calls + 1


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", -32700),
        (b"[]", -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "Nope", "params": {}}', -32601),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": 7}}', -32602),
    ],
)
async def test_malformed_json_rpc_gets_a_clear_error_and_the_server_keeps_serving(
    served: Served, body: bytes, code: int
) -> None:
    calls = model_calls(served)
    async with httpx.AsyncClient(timeout=10) as http:
        headers = {**A2A_VERSION, **authorized(), "Content-Type": "application/json"}
        response = await http.post(served.url + "/", content=body, headers=headers)
    after = await send(await served.client(), user_message("Hi"))

    assert response.json()["error"]["code"] == code
    assert after.status.state == COMPLETED and model_calls(served) == calls + 1


ZIP = b"PK\x03\x04" + b"\x00" * 32


@pytest.mark.parametrize(
    ("parts", "said"),
    [
        (
            [Part(raw=ZIP, media_type="application/zip", filename="a.zip")],
            'part 0 ("a.zip") is a file of type "application/zip"',
        ),
        (
            ["Look:", Part(url="http://169.254.169.254/latest", media_type="image/png")],
            "part 1 is a file given by URL",
        ),
        (
            [Part(raw=b"\xff\xd8\xff" + b"\x00" * 8, media_type="image/png")],
            'says it is "image/png" but its bytes are image/jpeg',
        ),
        ([Part()], "part 0 is empty"),
        ([""], "no text, file or data"),
        (["x" * 3000], "longer than 2000 characters"),
        (["a"] * 9, "9 parts; at most 8"),
    ],
)
async def test_a_message_the_agent_cannot_take_is_refused_naming_why_and_nothing_runs(
    served: Served, parts: list[Any], said: str
) -> None:
    calls = model_calls(served)
    client = await served.client()
    with pytest.raises(ProtocolError, match=re.escape(said)):
        await send(client, user_message(*parts))
    refused_calls = model_calls(served)
    after = await send(client, user_message("Hi"))

    assert refused_calls == calls  # the refused message reached no model
    assert after.status.state == COMPLETED


@pytest.mark.parametrize("context_id", ["x" * 129, "../other", "a\nb", "s1 ", "ctx/../etc", "é"])
async def test_a_hostile_context_id_is_refused_and_reaches_no_session(
    served: Served, context_id: str
) -> None:
    calls = model_calls(served)
    with pytest.raises(ProtocolError, match="InvalidContextError: a context id must be"):
        await send(await served.client(), user_message("Hi", context_id=context_id))

    assert model_calls(served) == calls
    for session in (context_id, "a2a:" + context_id):
        assert await served.store.list(SessionScope(id=session), "") == []


async def test_a_context_reaches_its_own_session_never_one_of_the_same_name(
    served: Served,
) -> None:
    local = TurnInput(message="The plan is secret.", trigger="user", session="s1")
    await served.orchestrator.dispatch("helper", local)
    task = await send(await served.client(), user_message("What plan?", context_id="s1"))

    assert task.context_id == "s1" and task.status.state == COMPLETED
    seen = [str(message.content) for message in served.model.requests[-1].messages]
    assert seen and not [text for text in seen if "secret" in text]


async def test_the_token_never_reaches_the_logs(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    await send(await served.client(), user_message("Hi"))
    await post(served, Authorization="Bearer " + TOKEN + "-wrong")

    assert caplog.records and not [r for r in caplog.records if TOKEN in r.getMessage()]


async def test_a_generated_token_is_printed_on_stderr_and_works(
    capsys: pytest.CaptureFixture[str],
) -> None:
    model = ScriptedProvider([text_response("Hello!")])
    async with serving(model, token=None) as served:
        printed = capsys.readouterr().err
        token = re.search(r"Bearer ([\w-]{43})'", printed)
        assert token is not None and served.url in printed
        served.token = token.group(1)
        task = await send(await served.client(), user_message("Hi"))

    assert task.artifacts[0].parts[0].text == "Hello!"


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"token": "short"}, "at least 16 characters"),
        ({"token": "has spaces in it, 0123456789"}, "printable ASCII without spaces"),
        ({"token": TOKEN, "host": "0.0.0.0"}, "needs allowed_hosts"),
    ],
)
async def test_serve_refuses_an_unsafe_token_or_a_wildcard_bind_without_hosts(
    options: dict[str, Any], said: str
) -> None:
    store = InMemoryStore()
    orchestrator = LocalOrchestrator({"a": NeuronTurn(ScriptedProvider([]), state=store)}, store)
    with pytest.raises(ValueError, match=said):
        await serve_a2a(orchestrator, "a", card_name="A", description="d", port=0, **options)


@pytest.mark.parametrize("where", ["metadata", "part"])
async def test_a_number_json_cannot_carry_is_refused_and_never_breaks_the_task_list(
    where: str,
) -> None:
    # NaN is not JSON, but Python's parser takes it (and 1e999 as infinity): a task
    # holding one could never be written out again, so every ListTasks would fail.
    model = FunctionProvider(lambda request: text_response("Hello!"))
    message = rpc()["params"]["message"]
    if where == "metadata":
        message["metadata"] = {"x": "NAN"}
    else:
        message["parts"] = [{"text": "Hi"}, {"data": {"x": "NAN"}}]
    body = json.dumps(rpc(message=message)).replace('"NAN"', "1e999").encode()
    headers = {**A2A_VERSION, **authorized(), "Content-Type": "application/json"}
    async with serving(model) as served, httpx.AsyncClient(timeout=10) as http:
        refused = (await http.post(served.url + "/", content=body, headers=headers)).json()
        listed = await http.post(
            served.url + "/", json=rpc("ListTasks", pageSize=10), headers=headers
        )

    assert refused["error"]["code"] == -32602
    assert "NaN or infinity" in refused["error"]["message"]
    assert served.model.requests == []
    assert listed.json()["result"]["tasks"] == []
