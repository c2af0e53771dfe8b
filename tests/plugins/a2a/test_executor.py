"""`A2AExecutor` over a real server: messages become turns, answers tasks, approvals
input-required tasks; called with the a2a-sdk's own client over loopback HTTP."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from a2a.helpers import get_artifact_text, get_data_parts
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Part,
    StreamResponse,
    Task,
    TaskState,
)
from a2a.utils.errors import A2AError as ProtocolError
from pydantic import BaseModel

from layer0 import SessionScope, TurnInput
from neuron_tool import RunContext, tool
from neuron_turn import (
    ApprovalPolicy,
    DocumentPart,
    ImagePart,
    NeuronTurnConfig,
    ProviderAuthenticationError,
    ProviderRequest,
    TextDelta,
    TextPart,
    ToolResultPart,
    ToolUsePart,
    Tripwire,
    output_guardrail,
)
from neuron_turn.testing import (
    FunctionProvider,
    ScriptedProvider,
    text_response,
    tool_call_response,
)

from ._server import GatedModel, Served, send, served, serving, stream, user_message

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n"
COMPLETED = TaskState.TASK_STATE_COMPLETED
INPUT_REQUIRED = TaskState.TASK_STATE_INPUT_REQUIRED


def answer_of(task: Task) -> str:
    (artifact,) = task.artifacts
    return get_artifact_text(artifact)


def status_text(task: Task) -> str:
    return status_text_of(task.status.message.parts)


def status_text_of(parts: Any) -> str:
    return "\n".join(p.text for p in parts if p.HasField("text"))


def texts(request: ProviderRequest) -> list[str]:
    return [
        part.text
        for message in request.messages
        for part in message.content
        if isinstance(part, TextPart)
    ]


async def test_a_message_becomes_a_turn_whose_answer_completes_the_task() -> None:
    model = ScriptedProvider([text_response("Paris.")])
    async with serving(model) as served:
        task = await send(await served.client(), user_message("Capital of France?"))

    assert task.status.state == COMPLETED
    assert answer_of(task) == "Paris."
    assert texts(model.requests[0])[-1] == "Capital of France?"


async def test_a_second_message_in_the_same_context_continues_its_session() -> None:
    model = FunctionProvider(lambda request: text_response(f"seen {len(texts(request))}"))
    async with serving(model) as served:
        client = await served.client()
        first = await send(client, user_message("My name is Ada."))
        second = await send(client, user_message("Who am I?", context_id=first.context_id))
        elsewhere = await send(client, user_message("Who am I?"))
        history = await served.store.read(SessionScope(id=f"a2a:{first.context_id}"), "messages")

    assert second.context_id == first.context_id and second.id != first.id
    assert texts(model.requests[1]) == ["My name is Ada.", "seen 1", "Who am I?"]
    assert texts(model.requests[2]) == ["Who am I?"]  # another context, another session
    assert elsewhere.context_id != first.context_id
    assert history is not None


async def test_a_streaming_request_gets_the_answers_text_before_the_turn_ends() -> None:
    model = GatedModel()
    seen_before_the_end: list[str] = []

    def on_event(response: StreamResponse) -> None:
        if response.HasField("artifact_update") and not model.gate.is_set():
            seen_before_the_end.append(get_artifact_text(response.artifact_update.artifact))
            model.gate.set()

    async with serving(model) as served:
        client = await served.client(streaming=True)
        async with asyncio.timeout(10):  # without streaming the gate never opens
            events = await stream(client, user_message("Say hello"), on_event)
        task = await client.get_task(GetTaskRequest(id=events[-1].status_update.task_id))

    assert seen_before_the_end == ["Hel"]
    assert events[-1].status_update.status.state == COMPLETED
    assert answer_of(task) == "Hello!"  # the whole answer replaces the chunks


async def test_a_streaming_request_hears_of_each_tool_the_turn_runs() -> None:
    model = ScriptedProvider(
        [tool_call_response(ToolUsePart("c1", "echo", {"text": "x"})), text_response("Done.")]
    )
    async with serving(model, tools=[echo]) as served:
        events = await stream(await served.client(streaming=True), user_message("Echo x"))

    notes = [
        status_text_of(event.status_update.status.message.parts)
        for event in events
        if event.HasField("status_update")
    ]
    assert "running tool echo" in notes


class DispatchOnly:
    """An orchestrator that cannot stream: only `dispatch` (and the rest of layer0's)."""

    def __init__(self, inner: Any) -> None:
        self.dispatch = inner.dispatch
        self.dispatch_many = inner.dispatch_many
        self.signal = inner.signal
        self.query = inner.query


async def test_an_orchestrator_that_cannot_stream_sends_the_answer_as_one_artifact() -> None:
    model = ScriptedProvider([text_response("Hello there!")], chunk_size=3)
    async with serving(model, served_as=DispatchOnly) as served:
        events = await stream(await served.client(streaming=True), user_message("Hi"))

    chunks = [e.artifact_update for e in events if e.HasField("artifact_update")]
    assert [get_artifact_text(chunk.artifact) for chunk in chunks] == ["Hello there!"]
    assert chunks[0].last_chunk
    assert TaskState.Name(events[-1].status_update.status.state) == "TASK_STATE_COMPLETED"


async def test_a_blocking_request_gets_the_answer_whole() -> None:
    model = ScriptedProvider([text_response("Hello there!")], chunk_size=3)
    async with serving(model) as served:
        task = await send(await served.client(), user_message("Hi"))

    assert [get_artifact_text(a) for a in task.artifacts] == ["Hello there!"]


async def test_an_image_and_a_pdf_reach_the_model_as_an_image_and_a_document() -> None:
    model = ScriptedProvider([text_response("A tiny image and a report.")])
    image = Part(raw=PNG, media_type="image/png", filename="dot.png")
    document = Part(raw=PDF, filename="report.pdf")  # the type is read from the bytes
    async with serving(model) as served:
        task = await send(await served.client(), user_message("What are these?", image, document))

    assert task.status.state == COMPLETED
    content = model.requests[0].messages[-1].content
    assert [type(part) for part in content] == [TextPart, ImagePart, DocumentPart]
    assert isinstance(content[1], ImagePart) and content[1].media_type == "image/png"
    assert isinstance(content[2], DocumentPart) and content[2].name == "report.pdf"


async def test_a_data_part_reaches_the_model_as_its_json() -> None:
    model = ScriptedProvider([text_response("ok")])
    data = Part()
    data.data.struct_value.update({"order": "A7", "count": 2})
    async with serving(model) as served:
        await send(await served.client(), user_message("Look this up:", data))

    said, data = texts(model.requests[0])[-2:]
    assert said == "Look this up:" and json.loads(data) == {"order": "A7", "count": 2}


class Answer(BaseModel):
    answer: int


async def test_a_typed_answer_comes_as_text_and_as_a_data_part() -> None:
    model = ScriptedProvider([text_response('{"answer": 391}')])
    async with serving(model, output_type=Answer) as served:
        task = await send(await served.client(), user_message("What is 17*23?"))

    (artifact,) = task.artifacts
    assert get_data_parts(artifact.parts) == [{"answer": 391}]
    assert '"answer"' in get_artifact_text(artifact)


async def test_an_error_of_the_turn_fails_the_task_naming_it_without_a_traceback() -> None:
    error = ProviderAuthenticationError("the API key was refused", provider="scripted")
    async with serving(ScriptedProvider([error])) as served:
        task = await send(await served.client(), user_message("Hi"))

    assert task.status.state == TaskState.TASK_STATE_FAILED
    text = status_text(task)
    assert "ProviderAuthenticationError: the API key was refused" in text
    assert "Traceback" not in text and "File " not in text


async def test_a_turn_stopped_by_a_limit_fails_the_task_saying_which() -> None:
    again = tool_call_response(ToolUsePart("c1", "echo", {"text": "x"}))
    model = ScriptedProvider([again, again, again])
    config = NeuronTurnConfig(model="m", max_turns=1)
    async with serving(model, tools=[echo], config=config) as served:
        task = await send(await served.client(), user_message("Loop"))

    assert task.status.state == TaskState.TASK_STATE_FAILED
    assert "max_turns" in status_text(task)


@output_guardrail
async def no_secrets(context: RunContext[Any], answer: str) -> Tripwire | None:
    return Tripwire("the answer holds a password") if "hunter2" in answer else None


async def test_a_tripped_guardrail_rejects_the_task_saying_why() -> None:
    model = ScriptedProvider([text_response("The password is hunter2.")])
    config = NeuronTurnConfig(model="m", guardrails=[no_secrets])
    async with serving(model, config=config) as served:
        task = await send(await served.client(), user_message("What is the password?"))

    assert TaskState.Name(task.status.state) == "TASK_STATE_REJECTED"
    assert "guardrail" in status_text(task)
    assert "hunter2" not in str(task)  # the withheld answer is nowhere in the task


@tool
async def echo(text: str) -> str:
    """Say `text` back."""
    return text


# --- approvals -------------------------------------------------------------------------


def deleting(runs: list[str]) -> Any:
    @tool
    async def delete_file(path: str) -> str:
        """Delete a file."""
        runs.append(path)
        return f"deleted {path}"

    return delete_file


APPROVAL = NeuronTurnConfig(model="m", approval=ApprovalPolicy.of(["delete_*"]))
ASKS = tool_call_response(ToolUsePart("c1", "delete_file", {"path": "old.log"}))


def decisions(*entries: dict[str, Any], task: Task) -> Any:
    data = Part()
    data.data.struct_value.update({"decisions": list(entries)})
    return user_message(data, context_id=task.context_id, task_id=task.id)


async def ask_to_delete(served: Served) -> Task:
    paused = await send(await served.client(), user_message("Tidy up"))
    assert paused.status.state == INPUT_REQUIRED
    return paused


async def test_a_call_needing_approval_makes_the_task_input_required_listing_it() -> None:
    runs: list[str] = []
    async with serving(ScriptedProvider([ASKS]), tools=[deleting(runs)], config=APPROVAL) as s:
        paused = await ask_to_delete(s)

    listed = get_data_parts(paused.status.message.parts)
    assert listed == [
        {"awaiting_approval": [{"id": "c1", "name": "delete_file", "input": {"path": "old.log"}}]}
    ]
    assert "delete_file (c1)" in status_text(paused)
    assert runs == []


async def test_an_approval_resumes_the_turn_and_the_call_runs_once() -> None:
    runs: list[str] = []
    model = ScriptedProvider([ASKS, text_response("Deleted old.log.")])
    async with serving(model, tools=[deleting(runs)], config=APPROVAL) as served:
        paused = await ask_to_delete(served)
        client = await served.client()
        done = await send(client, decisions({"call_id": "c1", "approve": True}, task=paused))

    assert done.id == paused.id and done.status.state == COMPLETED
    assert answer_of(done) == "Deleted old.log."
    assert runs == ["old.log"]
    result = model.requests[1].messages[-1].content[-1]
    assert isinstance(result, ToolResultPart) and result.content == "deleted old.log"


async def test_a_denial_resumes_the_turn_and_the_call_never_runs() -> None:
    runs: list[str] = []
    model = ScriptedProvider([ASKS, text_response("Kept it.")])
    async with serving(model, tools=[deleting(runs)], config=APPROVAL) as served:
        paused = await ask_to_delete(served)
        deny = {"call_id": "c1", "approve": False, "reason": "keep the logs"}
        done = await send(await served.client(), decisions(deny, task=paused))

    assert done.status.state == COMPLETED and runs == []
    result = model.requests[1].messages[-1].content[-1]
    assert isinstance(result, ToolResultPart) and result.is_error
    assert "keep the logs" in result.content


@pytest.mark.parametrize(
    ("entries", "said"),
    [
        ([{"call_id": "c9", "approve": True}], '"c9"'),
        ([], 'not decided: "c1"'),
        ([{"call_id": "c1", "approve": True}] * 2, "more than once"),
        ([{"call_id": "c1", "approve": "yes"}], "boolean 'approve'"),
        ([{"call_id": "c1", "approve": True, "rm": "-rf"}], "unknown keys: rm"),
        ([{"call_id": "c1", "approve": True, "reason": "x"}], "approval takes no reason"),
    ],
)
async def test_decisions_that_do_not_fit_are_refused_and_change_nothing(
    entries: list[dict[str, Any]], said: str
) -> None:
    runs: list[str] = []
    model = ScriptedProvider([ASKS, text_response("Done.")])
    async with serving(model, tools=[deleting(runs)], config=APPROVAL) as served:
        paused = await ask_to_delete(served)
        client = await served.client()
        with pytest.raises(ProtocolError, match=said) as refused:
            await send(client, decisions(*entries, task=paused))
        still = await client.get_task(GetTaskRequest(id=paused.id))
        calls_then = len(model.requests)
        done = await send(client, decisions({"call_id": "c1", "approve": True}, task=paused))

    assert "InvalidDecisionsError" in str(refused.value)
    assert still.status == paused.status and calls_then == 1
    assert done.status.state == COMPLETED and runs == ["old.log"]


async def test_an_edited_input_the_tool_refuses_keeps_the_task_waiting_and_runs_nothing() -> None:
    runs: list[str] = []
    model = ScriptedProvider([ASKS, text_response("Done.")])
    async with serving(model, tools=[deleting(runs)], config=APPROVAL) as served:
        paused = await ask_to_delete(served)
        client = await served.client()
        edited = {"call_id": "c1", "approve": True, "input": {"path": 5}}
        refused = await send(client, decisions(edited, task=paused))
        calls_then = len(model.requests)
        done = await send(client, decisions({"call_id": "c1", "approve": True}, task=paused))

    assert TaskState.Name(refused.status.state) == "TASK_STATE_INPUT_REQUIRED"
    assert calls_then == 1 and "InvalidEditedInputError" in status_text(refused)
    assert get_data_parts(refused.status.message.parts) == get_data_parts(
        paused.status.message.parts
    )
    assert done.status.state == COMPLETED and runs == ["old.log"]


async def test_a_follow_up_without_decisions_is_refused_naming_the_waiting_calls() -> None:
    runs: list[str] = []
    async with serving(ScriptedProvider([ASKS]), tools=[deleting(runs)], config=APPROVAL) as s:
        paused = await ask_to_delete(s)
        follow_up = user_message("yes please", context_id=paused.context_id, task_id=paused.id)
        with pytest.raises(ProtocolError, match='deciding "c1"'):
            await send(await s.client(), follow_up)
    assert runs == []


# --- cancel ----------------------------------------------------------------------------


@pytest.mark.parametrize("streaming", [False, True], ids=["blocking", "streaming"])
async def test_cancelling_a_task_cancels_its_running_dispatch(streaming: bool) -> None:
    started, stopped = asyncio.Event(), asyncio.Event()

    @tool
    async def slow(job: str) -> str:
        """Run a long job."""
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()
        return "never"

    model = ScriptedProvider(
        [tool_call_response(ToolUsePart("c1", "slow", {"job": "j"})), text_response("Fresh.")]
    )
    async with serving(model, tools=[slow]) as served:
        client = await served.client(polling=not streaming, streaming=streaming)
        if streaming:
            reading = asyncio.create_task(stream(client, user_message("Start the job")))
            await started.wait()
            (task_id,) = {t.id for t in (await client.list_tasks(ListTasksRequest())).tasks}
        else:
            task_id = (await send(client, user_message("Start the job"))).id
            await started.wait()
        cancelled = await (await served.client()).cancel_task(CancelTaskRequest(id=task_id))
        if streaming:
            events = await reading
            last = events[-1].status_update.status.state
            assert TaskState.Name(last) == "TASK_STATE_CANCELED"
        after = await send(
            await served.client(), user_message("Again?", context_id=cancelled.context_id)
        )

    assert TaskState.Name(cancelled.status.state) == "TASK_STATE_CANCELED"
    assert "cancelled" in status_text(cancelled)
    assert stopped.is_set()
    assert after.status.state == COMPLETED and answer_of(after) == "Fresh."


async def test_a_message_past_the_running_limit_is_refused_and_runs_nothing() -> None:
    started, release = asyncio.Event(), asyncio.Event()

    @tool
    async def slow(job: str) -> str:
        """Run a long job."""
        started.set()
        await release.wait()
        return "done"

    model = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("c1", "slow", {"job": "j"})),
            text_response("Finished."),
            text_response("Next."),
        ]
    )
    async with serving(model, tools=[slow], max_running=1) as served:
        client = await served.client(streaming=True)
        running = asyncio.create_task(stream(client, user_message("Start the job")))
        await started.wait()
        with pytest.raises(ProtocolError, match="ServerBusyError: 1 tasks are running"):
            await send(await served.client(), user_message("And this?"))
        calls_then = len(model.requests)
        release.set()
        context_id = (await running)[-1].status_update.context_id  # the first task has ended
        first = await send(await served.client(), user_message("Done?", context_id=context_id))
        tasks = await client.list_tasks(ListTasksRequest())

    assert calls_then == 1  # the refused message reached no model
    assert len(tasks.tasks) == 2  # and made no task
    assert answer_of(first) == "Next."


