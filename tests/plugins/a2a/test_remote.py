"""`RemoteAgent`: a remote A2A agent (a real `serve_a2a` server on loopback) as a local turn."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from a2a.types import CancelTaskRequest, ListTasksRequest, TaskState
from google.protobuf import json_format
from pydantic import BaseModel

from layer0 import (
    HISTORY_KEY,
    Base64Source,
    Content,
    EffectPolicy,
    ImageBlock,
    NonRetryableError,
    RetryableError,
    SessionScope,
    TextBlock,
    TurnInput,
)
from layer0.testing import InMemoryStore
from neuron_a2a import (
    RemoteAgent,
    RemoteAnswerError,
    RemoteAuthError,
    RemoteInputError,
    RemoteTaskError,
    RemoteUnavailableError,
    agent_card,
)
from neuron_orch_local import LocalOrchestrator
from neuron_tool import ExternalTool, tool
from neuron_turn import (
    AWAITING_APPROVAL,
    ApprovalPolicy,
    Decision,
    DocumentPart,
    ImagePart,
    NeuronTurn,
    NeuronTurnConfig,
    ProviderRequest,
    TextDelta,
    TextPart,
    ToolResultPart,
    ToolUsePart,
    TurnDone,
    document_block,
    output_value,
    pending_approvals,
    resume_input,
)
from neuron_turn.testing import (
    FunctionProvider,
    ScriptedProvider,
    text_response,
    tool_call_response,
)

from ._server import TOKEN, GatedModel, Served, served, serving

pytestmark = pytest.mark.asyncio

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


def ask(text: str = "What is the capital of France?", **fields: Any) -> TurnInput:
    return TurnInput(message=Content(text), trigger="user", **fields)


def texts(request: ProviderRequest) -> list[str]:
    return [p.text for m in request.messages for p in m.content if isinstance(p, TextPart)]


def delegating_lead(store: InMemoryStore, agent: str, task: str, answer: str) -> NeuronTurn:
    """A local agent whose model delegates `task` to `agent`, then says `answer`."""
    asks = ToolUsePart("d1", "delegate", {"agent": agent, "message": task})
    return NeuronTurn(
        ScriptedProvider([tool_call_response(asks), text_response(answer)]),
        state=store,
        config=NeuronTurnConfig(effect_policy=EffectPolicy.everything()),
    )


async def test_execute_returns_the_remote_answer_with_zero_tokens() -> None:
    async with serving(ScriptedProvider([text_response("Paris.")])) as served:
        async with RemoteAgent(served.url, token=TOKEN) as remote:
            output = await remote.execute(ask())
            card = remote.card

    assert output.message.as_text() == "Paris."
    assert output.exit_reason == "complete"
    assert (output.metadata.tokens_in, output.metadata.tokens_out) == (0, 0)
    assert texts(served.model.requests[0]) == ["What is the capital of France?"]
    assert card is not None and card.name == "Helper"


class City(BaseModel):
    city: str
    population: int


async def test_a_typed_answer_keeps_its_value() -> None:
    answer = {"city": "Paris", "population": 2_100_000}
    model = ScriptedProvider([text_response(json.dumps(answer))])
    async with serving(model, output_type=City) as served:
        async with RemoteAgent(served.url, token=TOKEN) as remote:
            output = await remote.execute(ask())

    assert output_value(output) == answer
    assert output_value(output, City) == City(city="Paris", population=2_100_000)
    assert json.loads(output.message.as_text()) == answer


async def test_a_session_continues_the_remote_conversation() -> None:
    def model(request: ProviderRequest) -> Any:
        return text_response(f"answer {len(request.messages)}")

    async with serving(FunctionProvider(model)) as served:
        async with RemoteAgent(served.url, token=TOKEN) as remote:
            first = await remote.execute(ask("Remember 42.", session="chat-1"))
            second = await remote.execute(ask("What did I ask you to remember?", session="chat-1"))
            other = await remote.execute(ask("Hello", session="chat-2"))

    assert first.message.as_text() == "answer 1"
    # The second call's model saw the first exchange: the remote context is the session.
    assert texts(served.model.requests[1]) == [
        "Remember 42.",
        "answer 1",
        "What did I ask you to remember?",
    ]
    assert second.message.as_text() == "answer 3"
    assert other.message.as_text() == "answer 1"  # another session, another conversation


async def test_a_message_the_remote_refuses_is_an_error_with_its_reason() -> None:
    # PNG bytes said to be a JPEG: the server refuses the part before any task exists.
    image = ImageBlock(
        source=Base64Source(data=base64.b64encode(PNG).decode()), media_type="image/jpeg"
    )
    async with serving(ScriptedProvider([text_response("never")])) as served:
        async with RemoteAgent(served.url, token=TOKEN) as remote:
            with pytest.raises(RemoteTaskError) as caught:
                await remote.execute(TurnInput(message=Content([image]), trigger="user"))

    assert "refused" in str(caught.value) and "image/png" in str(caught.value)
    assert served.model.requests == []


async def test_a_local_agent_delegates_to_the_remote_one_and_reads_its_answer() -> None:
    async with serving(ScriptedProvider([text_response("Paris.")])) as served:
        async with RemoteAgent(served.url, token=TOKEN) as remote:
            store = InMemoryStore()
            lead = delegating_lead(store, "geographer", "Capital of France?", "It is Paris.")
            orchestrator = LocalOrchestrator(
                {"lead": lead, "geographer": remote},
                store,
                policies={"lead": EffectPolicy.everything()},
            )
            output = await orchestrator.dispatch("lead", ask("Ask the geographer", session="s1"))

    assert output.message.as_text() == "It is Paris."
    assert texts(served.model.requests[0]) == ["Capital of France?"]
    lead_model = lead_requests(lead)
    results = [
        p.content
        for m in lead_model[1].messages
        for p in m.content
        if isinstance(p, ToolResultPart) and p.tool_use_id == "d1"
    ]
    assert results and "Paris." in str(results[0])


def lead_requests(turn: NeuronTurn) -> list[ProviderRequest]:
    provider: Any = turn.provider
    return list(provider.requests)


async def test_an_image_reaches_the_remote_model_as_an_image() -> None:
    image = ImageBlock(
        source=Base64Source(data=base64.b64encode(PNG).decode()), media_type="image/png"
    )
    async with serving(ScriptedProvider([text_response("A black square.")])) as served:
        async with RemoteAgent(served.url, token=TOKEN) as remote:
            message = Content([TextBlock(text="What is this?"), image])
            output = await remote.execute(TurnInput(message=message, trigger="user"))

    assert output.message.as_text() == "A black square."
    parts = served.model.requests[0].messages[-1].content
    images = [p for p in parts if isinstance(p, ImagePart)]
    assert len(images) == 1 and images[0].media_type == "image/png"
    assert base64.b64decode(images[0].source.data) == PNG


async def test_a_document_reaches_the_remote_model_as_a_document() -> None:
    pdf = b"%PDF-1.4\n% a tiny document\n"
    async with serving(ScriptedProvider([text_response("A report.")])) as served:
        async with RemoteAgent(served.url, token=TOKEN) as remote:
            message = Content([TextBlock(text="Summarise"), document_block(pdf, name="r.pdf")])
            await remote.execute(TurnInput(message=message, trigger="user"))

    parts = served.model.requests[0].messages[-1].content
    documents = [p for p in parts if isinstance(p, DocumentPart)]
    assert [(d.media_type, d.name) for d in documents] == [("application/pdf", "r.pdf")]
    assert base64.b64decode(documents[0].source.data) == pdf


async def test_a_wrong_token_is_a_non_retryable_error_and_nothing_runs_remotely(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = "not-the-token-0123456789abcdef"
    async with serving(ScriptedProvider([text_response("never")])) as served:
        async with RemoteAgent(served.url, token=wrong) as remote:
            with pytest.raises(RemoteAuthError) as caught:
                await remote.execute(ask())

    assert isinstance(caught.value, NonRetryableError)
    assert "401" in str(caught.value) and "token" in str(caught.value)
    assert served.url in str(caught.value)
    assert wrong not in str(caught.value) and wrong not in repr(remote)
    assert wrong not in caplog.text
    assert served.model.requests == []


async def test_a_server_gone_is_a_retryable_error_naming_the_url() -> None:
    async with serving(ScriptedProvider([])) as served:
        url = served.url
    async with RemoteAgent(url, token=TOKEN) as remote:
        with pytest.raises(RemoteUnavailableError) as caught:
            await remote.execute(ask())

    assert isinstance(caught.value, RetryableError)
    assert url in str(caught.value)
    assert "Traceback" not in str(caught.value) and TOKEN not in str(caught.value)


async def test_a_remote_turn_failure_is_an_error_with_the_remote_message() -> None:
    def broken(request: ProviderRequest) -> Any:
        raise NonRetryableError("the model is on fire")

    async with serving(FunctionProvider(broken)) as served:
        async with RemoteAgent(served.url, token=TOKEN) as remote:
            with pytest.raises(RemoteTaskError) as caught:
                await remote.execute(ask())

    message = str(caught.value)
    assert "failed" in message and "the model is on fire" in message
    assert served.url in message
    assert "Traceback" not in message


def serving_a_cleaner(deleted: list[str]) -> AbstractAsyncContextManager[Served]:
    """Serve a remote agent whose `delete_file("old.log")` call waits for approval.

    Each file it deletes is added to `deleted`; then it answers "Deleted old.log.".
    """

    @tool
    async def delete_file(path: str) -> str:
        """Delete a file."""
        deleted.append(path)
        return f"deleted {path}"

    model = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("c1", "delete_file", {"path": "old.log"})),
            text_response("Deleted old.log."),
        ]
    )
    policy = NeuronTurnConfig(model="m", approval=ApprovalPolicy.of(["delete_*"]))
    return serving(model, tools=[delete_file], config=policy)


async def test_a_remote_call_waiting_for_approval_pauses_and_the_resume_decides_it() -> None:
    deleted: list[str] = []
    async with serving_a_cleaner(deleted) as served:
        async with RemoteAgent(served.url, token=TOKEN) as remote:
            store = InMemoryStore()
            orchestrator = LocalOrchestrator({"cleaner": remote}, store)
            paused = await orchestrator.dispatch("cleaner", ask("Tidy up", session="s1"))
            waiting = pending_approvals(paused)
            assert deleted == []

            decisions = [Decision.approve("c1")]
            done = await orchestrator.dispatch("cleaner", resume_input("s1", decisions))

    assert paused.exit_reason == AWAITING_APPROVAL
    assert [(c.id, c.name, c.input) for c in waiting] == [
        ("c1", "delete_file", {"path": "old.log"})
    ]
    assert deleted == ["old.log"]
    assert done.message.as_text() == "Deleted old.log."
    assert done.exit_reason == "complete"


async def test_a_remote_external_call_pauses_here_and_the_callers_answer_reaches_the_remote() -> (
    None
):
    picking = ToolUsePart("c1", "pick_colour", {"prompt": "Which?"})
    model = ScriptedProvider([tool_call_response(picking), text_response("Red it is.")])
    pick = ExternalTool(
        "pick_colour",
        "Ask the user to pick a colour.",
        {"type": "object", "properties": {"prompt": {"type": "string"}}},
    )
    async with serving(model, tools=[pick]) as served:
        async with RemoteAgent(served.url, token=TOKEN) as remote:
            store = InMemoryStore()
            orchestrator = LocalOrchestrator({"painter": remote}, store)
            paused = await orchestrator.dispatch("painter", ask("Paint it", session="s1"))
            answer = Decision.answer("c1", {"picked": "red"})
            done = await orchestrator.dispatch("painter", resume_input("s1", [answer]))
            history = await store.read(SessionScope(id="s1"), HISTORY_KEY)

    assert [(c.id, c.external) for c in pending_approvals(paused)] == [("c1", True)]
    assert done.message.as_text() == "Red it is."
    [result] = [p for p in model.requests[1].messages[-1].content if isinstance(p, ToolResultPart)]
    assert (result.content, result.is_error) == ('{"picked":"red"}', False)
    # The local record of the exchange holds the answer the remote got, not a denial.
    assert "picked" in str(history) and "Denied" not in str(history)


async def test_a_remote_paused_before_its_server_restarted_resumes_with_the_decisions() -> None:
    deleted: list[str] = []
    async with serving_a_cleaner(deleted) as first:
        remote = RemoteAgent(first.url, token=TOKEN)
        orchestrator = LocalOrchestrator({"cleaner": remote}, InMemoryStore())
        paused = await orchestrator.dispatch("cleaner", ask("Tidy up", session="s1"))
    # A new server over the same sessions, at the same address: the tasks were in memory.
    async with served(first.orchestrator, port=urlsplit(first.url).port), remote:
        decisions = [Decision.approve("c1")]
        done = await orchestrator.dispatch("cleaner", resume_input("s1", decisions))

    assert paused.exit_reason == AWAITING_APPROVAL and deleted == ["old.log"]
    assert done.message.as_text() == "Deleted old.log." and done.exit_reason == "complete"


async def test_after_a_paused_remote_task_is_cancelled_its_session_takes_a_new_message() -> None:
    deleted: list[str] = []

    @tool
    async def delete_file(path: str) -> str:
        """Delete a file."""
        deleted.append(path)
        return f"deleted {path}"

    model = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("c1", "delete_file", {"path": "old.log"})),
            text_response("Kept it."),
            text_response("Hello again."),
        ]
    )
    policy = NeuronTurnConfig(model="m", approval=ApprovalPolicy.of(["delete_*"]))
    async with serving(model, tools=[delete_file], config=policy) as served_agent:
        async with RemoteAgent(served_agent.url, token=TOKEN) as remote:
            orchestrator = LocalOrchestrator({"cleaner": remote}, InMemoryStore())
            await orchestrator.dispatch("cleaner", ask("Tidy up", session="s1"))
            client = await served_agent.client()
            (task,) = (await client.list_tasks(ListTasksRequest(context_id="s1"))).tasks
            await client.cancel_task(CancelTaskRequest(id=task.id))
            after = await orchestrator.dispatch("cleaner", ask("Hello?", session="s1"))

    assert deleted == [] and after.message.as_text() == "Hello again."
    assert "cancelled by the caller" in str(model.requests[1].messages[-1].content)


async def test_a_delegating_turn_pauses_on_the_remote_calls_and_its_resume_decides_them() -> None:
    deleted: list[str] = []
    async with serving_a_cleaner(deleted) as served:
        async with RemoteAgent(served.url, token=TOKEN) as remote:
            store = InMemoryStore()
            lead = delegating_lead(store, "cleaner", "delete old.log", "old.log is gone.")
            orchestrator = LocalOrchestrator(
                {"lead": lead, "cleaner": remote},
                store,
                policies={"lead": EffectPolicy.everything()},
            )
            paused = await orchestrator.dispatch("lead", ask("Tidy up", session="s1"))
            waiting = pending_approvals(paused)
            assert deleted == []

            decisions = [Decision.approve("d1/c1")]
            done = await orchestrator.dispatch("lead", resume_input("s1", decisions))

    assert [(c.id, c.agent, c.name, c.input) for c in waiting] == [
        ("d1/c1", "cleaner", "delete_file", {"path": "old.log"})
    ]
    assert deleted == ["old.log"]
    assert done.message.as_text() == "old.log is gone."
    assert "Deleted old.log." in str(lead_requests(lead)[1].messages[-1].content)


async def test_decisions_for_a_remote_context_waiting_on_nothing_are_refused_saying_so() -> None:
    model = ScriptedProvider([text_response("Hi.")])
    async with serving(model) as served:
        async with RemoteAgent(served.url, token=TOKEN) as remote:
            await remote.execute(ask(session="s1"))
            with pytest.raises(RemoteTaskError, match="context 's1' waits on no call"):
                await remote.execute(resume_input("s1", [Decision.approve("c1")]))

    assert len(model.requests) == 1


async def test_cancelling_execute_cancels_the_remote_task() -> None:
    started = asyncio.Event()
    cancelled: list[str] = []

    @tool
    async def wait_forever() -> str:
        """Wait."""
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append("wait_forever")
            raise
        return "never"

    model = ScriptedProvider([tool_call_response(ToolUsePart("c1", "wait_forever", {}))])
    async with serving(model, tools=[wait_forever]) as served:
        async with RemoteAgent(served.url, token=TOKEN) as remote:
            running = asyncio.create_task(remote.execute(ask("Wait", session="w1")))
            await started.wait()
            running.cancel()
            with pytest.raises(asyncio.CancelledError):
                await running
            tasks = await list_tasks(served)

    assert cancelled == ["wait_forever"]
    assert [t.status.state for t in tasks] == [TaskState.TASK_STATE_CANCELED]


async def test_a_remote_past_the_timeout_is_cancelled_and_a_retryable_error() -> None:
    started = asyncio.Event()

    @tool
    async def wait_forever() -> str:
        """Wait."""
        started.set()
        await asyncio.Event().wait()
        return "never"

    model = ScriptedProvider([tool_call_response(ToolUsePart("c1", "wait_forever", {}))])
    async with serving(model, tools=[wait_forever]) as served:
        async with RemoteAgent(served.url, token=TOKEN, timeout=1) as remote:
            with pytest.raises(RemoteUnavailableError, match=r"did not answer within 1s"):
                await remote.execute(ask("Wait"))
            tasks = await list_tasks(served)

    assert started.is_set()
    assert [t.status.state for t in tasks] == [TaskState.TASK_STATE_CANCELED]


async def list_tasks(served: Served) -> list[Any]:
    client = await served.client()
    return list((await client.list_tasks(ListTasksRequest())).tasks)


# --- an untrusted remote: a handler of our own in place of a server ---------------------

BASE = "http://remote.test"


def card_json(url: str = BASE + "/", streaming: bool = True) -> dict[str, Any]:
    card = agent_card(name="Odd", description="Answers oddly.", url=url, streaming=streaming)
    return json_format.MessageToDict(card)


def fake_remote(
    answer: Callable[[httpx.Request], httpx.Response], *, limit: int = 4096, **card: Any
) -> tuple[RemoteAgent, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path == "/.well-known/agent-card.json":
            return httpx.Response(200, json=card_json(**card))
        return answer(request)

    http = httpx.AsyncClient(transport=httpx.MockTransport(handle))
    return RemoteAgent(BASE, token=TOKEN, http_client=http, max_answer_bytes=limit), seen


def sse(*results: Any) -> httpx.Response:
    body = "".join(
        f"data: {json.dumps({'jsonrpc': '2.0', 'id': '1', 'result': r})}\n\n" for r in results
    )
    return httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})


async def test_an_oversized_answer_is_cut_off_with_a_clear_error() -> None:
    huge = {"task": {"id": "t1", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}}
    remote, _ = fake_remote(lambda request: sse(*[huge] * 200))

    with pytest.raises(RemoteAnswerError) as caught:
        await remote.execute(ask())

    assert isinstance(caught.value, NonRetryableError)
    assert "larger than 4096 bytes" in str(caught.value) and BASE in str(caught.value)


async def test_a_malformed_answer_is_a_clear_error() -> None:
    remote, _ = fake_remote(
        lambda request: httpx.Response(200, text="<html>oops</html>"), streaming=False
    )

    with pytest.raises(RemoteAnswerError, match="is not JSON"):
        await remote.execute(ask())

    odd = {"id": "t1", "contextId": "c", "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}
    odd["status"]["message"] = {
        "messageId": "m",
        "role": "ROLE_AGENT",
        "parts": [{"data": {"awaiting_approval": [{"id": 7, "secret": True}]}}],
    }
    remote, _ = fake_remote(lambda request: sse({"task": odd}))
    with pytest.raises(RemoteAnswerError, match="waiting call 0"):
        await remote.execute(ask())


async def test_a_card_naming_another_origin_gets_no_request_with_the_token() -> None:
    remote, seen = fake_remote(lambda request: sse(), url="http://elsewhere.test/")

    with pytest.raises(RemoteAnswerError, match="another origin"):
        await remote.execute(ask())

    assert [r.url.host for r in seen] == ["remote.test"]


async def test_a_session_no_context_id_can_hold_fails_before_any_request() -> None:
    remote, seen = fake_remote(lambda request: sse())

    with pytest.raises(RemoteInputError, match="context id of"):
        await remote.execute(ask(session="s" * 200))

    assert seen == []


async def test_a_remote_that_does_not_stream_answers_whole() -> None:
    task = {
        "id": "t1",
        "contextId": "c",
        "status": {"state": "TASK_STATE_COMPLETED"},
        "artifacts": [{"artifactId": "answer", "parts": [{"text": "Whole."}]}],
    }
    answer = {"jsonrpc": "2.0", "id": "1", "result": {"task": task}}
    remote, seen = fake_remote(lambda request: httpx.Response(200, json=answer), streaming=False)

    output = await remote.execute(ask())

    assert output.message.as_text() == "Whole."
    sent = json.loads(seen[-1].content)
    assert sent["method"] == "SendMessage"
    assert seen[-1].headers["authorization"] == f"Bearer {TOKEN}"


@pytest.mark.parametrize("status", [429, 503])
async def test_an_overloaded_remote_is_a_retryable_error_with_its_wait(status: int) -> None:
    remote, _ = fake_remote(lambda request: httpx.Response(status, headers={"retry-after": "7"}))

    with pytest.raises(RemoteUnavailableError) as caught:
        await remote.execute(ask())

    assert isinstance(caught.value, RetryableError)
    assert caught.value.retry_after == 7.0
    assert f"HTTP {status}" in str(caught.value) and BASE in str(caught.value)


async def test_a_remote_answer_streams_through_a_local_dispatch_as_it_comes() -> None:
    model = GatedModel()
    async with serving(model) as served, RemoteAgent(served.url, token=TOKEN) as remote:
        orchestrator = LocalOrchestrator({"remote": remote}, InMemoryStore())
        deltas: list[str] = []
        async with asyncio.timeout(10):  # without streaming the gate never opens
            async with orchestrator.stream("remote", ask("Say hello")) as events:
                async for item in events:
                    if isinstance(item.event, TextDelta):
                        deltas.append(item.event.text)
                        model.gate.set()  # the remote goes on once "Hel" arrived here

    assert deltas == ["Hel", "lo!"]  # the whole answer at the end adds nothing shown
    assert events.result.output.message.as_text() == "Hello!"


async def test_closing_a_remote_stream_early_cancels_the_remote_task() -> None:
    model = GatedModel()
    async with serving(model) as served, RemoteAgent(served.url, token=TOKEN) as remote:
        stream = remote.stream(ask("Say hello"))
        first = await anext(aiter(stream))
        await stream.aclose()  # type: ignore[attr-defined]
        (task,) = await list_tasks(served)

    assert isinstance(first, TextDelta) and first.text == "Hel"
    assert task.status.state == TaskState.TASK_STATE_CANCELED


@pytest.mark.parametrize(
    "body",
    [
        "[" * 100_000,  # nested past Python's recursion limit
        '{"jsonrpc": "2.0", "id": "1", "result": ' + "1" * 5000 + "}",  # past int digits
        '{"jsonrpc": "2.0", "id": "1", "result": {"task": {"id": NaN}}}',
        '{"jsonrpc": "2.0", "id": "1", "result": {"task": {"artifacts": [{"artifactId":'
        ' "answer", "parts": [{"data": 1e999}]}], "status": {"state": "TASK_STATE_COMPLETED"}}}}',
    ],
)
async def test_an_answer_that_is_not_json_as_the_standard_says_is_a_clear_error(body: str) -> None:
    answer = httpx.Response(200, text=body)
    remote, _ = fake_remote(lambda request: answer, streaming=False, limit=1_000_000)

    with pytest.raises(RemoteAnswerError, match="is not JSON"):
        await remote.execute(ask())


def failed_task(said: str) -> dict[str, Any]:
    message = {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": said}]}
    status = {"state": "TASK_STATE_FAILED", "message": message}
    return {"id": "t1", "contextId": "c", "status": status}


@pytest.mark.parametrize(
    "answer",
    [
        lambda said: httpx.Response(
            200, json={"jsonrpc": "2.0", "id": "1", "error": {"code": -32600, "message": said}}
        ),
        lambda said: sse({"task": failed_task(said)}),
    ],
    ids=["rpc-error", "failed-task"],
)
async def test_a_remote_echoing_the_token_never_puts_it_in_the_error(
    answer: Callable[[str], httpx.Response],
) -> None:
    said = f"bad header 'Authorization: Bearer {TOKEN}'"
    remote, _ = fake_remote(lambda request: answer(said))

    with pytest.raises(RemoteTaskError) as caught:
        await remote.execute(ask())

    assert TOKEN not in str(caught.value)
    assert "bad header 'Authorization: Bearer [the token]'" in str(caught.value)


async def test_a_stream_line_sent_in_small_pieces_is_read_in_linear_time() -> None:
    # Each piece used to copy and rescan all the line held so far: 8 MiB in TCP-sized
    # pieces took some 20 s of the caller's CPU, 16 MiB (the default limit) over a minute.
    size, piece = 8 * 1024 * 1024, 1400

    async def endless_line() -> AsyncIterator[bytes]:
        yield b"data: "
        for _ in range(size // piece):
            yield b"x" * piece

    def answer(request: httpx.Request) -> httpx.Response:
        headers = {"content-type": "text/event-stream"}
        return httpx.Response(200, content=endless_line(), headers=headers)

    remote, _ = fake_remote(answer, limit=2 * size)
    async with asyncio.timeout(5):  # linear: well under a second
        with pytest.raises(RemoteAnswerError, match="answered no task"):
            await remote.execute(ask())


def piecemeal(count: int, *, distinct: bool) -> httpx.Response:
    """A stream of `count` one-character artifact appends (each its own artifact if `distinct`)."""

    def update(index: int) -> dict[str, Any]:
        artifact = {"artifactId": f"a{index}" if distinct else "answer", "parts": [{"text": "x"}]}
        return {"artifactUpdate": {"taskId": "t1", "artifact": artifact, "append": True}}

    working = {"task": {"id": "t1", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}}
    done = {"statusUpdate": {"taskId": "t1", "status": {"state": "TASK_STATE_COMPLETED"}}}
    return sse(working, *(update(index) for index in range(count)), done)


@pytest.mark.parametrize("distinct", [False, True], ids=["one-artifact", "many-artifacts"])
async def test_a_stream_of_many_small_updates_is_read_in_linear_time(distinct: bool) -> None:
    # Each update used to rescan every artifact, or rejoin the answer's every part:
    # 15,000 updates held the caller's CPU some 25 s; a whole 16 MiB stream, minutes.
    count = 15_000
    remote, _ = fake_remote(lambda request: piecemeal(count, distinct=distinct), limit=2**24)

    async with asyncio.timeout(10):  # linear: a second or two
        events = [event async for event in remote.stream(ask())]

    done = events[-1]
    assert isinstance(done, TurnDone) and len(done.output.message.as_text()) == count
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == (
        "" if distinct else "x" * count
    )


async def test_a_url_holding_credentials_is_refused_before_they_show_anywhere() -> None:
    # Every error and log line names the URL: credentials in it would go along.
    with pytest.raises(ValueError, match="credentials") as caught:
        RemoteAgent("http://agent:s3cret-pass@remote.test", token=TOKEN)

    assert "s3cret-pass" not in str(caught.value)


async def test_a_remote_echoing_the_token_in_its_answer_never_hands_it_to_the_caller() -> None:
    said = f"your header was 'Bearer {TOKEN}'"
    parts = [{"text": said}, {"data": {"echo": said, TOKEN: [said]}}]
    artifact = {"artifactId": "answer", "name": "answer", "parts": parts}
    task = {
        "id": "t1",
        "contextId": "c",
        "status": {"state": "TASK_STATE_COMPLETED"},
        "artifacts": [artifact],
    }
    remote, _ = fake_remote(lambda request: sse({"task": task}))

    output = await remote.execute(ask())

    assert TOKEN not in output.model_dump_json()
    assert output.message.as_text() == "your header was 'Bearer [the token]'"
