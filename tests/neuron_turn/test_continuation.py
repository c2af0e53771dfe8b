"""A turn that fails after its tools ran offers what it did, and a continuation goes on from it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable
from dataclasses import replace

import pytest
from pydantic import BaseModel, JsonValue

from layer0 import (
    Content,
    CustomExit,
    DeleteMemoryEffect,
    EffectPolicy,
    ModelError,
    NonRetryableError,
    PartialTurn,
    RetryableError,
    SessionScope,
    TurnConfig,
    TurnError,
    TurnInput,
    TurnOutput,
    WriteMemoryEffect,
    partial_of,
    usd,
)
from layer0.testing import InMemoryStore
from neuron_tool import ToolRegistry, tool
from neuron_turn import (
    INTERRUPTED,
    KEPT_COUNTS_KEY,
    ContinuationError,
    MissingDecisionError,
    NeuronTurn,
    NeuronTurnConfig,
    ProviderRequest,
    ProviderResponse,
    RateLimitError,
    ToolChoice,
    ToolResultPart,
    continuation_input,
    resume_input,
)
from neuron_turn.loop.continuation import continues
from neuron_turn.testing import FunctionProvider, ScriptedProvider

from .support import answer, appended, ask, call, calls

SESSION = SessionScope(id="s1")


class Counter:
    """A tool with a side effect: it counts how often it ran."""

    def __init__(self) -> None:
        self.runs = 0

    def registry(self) -> ToolRegistry:
        @tool
        async def send(text: str) -> str:
            """Send `text` somewhere, once."""
            self.runs += 1
            return f"sent {text}"

        return ToolRegistry([send])


def rate_limited() -> RateLimitError:
    return RateLimitError("429 too many requests", provider="scripted", retry_after=2.0)


async def failed(turn: NeuronTurn, input: TurnInput) -> TurnError:
    with pytest.raises(TurnError) as raised:
        await turn.execute(input)
    return raised.value


def sender(
    script: list[object], store: InMemoryStore | None, config: NeuronTurnConfig | None = None
) -> tuple[NeuronTurn, ScriptedProvider, Counter]:
    counter = Counter()
    provider = ScriptedProvider(script)  # type: ignore[arg-type]
    turn = NeuronTurn(
        provider,
        tools=counter.registry(),
        state=store,
        config=config or NeuronTurnConfig(model="test-model"),
    )
    return turn, provider, counter


async def keep(store: InMemoryStore, partial: PartialTurn) -> None:
    """What an orchestrator does with the partial's output: write its memory, append its history."""
    for effect in partial.output.effects:
        if isinstance(effect, WriteMemoryEffect):
            await store.write(effect.scope, effect.key, effect.value)
    await store.append_history(appended(partial.output))


async def test_failure_after_a_tool_ran_offers_the_turn_so_far_and_its_continuation() -> None:
    store = InMemoryStore()
    script = [calls(call("c1", "send", text="hello"), cost="0.25"), rate_limited()]
    turn, _, counter = sender(script, store)
    error = await failed(turn, ask("send hello", session="s1", trace="t-1"))

    assert isinstance(error, RetryableError) and error.retry_after == 2.0
    partial = error.partial
    assert partial is not None and counter.runs == 1
    output = partial.output
    assert output.exit_reason == INTERRUPTED
    assert output.metadata.turns_used == 1 and output.metadata.cost == usd("0.25")
    assert [r.name for r in output.metadata.tools_called] == ["send"]
    messages = appended(output).messages
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]  # type: ignore[index,call-overload]
    assert "sent hello" in str(messages[2])
    continuation = partial.continuation
    assert continuation.session == "s1" and continuation.message.as_text() == ""
    # The counts its loop kept go on: the circuit breaker's, the stuck check's, the output's.
    counts = {
        "failures_in_a_row": 0,
        "identical_calls": 1,
        "last_call": {"name": "send", "input": {"text": "hello"}},
        "output_failures": 0,
    }
    assert continuation.metadata == {"trace": "t-1", "neuron_turn": {"continue": counts}}


