"""A retry or fallback after tools ran continues the turn: those tools do not run again."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from layer0 import (
    Content,
    CustomEffect,
    DispatchFailed,
    Effect,
    EffectPolicy,
    HandoffEffect,
    NonRetryableError,
    PartialTurn,
    RetryableError,
    SessionScope,
    Turn,
    TurnInput,
    TurnMetadata,
    TurnOutput,
    TurnRecord,
    WorkflowNotFound,
    partial_of,
)
from layer0.testing import InMemoryStore
from neuron_orch_local import (
    EffectContext,
    FallbackTurn,
    LocalOrchestrator,
    RetryPolicy,
    untried_models,
)
from neuron_state_sqlite import SqliteStore
from neuron_tool import ToolRegistry, tool
from neuron_turn import (
    INTERRUPTED,
    NeuronTurn,
    ProviderAuthenticationError,
    ProviderConnectionError,
    ProviderRequest,
    ProviderResponse,
    RateLimitError,
    TextDelta,
    ToolResultPart,
    ToolUsePart,
    TurnDone,
)
from neuron_turn.testing import (
    FunctionProvider,
    ScriptedProvider,
    text_response,
    tool_call_response,
)

from ..provider_anthropic._support import FakeApi, error_body, message_json, reply
from ._doubles import ScriptTurn, session_roles, user
from .test_retries import FakeClock, FlakyTurn, attempts_record

SESSION = SessionScope(id="s1")


class Outbox:
    """A tool with a side effect that must happen once: it counts the messages it sent."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def tools(self) -> ToolRegistry:
        @tool
        async def send(text: str) -> str:
            """Send `text`."""
            self.sent.append(text)
            return f"sent {text!r}"

        return ToolRegistry([send])


def asks_to_send(text: str) -> object:
    return reply(
        message_json(
            [{"type": "tool_use", "id": "toolu_01", "name": "send", "input": {"text": text}}],
            stop_reason="tool_use",
        )
    )


def rate_limited(seconds: str) -> object:
    body = error_body("rate_limit_error", "Number of requests has exceeded your rate limit")
    return reply(body, status=429, headers={"retry-after": seconds})


async def records(store: SqliteStore) -> list[TurnRecord]:
    """The turns recorded, the kept part first (both may start in the same millisecond)."""
    found = []
    for summary in await store.turn_summaries():
        record = await store.turn_record(summary.turn_id)
        assert record is not None and record.output is not None
        found.append(record)
    return sorted(found, key=lambda r: r.output.exit_reason != INTERRUPTED)  # type: ignore[union-attr]


async def test_a_429_after_a_tool_ran_is_retried_from_there_and_the_tool_runs_once(
    tmp_path: Path,
) -> None:
    api = FakeApi(asks_to_send("hello"), rate_limited("5"), reply())
    outbox, clock = Outbox(), FakeClock()
    async with SqliteStore(tmp_path / "state.db") as store:
        turn = NeuronTurn(api.provider(), tools=outbox.tools(), state=store)
        orchestrator = LocalOrchestrator({"main": turn}, store, clock=clock)

        result = await orchestrator.dispatch("main", user("send hello", session="s1"))

        assert result.message.as_text() == "Hello." and outbox.sent == ["hello"]
        assert clock.sleeps == [5.0]
        # The retry asked the model to go on from the tool's result, with the message once.
        assert [
            (m["role"], [b.get("type") for b in m["content"]]) for m in api.bodies[2]["messages"]
        ] == [("user", ["text"]), ("assistant", ["tool_use"]), ("user", ["tool_result"])]
        failure = attempts_record(result)["failures"][0]  # type: ignore[index]
        assert failure["error"] == "RetryableError" and failure["kept"] is True
        assert await session_roles(store) == ["user", "assistant", "user", "assistant"]
        kept, finished = await records(store)
    assert kept.output is not None and kept.output.exit_reason == INTERRUPTED
    assert kept.status == "executed" and kept.error is not None
    assert kept.error.startswith("RetryableError: ") and "429" in kept.error
    assert [t.name for t in kept.output.metadata.tools_called] == ["send"]
    assert finished.output is not None and finished.output.exit_reason == "complete"
    assert finished.output.metadata.tools_called == [] and finished.error is None
    assert kept.started <= finished.started