async def test_cancelling_a_paused_task_denies_its_calls_and_its_context_takes_new_messages() -> (
    None
):
    runs: list[str] = []
    model = ScriptedProvider([ASKS, text_response("Kept it."), text_response("Hello again.")])
    async with serving(model, tools=[deleting(runs)], config=APPROVAL) as served:
        paused = await ask_to_delete(served)
        client = await served.client()
        cancelled = await client.cancel_task(CancelTaskRequest(id=paused.id))
        after = await send(client, user_message("Hello?", context_id=paused.context_id))

    assert cancelled.status.state == TaskState.TASK_STATE_CANCELED and runs == []
    assert "the calls it waited on were denied: c1" in status_text(cancelled)
    denied = model.requests[1].messages[-1].content[-1]
    assert isinstance(denied, ToolResultPart) and denied.is_error
    assert "cancelled by the caller" in denied.content
    assert after.status.state == COMPLETED and answer_of(after) == "Hello again."
    assert texts(model.requests[2])[-1] == "Hello?"


@asynccontextmanager
async def restarted(first: Served) -> AsyncIterator[Served]:
    """A new server over `first`'s orchestrator and store: `first`'s tasks are forgotten."""
    async with served(first.orchestrator) as url:
        again = Served(url, first.store, first.orchestrator, first.model)
        try:
            yield again
        finally:
            for client in again.clients:
                await client.close()
            for http in again.https:
                await http.aclose()