async def test_an_answer_refused_after_a_tool_ran_is_left_out_so_the_continuation_asks_again() -> (
    None
):
    store = InMemoryStore()
    truncated = replace(answer("Sent, and then the"), stop_reason="max_tokens")
    script = [calls(call("c1", "send", text="x")), truncated, answer("sent it")]
    turn, _, counter = sender(script, store)
    error = await failed(turn, ask("send x", session="s1"))

    assert isinstance(error, ModelError) and error.partial is not None
    # The refused answer is not kept: the history ends with the tool's result.
    roles = [m["role"] for m in appended(error.partial.output).messages]  # type: ignore[index,call-overload]
    assert roles == ["user", "assistant", "user"]
    await keep(store, error.partial)
    output = await turn.execute(error.partial.continuation)
    assert output.message.as_text() == "sent it" and counter.runs == 1


async def test_continuation_calls_the_model_on_the_kept_history_and_runs_no_tool_again() -> None:
    store = InMemoryStore()
    script = [calls(call("c1", "send", text="hello")), rate_limited(), answer("sent it")]
    turn, provider, counter = sender(script, store)
    error = await failed(turn, ask("send hello", session="s1"))
    assert error.partial is not None
    await keep(store, error.partial)

    output = await turn.execute(error.partial.continuation)

    assert output.message.as_text() == "sent it" and output.exit_reason == "complete"
    assert counter.runs == 1
    sent = provider.requests[-1].messages
    assert [(m.role, type(m.content[0]).__name__) for m in sent] == [
        ("user", "TextPart"),
        ("assistant", "ToolUsePart"),
        ("user", "ToolResultPart"),
    ]
    # The continuation appends only what it added: the answer.
    assert [m["role"] for m in appended(output).messages] == ["assistant"]  # type: ignore[index,call-overload]
    await store.append_history(appended(output))
    history = await store.read(SESSION, "messages")
    assert isinstance(history, list)
    assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant"]  # type: ignore[index,call-overload]


async def test_failure_before_any_tool_ran_offers_no_partial() -> None:
    turn, _, _ = sender([rate_limited()], InMemoryStore())
    error = await failed(turn, ask(session="s1"))
    assert isinstance(error, RetryableError) and error.partial is None


async def test_no_partial_without_a_session_or_a_state_reader_to_continue_from() -> None:
    script = [calls(call("c1", "send", text="x")), rate_limited()]
    no_session, _, _ = sender(list(script), InMemoryStore())
    assert (await failed(no_session, ask())).partial is None
    no_state, _, _ = sender(list(script), None)
    assert (await failed(no_state, ask(session="s1"))).partial is None


async def test_metadata_that_is_not_an_object_leaves_no_room_for_a_continuation_and_says_so() -> (
    None
):
    turn, _, _ = sender([calls(call("c1", "send", text="x")), rate_limited()], InMemoryStore())
    listed = TurnInput(message="go", trigger="user", session="s1", metadata=["caller", "data"])
    error = await failed(turn, listed)
    assert isinstance(error, RetryableError) and error.partial is None
    assert error.__notes__ == [
        "no partial turn: ContinuationError: TurnInput.metadata must be an object to mark a "
        "continuation, not ['caller', 'data']"
    ]