async def test_a_fallback_model_continues_from_the_tools_the_failed_model_ran() -> None:
    outbox, store = Outbox(), InMemoryStore()
    first = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("c1", "send", {"text": "hello"})),
            ProviderAuthenticationError("invalid x-api-key", provider="first"),
        ]
    )
    second = ScriptedProvider([text_response("Sent.")])
    agent = FallbackTurn(
        {
            "first:model": NeuronTurn(first, tools=outbox.tools(), state=store),
            "second:model": NeuronTurn(second, tools=outbox.tools(), state=store),
        }
    )
    orchestrator = LocalOrchestrator({"main": agent}, store)

    result = await orchestrator.dispatch("main", user("send hello", session="s1"))

    assert result.message.as_text() == "Sent." and outbox.sent == ["hello"]
    (request,) = second.requests
    assert [m.role for m in request.messages] == ["user", "assistant", "user"]
    assert isinstance(request.messages[2].content[0], ToolResultPart)
    record = attempts_record(result)
    assert record["answered_by"] == "second:model"
    assert [f["kept"] for f in record["failures"]] == [True]  # type: ignore[index,union-attr]


async def test_when_retries_run_out_the_dispatch_fails_with_what_was_kept_before() -> None:
    outbox, store, clock = Outbox(), InMemoryStore(), FakeClock()
    provider = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("c1", "send", {"text": "hello"})),
            RateLimitError("429", provider="scripted"),
            RateLimitError("429", provider="scripted"),
            text_response("Sent."),
        ]
    )
    turn = NeuronTurn(provider, tools=outbox.tools(), state=store)
    policy = RetryPolicy(max_attempts=2, initial_interval=100)
    orchestrator = LocalOrchestrator({"main": turn}, store, retry=policy, clock=clock)

    with pytest.raises(DispatchFailed, match="RetryableError") as raised:
        await orchestrator.dispatch("main", user("send hello", session="s1"))

    assert outbox.sent == ["hello"] and len(provider.requests) == 3
    assert await session_roles(store) == ["user", "assistant", "user"]
    # The last attempt ran no tool; the error hands on the part the first one kept.
    cause = raised.value.__cause__
    assert isinstance(cause, RetryableError) and cause.partial is not None
    later = await orchestrator.dispatch("main", cause.partial.continuation)
    assert later.message.as_text() == "Sent." and outbox.sent == ["hello"]


async def test_a_dispatch_failing_after_a_tool_ran_keeps_it_and_a_later_one_goes_on() -> None:
    outbox, store = Outbox(), InMemoryStore()
    provider = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("c1", "send", {"text": "hello"})),
            RateLimitError("429", provider="scripted", retry_after=3600.0),
            text_response("Sent."),
        ]
    )
    turn = NeuronTurn(provider, tools=outbox.tools(), state=store)
    policy = RetryPolicy(max_attempts=1)
    orchestrator = LocalOrchestrator({"main": turn}, store, retry=policy, clock=FakeClock())

    with pytest.raises(DispatchFailed) as raised:
        await orchestrator.dispatch("main", user("send hello", session="s1"))

    # The tool did run: the session says so, and the model will know it sent the message.
    assert await session_roles(store) == ["user", "assistant", "user"]
    cause = raised.value.__cause__
    assert isinstance(cause, RetryableError) and cause.partial is not None
    later = await orchestrator.dispatch("main", cause.partial.continuation)
    assert later.message.as_text() == "Sent." and outbox.sent == ["hello"]


async def test_a_turn_without_a_session_has_nowhere_to_keep_its_part_and_is_retried_whole() -> None:
    outbox = Outbox()
    provider = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("c1", "send", {"text": "hello"})),
            RateLimitError("429", provider="scripted"),
            tool_call_response(ToolUsePart("c1", "send", {"text": "hello"})),
            text_response("Sent."),
        ]
    )
    turn = NeuronTurn(provider, tools=outbox.tools(), state=InMemoryStore())
    orchestrator = LocalOrchestrator({"main": turn}, InMemoryStore(), clock=FakeClock())

    result = await orchestrator.dispatch("main", user("send hello"))

    assert result.message.as_text() == "Sent." and outbox.sent == ["hello", "hello"]
    assert attempts_record(result)["failures"][0]["kept"] is False  # type: ignore[index]


def sends_then_fails(outbox: Outbox, store: InMemoryStore) -> tuple[ScriptedProvider, NeuronTurn]:
    """A model's turn that sends "hello", then fails for good (a bad key) on its next call."""
    provider = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("c1", "send", {"text": "hello"})),
            ProviderAuthenticationError("invalid x-api-key", provider="first"),
        ]
    )
    return provider, NeuronTurn(provider, tools=outbox.tools(), state=store)