async def test_a_message_on_a_context_paused_before_a_restart_gets_its_calls_listed_again() -> None:
    runs: list[str] = []
    model = ScriptedProvider([ASKS, text_response("Deleted old.log.")])
    async with serving(model, tools=[deleting(runs)], config=APPROVAL) as first:
        paused = await ask_to_delete(first)
    async with restarted(first) as served:
        client = await served.client()
        again = await send(client, user_message("Hello?", context_id=paused.context_id))
        calls_then = len(model.requests)
        done = await send(client, decisions({"call_id": "c1", "approve": True}, task=again))

    assert again.id != paused.id and again.status.state == INPUT_REQUIRED
    assert "your message was not run" in status_text(again)
    assert get_data_parts(again.status.message.parts) == get_data_parts(paused.status.message.parts)
    assert calls_then == 1  # the message reached no model
    assert done.status.state == COMPLETED and answer_of(done) == "Deleted old.log."
    assert runs == ["old.log"]


async def test_decisions_sent_to_a_context_paused_before_a_restart_resume_it() -> None:
    runs: list[str] = []
    model = ScriptedProvider([ASKS, text_response("Deleted old.log.")])
    async with serving(model, tools=[deleting(runs)], config=APPROVAL) as first:
        paused = await ask_to_delete(first)
    async with restarted(first) as served:
        data = Part()
        data.data.struct_value.update({"decisions": [{"call_id": "c1", "approve": True}]})
        client = await served.client()
        done = await send(client, user_message(data, context_id=paused.context_id))

    assert done.status.state == COMPLETED and answer_of(done) == "Deleted old.log."
    assert runs == ["old.log"]