async def test_a_partial_that_cannot_be_built_is_noted_and_the_turns_own_error_raised(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(run: object) -> dict[str, object]:
        raise ValueError("a limit that does not subtract")

    monkeypatch.setattr("neuron_turn.loop.turn._remaining_limits", broken)
    turn, _, _ = sender([calls(call("c1", "send", text="x")), rate_limited()], InMemoryStore())
    error = await failed(turn, ask(session="s1"))
    assert isinstance(error, RetryableError) and error.partial is None
    assert error.__notes__ == ["no partial turn: ValueError: a limit that does not subtract"]


async def test_a_partial_leaves_the_continuation_only_what_the_limits_have_left() -> None:
    store = InMemoryStore()
    config = NeuronTurnConfig(model="test-model", max_turns=3, max_cost=usd("1.00"))
    script = [calls(call("c1", "send", text="x"), cost="0.40"), rate_limited()]
    turn, _, _ = sender(script, store, config)
    error = await failed(turn, ask(session="s1", config=TurnConfig(max_duration=60_000)))
    assert error.partial is not None
    limits = error.partial.continuation.config
    assert limits is not None
    assert limits.max_turns == 2 and limits.max_cost == usd("0.60")
    assert limits.max_duration is not None and 0 < limits.max_duration <= 60_000


async def test_a_continuation_with_no_model_call_left_ends_at_max_turns_without_one() -> None:
    store = InMemoryStore()
    script = [calls(call("c1", "send", text="x")), rate_limited()]
    turn, provider, _ = sender(script, store)
    error = await failed(turn, ask(session="s1"))
    assert error.partial is not None
    await keep(store, error.partial)
    spent = error.partial.continuation.model_copy(update={"config": TurnConfig(max_turns=0)})

    output = await turn.execute(spent)

    assert output.exit_reason == "max_turns" and len(provider.requests) == 2
    assert output.effects == []  # nothing happened, so nothing to append


async def test_a_forced_tool_choice_spent_by_the_first_part_is_not_forced_again() -> None:
    store = InMemoryStore()
    config = NeuronTurnConfig(model="test-model", tool_choice="required")
    script = [calls(call("c1", "send", text="x")), rate_limited(), answer("done")]
    turn, provider, counter = sender(script, store, config)
    error = await failed(turn, ask(session="s1"))
    assert error.partial is not None
    await keep(store, error.partial)

    output = await turn.execute(error.partial.continuation)

    assert output.message.as_text() == "done" and counter.runs == 1
    first, _, continued = provider.requests
    assert first.tool_choice == ToolChoice.REQUIRED
    assert continued.tool_choice == ToolChoice.AUTO


def continuing(**input: object) -> TurnInput:
    return continuation_input(ask(session="s1")).model_copy(update=input)


@pytest.mark.parametrize(
    ("history", "input", "has_state", "wrong"),
    [
        ([], continuing(), True, "has no history"),
        (
            [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
            continuing(),
            True,
            "a last message from 'assistant'",
        ),
        (
            [{"role": "user", "content": "hi"}],
            continuing(message=Content("again")),
            True,
            "carries no message",
        ),
        ([{"role": "user", "content": "hi"}], continuing(session=None), True, "needs the session"),
        ([{"role": "user", "content": "hi"}], continuing(), False, "no state reader"),
    ],
)
async def test_a_continuation_with_nothing_to_continue_is_refused_before_any_model_call(
    history: list[JsonValue], input: TurnInput, has_state: bool, wrong: str
) -> None:
    store = InMemoryStore()
    await store.write(SESSION, "messages", history)
    turn, provider, _ = sender([answer("never")], store if has_state else None)
    with pytest.raises(ContinuationError, match=wrong) as raised:
        await turn.execute(input)
    assert isinstance(raised.value, NonRetryableError) and provider.requests == []


async def test_a_continuation_of_a_session_awaiting_approval_is_sent_to_its_decisions() -> None:
    store = InMemoryStore()
    paused = [
        {"role": "user", "content": "send it"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "c1", "name": "send", "input": {"text": "x"}}],
        },
    ]
    await store.write(SESSION, "messages", paused)  # type: ignore[arg-type]
    turn, provider, _ = sender([answer("never")], store)
    with pytest.raises(MissingDecisionError, match=r"pending call\(s\) without a decision: c1"):
        await turn.execute(continuing())
    assert provider.requests == []


async def test_a_continuation_mark_that_is_neither_a_boolean_nor_counts_is_refused() -> None:
    turn, provider, _ = sender([answer("never")], InMemoryStore())
    with pytest.raises(
        ContinuationError, match=r"must be true, false or the counts carried, not 'yes'"
    ):
        await turn.execute(ask(session="s1", neuron_turn={"continue": "yes"}))
    assert provider.requests == []