async def test_a_fallback_of_another_kind_gets_the_dispatchs_input_after_the_part_is_kept() -> None:
    outbox, store = Outbox(), InMemoryStore()
    _, first = sends_then_fails(outbox, store)
    other = ScriptTurn(reply="answered by a turn of another kind")
    agent = FallbackTurn({"first:model": first, "other": other})
    orchestrator = LocalOrchestrator({"main": agent}, store)

    result = await orchestrator.dispatch("main", user("send hello", session="s1"))

    assert result.message.as_text() == "answered by a turn of another kind"
    (given,) = other.inputs
    assert given.message.as_text() == "send hello" and given.metadata is None
    # The message was sent: the session says so, though the turn that answered cannot.
    assert await session_roles(store) == ["user", "assistant", "user"]
    assert attempts_record(result)["failures"][0]["kept"] is True  # type: ignore[index]


class Wrapper:
    """A turn around another that does not say it reads continuations."""

    def __init__(self, inner: Turn) -> None:
        self.inner = inner

    async def execute(self, input: TurnInput) -> TurnOutput:
        return await self.inner.execute(input)


async def test_a_turn_reading_no_continuation_is_run_again_after_its_part_is_kept() -> None:
    outbox, store = Outbox(), InMemoryStore()
    provider = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("c1", "send", {"text": "hello"})),
            RateLimitError("429", provider="scripted"),
            text_response("Already sent."),
        ]
    )
    agent = Wrapper(NeuronTurn(provider, tools=outbox.tools(), state=store))
    orchestrator = LocalOrchestrator({"main": agent}, store, clock=FakeClock())

    result = await orchestrator.dispatch("main", user("send hello", session="s1"))

    # Given the message again, the model read in the session that it had sent it.
    assert result.message.as_text() == "Already sent." and outbox.sent == ["hello"]
    retried = provider.requests[2]
    assert [m.role for m in retried.messages] == ["user", "assistant", "user", "user"]
    assert isinstance(retried.messages[2].content[0], ToolResultPart)
    assert attempts_record(result)["failures"][0]["kept"] is True  # type: ignore[index]


async def test_a_chain_of_mixed_kinds_failing_after_a_tool_ran_hands_on_its_input_to_go_on() -> (
    None
):
    outbox, store = Outbox(), InMemoryStore()
    other = FlakyTurn(NonRetryableError("no such model"), reply="answered by the other kind")
    _, sender = sends_then_fails(outbox, store)
    agent = FallbackTurn({"other": other, "first:model": sender})
    orchestrator = LocalOrchestrator({"main": agent}, store)
    asked = user("send hello", session="s1")

    with pytest.raises(DispatchFailed) as raised:
        await orchestrator.dispatch("main", asked)

    # The part is kept; what goes on is the input again, which every model can take.
    cause = raised.value.__cause__
    assert isinstance(cause, NonRetryableError) and cause.partial is not None
    assert cause.partial.continuation == asked
    later = await orchestrator.dispatch("main", cause.partial.continuation)
    assert later.message.as_text() == "answered by the other kind" and outbox.sent == ["hello"]


async def test_a_fallback_turn_run_alone_stops_where_tools_ran_for_its_caller_to_continue() -> None:
    outbox, store = Outbox(), InMemoryStore()
    _, first = sends_then_fails(outbox, store)
    second = ScriptedProvider([text_response("Sent.")])
    agent = FallbackTurn(
        {
            "first:model": first,
            "second:model": NeuronTurn(second, tools=outbox.tools(), state=store),
        }
    )

    with pytest.raises(NonRetryableError) as raised:
        await agent.execute(user("send hello", session="s1"))

    assert outbox.sent == ["hello"] and second.requests == []
    partial = raised.value.partial
    assert partial is not None and partial.output.exit_reason == INTERRUPTED
    assert [t.name for t in partial.output.metadata.tools_called] == ["send"]
    assert any(note.startswith("not tried: second:model: ") for note in raised.value.__notes__)
    assert untried_models(raised.value) == ("second:model",)