async def test_the_turn_input_carries_the_a2a_ids_and_the_prefixed_session() -> None:
    seen: list[TurnInput] = []

    class Recording:
        async def execute(self, input: TurnInput) -> Any:
            seen.append(input)
            raise RuntimeError("recorded")

    from layer0.testing import InMemoryStore
    from neuron_a2a import A2AExecutor
    from neuron_orch_local import LocalOrchestrator

    executor = A2AExecutor(LocalOrchestrator({"a": Recording()}, InMemoryStore()), "a")
    message = user_message("hi", context_id="ctx-1", task_id="t-1").message
    input = executor.turn_input(message, "ctx-1", "t-1", None)

    assert input.session == "a2a:ctx-1" and input.trigger == "task"
    assert input.metadata == {"a2a": {"task_id": "t-1", "context_id": "ctx-1"}}


class Chatty:
    """Streams its answer one character at a time, as fast as it can."""

    def __init__(self, count: int) -> None:
        self.count = count

    async def complete(self, request: ProviderRequest) -> Any:
        raise AssertionError("a streamed request must stream")

    async def stream(self, request: ProviderRequest) -> AsyncIterator[Any]:
        for _ in range(self.count):
            yield TextDelta("x")
        yield text_response("x" * self.count)


async def test_a_fast_streamed_answer_goes_in_few_updates_and_whole() -> None:
    # The SDK stores the whole task with each update: one update per model delta made
    # a streamed answer cost the square of its deltas (8,000 deltas: some 9 s of CPU).
    count = 3000
    async with serving(Chatty(count)) as served:
        client = await served.client(streaming=True)
        events = await stream(client, user_message("Talk"))
        task = await client.get_task(GetTaskRequest(id=events[-1].status_update.task_id))

    updates = [e.artifact_update for e in events if e.HasField("artifact_update")]
    streamed = "".join(get_artifact_text(u.artifact) for u in updates[:-1])
    assert len(updates) < count // 10
    assert streamed == "x" * count and answer_of(task) == "x" * count