@pytest.mark.parametrize(
    ("counts", "why"),
    [
        ({"failures_in_a_row": -1}, "['failures_in_a_row'] must be a count (0 or more), not -1"),
        ({"identical_calls": "2"}, "['identical_calls'] must be a count (0 or more), not '2'"),
        ({"output_failures": True}, "['output_failures'] must be a count (0 or more), not True"),
        ({"retries": 1}, "has unknown counts: retries"),
        ({"last_call": {"name": 3, "input": {}}}, "['last_call'] must be an object with a name"),
        ({"last_call": "send"}, "['last_call'] must be an object with a name and an input"),
    ],
    ids=["negative", "string", "boolean", "unknown", "nameless", "not-an-object"],
)
async def test_counts_that_are_not_counts_are_refused_naming_which(
    counts: dict[str, JsonValue], why: str
) -> None:
    turn, provider, _ = sender([answer("never")], InMemoryStore())
    with pytest.raises(ContinuationError) as raised:
        await turn.execute(ask(session="s1", neuron_turn={"continue": counts}))
    assert why in str(raised.value)
    assert provider.requests == []


async def continued(turn: NeuronTurn, store: InMemoryStore, input: TurnInput) -> TurnOutput:
    """Run `input`, which fails after a tool ran; keep its part and run its continuation."""
    error = await failed(turn, input)
    assert error.partial is not None
    await keep(store, error.partial)
    return await turn.execute(error.partial.continuation)


async def test_a_continuation_counts_on_from_the_failed_calls_the_first_part_made() -> None:
    store = InMemoryStore()
    config = NeuronTurnConfig(model="test-model", max_consecutive_failures=2)
    script = [calls(call("c1", "nope")), rate_limited(), calls(call("c2", "nope")), answer("no")]
    turn, provider, _ = sender(script, store, config)

    output = await continued(turn, store, ask("go", session="s1"))

    assert output.exit_reason == "circuit_breaker"  # two failures in a row, across the parts
    assert len(provider.requests) == 3


async def test_a_continuation_counts_on_from_the_identical_calls_the_first_part_made() -> None:
    store = InMemoryStore()
    config = NeuronTurnConfig(model="test-model", max_identical_calls=1)
    same = call("c1", "send", text="x")
    again = call("c2", "send", text="x")
    script = [calls(same), rate_limited(), calls(again), answer("no")]
    turn, provider, counter = sender(script, store, config)

    output = await continued(turn, store, ask("go", session="s1"))

    assert output.exit_reason == CustomExit(name="stuck_detected")
    assert len(provider.requests) == 3 and counter.runs == 2


async def kept_after_a_failed_call() -> tuple[NeuronTurn, ScriptedProvider, InMemoryStore]:
    """A turn whose failed call, then a 429, left a part that was kept; its model then calls
    the unknown tool again and answers. Two failures in a row stop it."""
    store = InMemoryStore()
    config = NeuronTurnConfig(model="test-model", max_consecutive_failures=2)
    script = [calls(call("c1", "nope")), rate_limited(), calls(call("c2", "nope")), answer("no")]
    turn, provider, _ = sender(script, store, config)
    error = await failed(turn, ask("go", session="s1"))
    assert error.partial is not None
    await keep(store, error.partial)
    return turn, provider, store


async def test_a_continuation_built_later_counts_on_from_the_counts_the_part_kept() -> None:
    turn, provider, store = await kept_after_a_failed_call()

    # As another process would, knowing only the session: a mark of `true`, no counts.
    output = await turn.execute(continuation_input(ask("go", session="s1")))

    assert output.exit_reason == "circuit_breaker"  # the part's failure, then this one
    assert len(provider.requests) == 3
    assert await store.read(SESSION, KEPT_COUNTS_KEY) == {
        "after": "c1",
        "failures_in_a_row": 1,
        "identical_calls": 1,
        "last_call": {"name": "nope", "input": {}},
        "output_failures": 0,
    }


async def test_counts_kept_by_a_part_the_history_has_moved_past_are_not_carried() -> None:
    turn, provider, store = await kept_after_a_failed_call()
    stale = {"after": "c0", "failures_in_a_row": 1}
    await store.write(SESSION, KEPT_COUNTS_KEY, stale)  # an earlier part's: its call is not last

    output = await turn.execute(continuation_input(ask("go", session="s1")))

    assert output.exit_reason == "complete"  # one failure in a row only
    assert len(provider.requests) == 4