async def test_a_fallback_turn_run_alone_with_a_model_of_another_kind_stops_there_too() -> None:
    outbox, store = Outbox(), InMemoryStore()
    _, first = sends_then_fails(outbox, store)
    other = ScriptTurn(reply="answered by a turn of another kind")
    agent = FallbackTurn({"first:model": first, "other": other})

    with pytest.raises(NonRetryableError) as raised:
        await agent.execute(user("send hello", session="s1"))

    assert outbox.sent == ["hello"] and other.inputs == []
    assert partial_of(raised.value) is not None
    assert untried_models(raised.value) == ("other",)
    (note,) = [n for n in raised.value.__notes__ if n.startswith("not tried: other: ")]
    assert note.endswith("then run the input again (a model reads no continuation)")


async def test_a_streamed_turn_cut_off_after_its_tool_ran_streams_on_from_there() -> None:
    outbox, store = Outbox(), InMemoryStore()
    cut = [TextDelta("Sen"), ProviderConnectionError("stream cut off", provider="x")]
    provider = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("c1", "send", {"text": "hello"})),
            cut,
            text_response("Sent."),
        ]
    )
    turn = NeuronTurn(provider, tools=outbox.tools(), state=store)
    orchestrator = LocalOrchestrator({"main": turn}, store, clock=FakeClock())

    async with orchestrator.stream("main", user("send hello", session="s1")) as events:
        seen = [item.event async for item in events]

    assert outbox.sent == ["hello"]
    assert [type(e).__name__ for e in seen].count("ToolResult") == 1
    done = [e for e in seen if isinstance(e, TurnDone)]
    assert len(done) == 1 and seen[-1] is done[0]
    assert done[0].output.message.as_text() == "Sent."
    assert events.result.output.message.as_text() == "Sent."


class FailsPartWay:
    """Fails once, offering a part that declares `effect`; then answers."""

    continues_partial_turns = True

    def __init__(self, effect: Effect) -> None:
        self.effect = effect
        self.inputs: list[TurnInput] = []

    async def execute(self, input: TurnInput) -> TurnOutput:
        self.inputs.append(input)
        if len(self.inputs) > 1:
            return TurnOutput(message="done", exit_reason="complete", metadata=TurnMetadata.zero())
        error = RetryableError("429")
        part = TurnOutput(
            message="",
            exit_reason=INTERRUPTED,
            metadata=TurnMetadata.zero(),
            effects=[self.effect],
        )
        error.partial = PartialTurn(part, input.model_copy(update={"message": Content("")}))
        raise error


async def test_a_part_declaring_a_handoff_is_not_kept_and_the_turn_runs_again_whole() -> None:
    agent = FailsPartWay(HandoffEffect(agent="other", state=None))
    orchestrator = LocalOrchestrator({"main": agent}, InMemoryStore(), clock=FakeClock())

    output = await orchestrator.dispatch("main", user("go", session="s1"))

    assert output.message.as_text() == "done"
    first, second = agent.inputs
    assert second == first  # the dispatch's input again, not the part's continuation
    assert attempts_record(output)["failures"][0]["kept"] is False  # type: ignore[index]


async def test_a_last_part_declaring_a_handoff_is_dropped_from_the_error_saying_why() -> None:
    agent = FailsPartWay(HandoffEffect(agent="other", state=None))
    policy = RetryPolicy(max_attempts=1)
    orchestrator = LocalOrchestrator({"main": agent}, InMemoryStore(), retry=policy)

    with pytest.raises(DispatchFailed) as raised:
        await orchestrator.dispatch("main", user("go", session="s1"))

    # Nothing of it is in the session, so no continuation could go on from it.
    cause = raised.value.__cause__
    assert isinstance(cause, RetryableError) and cause.partial is None
    assert any(note.startswith("what it did was not kept (") for note in cause.__notes__)


def notifying(failure: Exception, retry: RetryPolicy) -> tuple[FailsPartWay, LocalOrchestrator]:
    """An agent whose failed part declares a `notify` effect, whose handler raises `failure`."""

    async def notify(effect: CustomEffect, context: EffectContext) -> None:
        raise failure

    agent = FailsPartWay(CustomEffect(effect_type="notify", data={"to": "ops"}))
    orchestrator = LocalOrchestrator(
        {"main": agent},
        InMemoryStore(),
        custom_handlers={"notify": notify},
        policies={"main": EffectPolicy.everything()},
        retry=retry,
        clock=FakeClock(),
    )
    return agent, orchestrator


async def test_a_kept_part_whose_effect_fails_fails_the_dispatch_rather_than_the_model() -> None:
    overloaded = RetryableError("the notification service is overloaded")
    agent, orchestrator = notifying(overloaded, RetryPolicy())

    with pytest.raises(DispatchFailed, match="the handler of custom effect 'notify'"):
        await orchestrator.dispatch("main", user("go", session="s1"))

    assert len(agent.inputs) == 1  # the handler's error was not taken for the model's