@pytest.mark.parametrize(
    ("kept", "why"),
    [
        ("three", "must be an object naming the call it follows ('after'), not 'three'"),
        ({"failures_in_a_row": 1}, "must be an object naming the call it follows"),
        ({"after": "c1", "failures_in_a_row": -1}, "['failures_in_a_row'] must be a count"),
        ({"after": "c1", "reset": True}, "has unknown counts: reset"),
    ],
    ids=["not-an-object", "no-call", "negative", "unknown"],
)
async def test_kept_counts_another_program_spoiled_stop_the_continuation_naming_the_key(
    kept: JsonValue, why: str
) -> None:
    store = InMemoryStore()
    turn, provider, _ = sender([calls(call("c1", "send", text="x")), rate_limited()], store)
    error = await failed(turn, ask("go", session="s1"))
    assert error.partial is not None
    await keep(store, error.partial)
    await store.write(SESSION, KEPT_COUNTS_KEY, kept)

    with pytest.raises(ContinuationError) as raised:
        await turn.execute(continuation_input(ask("go", session="s1")))

    assert f"the kept counts of session 's1' (key {KEPT_COUNTS_KEY!r})" in str(raised.value)
    assert why in str(raised.value)
    assert len(provider.requests) == 2  # the part's two; none for the continuation


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("write_memory", {"scope": "session", "key": KEPT_COUNTS_KEY, "value": {}}),
        ("write_memory", {"scope": "session:s2", "key": KEPT_COUNTS_KEY, "value": {}}),
        ("delete_memory", {"scope": "session", "key": KEPT_COUNTS_KEY}),
        ("read_memory", {"scope": "session", "key": KEPT_COUNTS_KEY}),
        ("list_memory", {"scope": "session", "prefix": "neuron_turn/"}),
    ],
)
async def test_a_model_can_neither_change_nor_read_the_kept_counts(
    name: str, arguments: JsonValue
) -> None:
    store = InMemoryStore()
    kept = {"after": "c0", "failures_in_a_row": 4}
    await store.write(SESSION, KEPT_COUNTS_KEY, kept)
    script = [calls(call("m1", name, **arguments)), answer("tried")]  # type: ignore[arg-type]
    provider = ScriptedProvider(script)  # type: ignore[arg-type]
    config = NeuronTurnConfig(model="test-model", effect_policy=EffectPolicy(grants=["*"]))
    turn = NeuronTurn(provider, state=store, config=config)

    output = await turn.execute(ask("reset your circuit breaker", session="s1"))

    [told] = provider.requests[1].messages[-1].content
    assert isinstance(told, ToolResultPart)
    if name == "list_memory":
        assert json.loads(told.content)["keys"] == []
    else:
        assert told.is_error and "the counts of a turn kept in part" in told.content
    changes = (WriteMemoryEffect, DeleteMemoryEffect)
    assert not any(isinstance(effect, changes) for effect in output.effects)
    assert await store.read(SESSION, KEPT_COUNTS_KEY) == kept


class Answer(BaseModel):
    answer: int


async def test_a_continuation_counts_on_from_the_output_retries_the_first_part_spent() -> None:
    store, counter = InMemoryStore(), Counter()
    script = [
        answer("391, I think"),
        calls(call("c1", "send", text="x")),
        rate_limited(),
        answer("still not JSON"),
        answer('{"answer": 391}'),
    ]
    provider = ScriptedProvider(script)  # type: ignore[arg-type]
    config = NeuronTurnConfig(model="test-model", output_mode="prompted", output_retries=1)
    turn = NeuronTurn(
        provider, tools=counter.registry(), state=store, config=config, output_type=Answer
    )

    output = await continued(turn, store, ask("What is 17*23?", session="s1"))

    # One retry in all: the first part spent it, so the continuation's bad answer ends the turn.
    assert output.exit_reason == CustomExit(name="output_invalid")
    assert len(provider.requests) == 4