async def test_a_last_part_that_cannot_be_kept_is_noted_on_the_error_that_ends_the_dispatch() -> (
    None
):
    down = RuntimeError("the notification service is down")
    _, orchestrator = notifying(down, RetryPolicy(max_attempts=1))

    with pytest.raises(DispatchFailed) as raised:
        await orchestrator.dispatch("main", user("go", session="s1"))

    cause = raised.value.__cause__
    assert isinstance(cause, RetryableError) and str(cause) == "429"  # the turn's own error
    assert [note.split(":")[0] for note in cause.__notes__] == ["what it did could not be kept"]
    assert "the notification service is down" in cause.__notes__[0]


class SendsThenStalls:
    """A model that asks to send "hello", takes forever on its next call, then answers."""

    def __init__(self) -> None:
        self.stalled = asyncio.Event()

    async def respond(self, request: ProviderRequest) -> ProviderResponse:
        if len(request.messages) == 1:
            return tool_call_response(ToolUsePart("c1", "send", {"text": "hello"}))
        if not self.stalled.is_set():
            self.stalled.set()
            await asyncio.Event().wait()  # until cancelled
        return text_response("Sent.")


@asynccontextmanager
async def stalling_sender(
    tmp_path: Path,
) -> AsyncIterator[tuple[LocalOrchestrator, SqliteStore, Outbox, SendsThenStalls]]:
    """An orchestrator whose agent sends "hello", then stalls: a dispatch to cancel."""
    outbox, model = Outbox(), SendsThenStalls()
    async with SqliteStore(tmp_path / "state.db") as store:
        turn = NeuronTurn(FunctionProvider(model.respond), tools=outbox.tools(), state=store)
        yield LocalOrchestrator({"main": turn}, store), store, outbox, model


async def cancel_when_stalled(model: SendsThenStalls, work: Awaitable[object]) -> None:
    """Run `work` in a task and cancel it once the model stalls, its tool having run."""
    task = asyncio.ensure_future(work)
    await model.stalled.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def kept_once(store: SqliteStore, outbox: Outbox) -> None:
    """The message was sent once, and the session says so, with a record of the part."""
    assert outbox.sent == ["hello"]
    assert await session_roles(store) == ["user", "assistant", "user"]
    (kept,) = await records(store)
    assert kept.output is not None and kept.output.exit_reason == INTERRUPTED
    assert kept.status == "executed" and kept.error == "CancelledError"


async def sending_hello(orchestrator: LocalOrchestrator, raised: list[BaseException]) -> None:
    """Dispatch "send hello" on session s1; the cancellation that stops it goes in `raised`."""
    try:
        await orchestrator.dispatch("main", user("send hello", session="s1"))
    except asyncio.CancelledError as exc:
        raised.append(exc)
        raise


class WaitingClock(FakeClock):
    """A clock whose sleeps last until cancelled: a retry that waits for good."""

    def __init__(self) -> None:
        super().__init__()
        self.sleeping = asyncio.Event()

    async def sleep(self, seconds: float) -> None:
        self.sleeping.set()
        await asyncio.Event().wait()


async def test_a_dispatch_cancelled_while_it_waits_to_retry_hands_on_the_part_it_kept(
    tmp_path: Path,
) -> None:
    outbox, clock = Outbox(), WaitingClock()
    provider = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("c1", "send", {"text": "hello"})),
            RateLimitError("429", provider="scripted", retry_after=5.0),
            text_response("Sent."),
        ]
    )
    async with SqliteStore(tmp_path / "state.db") as store:
        turn = NeuronTurn(provider, tools=outbox.tools(), state=store)
        orchestrator = LocalOrchestrator({"main": turn}, store, clock=clock)
        raised: list[BaseException] = []
        task = asyncio.ensure_future(sending_hello(orchestrator, raised))
        await clock.sleeping.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        recorded = [await store.turn_record(s.turn_id) for s in await store.turn_summaries()]
        statuses = sorted((r.status, r.error) for r in recorded if r is not None)
        (cancelled,) = raised
        partial = partial_of(cancelled)
        assert partial is not None
        later = await orchestrator.dispatch("main", partial.continuation)

    assert later.message.as_text() == "Sent." and outbox.sent == ["hello"]
    # The part kept has its record; the stop that came while waiting to retry has its own.
    assert statuses == [("executed", "RetryableError: 429"), ("failed", "CancelledError")]


async def test_a_dispatch_cancelled_after_a_tool_ran_keeps_what_it_did(tmp_path: Path) -> None:
    async with stalling_sender(tmp_path) as (orchestrator, store, outbox, model):
        raised: list[BaseException] = []
        await cancel_when_stalled(model, sending_hello(orchestrator, raised))

        await kept_once(store, outbox)
        # The caller may go on from there: the cancellation carries the continuation.
        (cancelled,) = raised
        partial = partial_of(cancelled)
        assert partial is not None
        later = await orchestrator.dispatch("main", partial.continuation)
        assert later.message.as_text() == "Sent." and outbox.sent == ["hello"]


async def test_cancel_stops_a_running_dispatch_keeping_what_it_did_and_the_caller_goes_on(
    tmp_path: Path,
) -> None:
    async with stalling_sender(tmp_path) as (orchestrator, store, outbox, model):

        async def caller() -> tuple[DispatchFailed, int]:
            with pytest.raises(DispatchFailed, match="workflow w1 was cancelled") as raised:
                await orchestrator.run("main", user("send hello", session="s1"), workflow_id="w1")
            task = asyncio.current_task()
            assert task is not None
            return raised.value, task.cancelling()

        calling = asyncio.ensure_future(caller())
        await model.stalled.wait()
        assert await orchestrator.cancel("w1") is True
        failed, cancelling = await calling

        assert cancelling == 0  # the caller's own task was not left cancelled
        await kept_once(store, outbox)
        assert orchestrator.workflow("w1").error == "DispatchFailed: workflow w1 was cancelled"
        assert await orchestrator.cancel("w1") is False  # ended: left as it is
        with pytest.raises(WorkflowNotFound):
            await orchestrator.cancel("no-such-workflow")
        # Its cancellation, the cause, carries the continuation.
        partial = partial_of(failed.__cause__) if failed.__cause__ is not None else None
        assert partial is not None
        later = await orchestrator.dispatch("main", partial.continuation)
        assert later.message.as_text() == "Sent." and outbox.sent == ["hello"]


async def test_a_streamed_dispatch_whose_reader_is_cancelled_keeps_what_the_turn_did(
    tmp_path: Path,
) -> None:
    async with stalling_sender(tmp_path) as (orchestrator, store, outbox, model):

        async def read() -> None:
            async with orchestrator.stream("main", user("send hello", session="s1")) as events:
                async for _ in events:
                    pass

        await cancel_when_stalled(model, read())

        await kept_once(store, outbox)


async def test_a_dispatch_cancelled_while_its_tool_runs_keeps_the_call_saying_it_was_cut_off() -> (
    None
):
    store, started = InMemoryStore(), asyncio.Event()

    @tool
    async def transfer(amount: int) -> str:
        """Transfer `amount` (slow: the bank answers late)."""
        started.set()
        await asyncio.Event().wait()  # until cancelled
        return "done"

    provider = ScriptedProvider([tool_call_response(ToolUsePart("c1", "transfer", {"amount": 5}))])
    turn = NeuronTurn(provider, tools=ToolRegistry([transfer]), state=store)
    orchestrator = LocalOrchestrator({"main": turn}, store)
    task = asyncio.create_task(orchestrator.dispatch("main", user("pay", session="s1")))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    history = await store.read(SESSION, "messages")
    assert isinstance(history, list)
    assert [m["role"] for m in history] == ["user", "assistant", "user"]  # type: ignore[index,call-overload]
    (result,) = history[2]["content"]  # type: ignore[index,call-overload]
    assert result["type"] == "tool_result" and result["is_error"] is True
    assert "Cancelled: the turn ended before this tool call finished." in str(result["content"])


async def test_cancel_stops_a_streamed_dispatch_whose_reader_gets_the_failure(
    tmp_path: Path,
) -> None:
    async with stalling_sender(tmp_path) as (orchestrator, store, outbox, model):

        async def read() -> None:
            message = user("send hello", session="s1")
            async with orchestrator.stream("main", message, workflow_id="w2") as events:
                with pytest.raises(DispatchFailed, match="workflow w2 was cancelled"):
                    async for _ in events:
                        pass

        reading = asyncio.ensure_future(read())
        await model.stalled.wait()
        assert await orchestrator.cancel("w2") is True
        await reading

        await kept_once(store, outbox)