async def test_approval_decisions_and_a_continuation_in_one_input_are_refused() -> None:
    store = InMemoryStore()
    await store.write(SESSION, "messages", [{"role": "user", "content": "hi"}])
    turn, provider, _ = sender([answer("never")], store)
    resume = resume_input("s1", [])
    both = resume.model_copy(
        update={"metadata": {**resume.metadata, "neuron_turn": {"continue": True}}}  # type: ignore[dict-item]
    )
    with pytest.raises(ContinuationError, match="not both"):
        await turn.execute(both)
    assert provider.requests == []


def test_continuation_input_keeps_the_callers_metadata_and_refuses_what_cannot_carry_it() -> None:
    marked = continuation_input(ask(session="s1", neuron_turn={"pin": True}, trace="t"))
    assert marked.metadata == {"neuron_turn": {"pin": True, "continue": True}, "trace": "t"}
    with pytest.raises(ContinuationError, match="without a session"):
        continuation_input(ask())
    listed = TurnInput(message="hi", trigger="user", session="s1", metadata=["caller", "data"])
    with pytest.raises(ContinuationError, match=r"must be an object.*\['caller', 'data'\]"):
        continuation_input(listed)


def stalling(counter: Counter, store: InMemoryStore) -> tuple[NeuronTurn, asyncio.Event]:
    """A turn whose model asks to send, then stalls on its next call (set: it stalls)."""
    stalled = asyncio.Event()

    async def respond(request: ProviderRequest) -> ProviderResponse:
        if len(request.messages) == 1:
            return calls(call("c1", "send", text="hello"))
        stalled.set()
        await asyncio.Event().wait()  # until cancelled
        raise AssertionError("never answered")

    config = NeuronTurnConfig(model="test-model")
    turn = NeuronTurn(
        FunctionProvider(respond), tools=counter.registry(), state=store, config=config
    )
    return turn, stalled


async def cancelled(stalled: asyncio.Event, work: Awaitable[object]) -> asyncio.CancelledError:
    """Run `work` in a task, cancel it once the model stalls; return the cancellation it raised."""
    raised: list[asyncio.CancelledError] = []

    async def run() -> None:
        try:
            await work
        except asyncio.CancelledError as exc:
            raised.append(exc)
            raise

    task = asyncio.create_task(run())
    await stalled.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return raised[0]


async def test_a_turn_cancelled_after_its_tool_ran_says_what_it_did_on_the_cancellation() -> None:
    counter = Counter()
    turn, stalled = stalling(counter, InMemoryStore())

    cancellation = await cancelled(stalled, turn.execute(ask("send hello", session="s1")))

    partial = partial_of(cancellation)
    assert partial is not None and counter.runs == 1
    assert partial.output.exit_reason == INTERRUPTED
    assert [t.name for t in partial.output.metadata.tools_called] == ["send"]
    assert [m["role"] for m in appended(partial.output).messages] == ["user", "assistant", "user"]  # type: ignore[index,call-overload]
    assert continues(partial.continuation.metadata)


async def test_a_turn_stream_closed_by_its_cancelled_reader_says_what_the_turn_did() -> None:
    counter = Counter()
    turn, stalled = stalling(counter, InMemoryStore())
    stream = turn.stream(ask("send hello", session="s1"))

    async def read() -> None:
        async for _ in stream:
            pass

    await cancelled(stalled, read())

    assert stream.partial is not None and counter.runs == 1
    assert [t.name for t in stream.partial.output.metadata.tools_called] == ["send"]


async def test_a_turn_cancelled_before_any_tool_ran_offers_nothing() -> None:
    stalled = asyncio.Event()

    async def respond(request: ProviderRequest) -> ProviderResponse:
        stalled.set()
        await asyncio.Event().wait()
        raise AssertionError("never answered")

    turn = NeuronTurn(FunctionProvider(respond), state=InMemoryStore())

    cancellation = await cancelled(stalled, turn.execute(ask("hi", session="s1")))

    assert partial_of(cancellation) is None
