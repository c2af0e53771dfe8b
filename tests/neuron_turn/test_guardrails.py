"""Guardrails: the message checked beside the first model call, the answer before it is
returned; a trip stops the turn, withholding what it stopped."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from layer0 import Content, LogEffect, RetryableError, SessionScope, TurnOutput
from layer0.testing import InMemoryStore
from neuron_tool import RunContext, ToolRegistry, tool
from neuron_turn import (
    GUARDRAIL_TRIPPED,
    GuardrailError,
    NeuronTurn,
    NeuronTurnConfig,
    OutputGuardrail,
    ProviderRequest,
    ProviderResponse,
    RateLimitError,
    TextDelta,
    Tripwire,
    TurnEvent,
    continuation_input,
    input_guardrail,
    output_guardrail,
)
from neuron_turn.testing import FunctionProvider, ScriptedProvider

from .support import answer, appended, ask, call, calls, dollars

RAN: list[str] = []


@tool
async def send(text: str) -> str:
    """Send `text` somewhere."""
    RAN.append(text)
    return f"sent {text}"


@pytest.fixture(autouse=True)
def nothing_ran() -> None:
    RAN.clear()


def guarded(
    provider: Any, *guardrails: Any, store: InMemoryStore | None = None, output_type: Any = None
) -> NeuronTurn[Any]:
    config = NeuronTurnConfig(model="m", guardrails=guardrails)
    return NeuronTurn(
        provider,
        tools=ToolRegistry([send]),
        state=store,
        config=config,
        output_type=output_type,
    )


@input_guardrail
async def no_homework(context: RunContext[Any], message: Content) -> Tripwire | None:
    if "homework" in message.as_text():
        return Tripwire("homework is for the student", info={"score": 0.97})
    return None


def the_log(output: TurnOutput) -> LogEffect:
    [log] = [effect for effect in output.effects if isinstance(effect, LogEffect)]
    return log


async def test_a_tripped_input_guardrail_stops_the_turn_and_says_which_and_why() -> None:
    store = InMemoryStore()
    script = [calls(call("c1", "send", text="essay"), cost="0.01"), answer("done")]
    turn = guarded(ScriptedProvider(script), no_homework, store=store)

    output = await turn.execute(ask("do my homework", session="s1"))

    said = "Stopped by guardrail 'no_homework' on the message: homework is for the student"
    assert output.exit_reason == GUARDRAIL_TRIPPED
    assert output.message.as_text() == said
    assert RAN == []  # the model asked for the tool; nothing acted on its answer
    assert output.metadata.turns_used == 1 and output.metadata.cost == dollars("0.01")
    log = the_log(output)
    assert log.data == {
        "guardrail": {
            "name": "no_homework",
            "stage": "input",
            "reason": "homework is for the student",
            "info": {"score": 0.97},
        }
    }
    # The session keeps the message and the refusal in place of the model's answer.
    assert appended(output).messages == [
        {"role": "user", "content": "do my homework"},
        {"role": "assistant", "content": said},
    ]


async def test_a_passing_input_guardrail_runs_beside_the_first_model_call() -> None:
    called = asyncio.Event()

    async def model(request: ProviderRequest) -> ProviderResponse:
        called.set()
        return answer("hello")

    @input_guardrail
    async def waits_for_the_model(context: RunContext[Any], message: Content) -> None:
        await called.wait()  # ends only if the model was called while it runs

    turn = guarded(FunctionProvider(model), waits_for_the_model)
    async with asyncio.timeout(10):  # a guardrail run before the call would wait for ever
        output = await turn.execute(ask("hi"))

    assert output.exit_reason == "complete" and output.message.as_text() == "hello"


async def test_a_guardrail_that_trips_while_the_model_answers_cancels_the_call() -> None:
    cancelled = asyncio.Event()

    async def model(request: ProviderRequest) -> ProviderResponse:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        raise AssertionError("never answers")

    turn = guarded(FunctionProvider(model), no_homework)
    output = await turn.execute(ask("homework again"))

    assert output.exit_reason == GUARDRAIL_TRIPPED
    assert cancelled.is_set()
    assert output.metadata.turns_used == 0  # no answer came, none was paid for


def late_trip(answered: asyncio.Event) -> Any:
    """An input guardrail that trips only once the model has answered, and the loop has had
    many chances to act on that answer."""

    @input_guardrail
    async def slow_classifier(context: RunContext[Any], message: Content) -> Tripwire:
        await answered.wait()
        for _ in range(50):
            await asyncio.sleep(0)
        return Tripwire("off topic")

    return slow_classifier


async def test_nothing_acts_on_the_first_answer_before_the_input_guardrails_pass() -> None:
    answered = asyncio.Event()

    async def model(request: ProviderRequest) -> ProviderResponse:
        answered.set()
        return calls(call("c1", "send", text="now"))

    turn = guarded(FunctionProvider(model), late_trip(answered))
    output = await turn.execute(ask("hi"))

    assert output.exit_reason == GUARDRAIL_TRIPPED
    assert RAN == []


async def stream_of(turn: NeuronTurn[Any], message: str) -> list[TurnEvent]:
    async with turn.stream(ask(message)) as events:
        return [event async for event in events]


async def test_a_stream_shows_none_of_the_first_answer_before_the_input_guardrails_pass() -> None:
    answered = asyncio.Event()

    async def model(request: ProviderRequest) -> ProviderResponse:
        answered.set()
        return answer("here is your essay")

    tripped = await stream_of(
        guarded(FunctionProvider(model, chunk_size=4), late_trip(answered)), "hi"
    )
    assert not any(isinstance(event, TextDelta) for event in tripped)

    passed = await stream_of(
        guarded(ScriptedProvider([answer("here is your essay")], chunk_size=4), no_homework),
        "hi",
    )
    text = "".join(event.text for event in passed if isinstance(event, TextDelta))
    assert text == "here is your essay"  # held until the check passed, then passed on


class City(BaseModel):
    name: str
    population: int


async def test_an_output_guardrail_reads_the_typed_answer_and_withholds_it_when_it_trips() -> None:
    seen: list[Any] = []

    @output_guardrail
    async def no_small_towns(context: RunContext[Any], city: City) -> Tripwire | None:
        seen.append(city)
        return Tripwire("too small") if city.population < 1000 else None

    script = [
        calls(call("c1", "send", text="lookup")),
        answer('{"name": "Hamlet", "population": 12}'),
    ]
    turn = guarded(ScriptedProvider(script), no_small_towns, output_type=City)
    output = await turn.execute(ask("a city?", session="s1"))

    assert seen == [City(name="Hamlet", population=12)]
    assert output.exit_reason == GUARDRAIL_TRIPPED
    said = "Stopped by guardrail 'no_small_towns' on the answer: too small"
    assert output.message.as_text() == said
    assert RAN == ["lookup"]  # what the tools did is kept; the answer is not
    messages = appended(output).messages
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]  # type: ignore[index,call-overload]
    assert messages[-1] == {"role": "assistant", "content": said}
    assert "Hamlet" not in str(messages)
    assert the_log(output).data["guardrail"]["stage"] == "output"  # type: ignore[index,call-overload]


async def test_an_output_guardrail_reads_a_text_answer_and_lets_a_good_one_through() -> None:
    @output_guardrail(name="no secrets")
    async def no_secrets(context: RunContext[Any], text: str) -> Tripwire | None:
        return Tripwire("a secret") if "hunter2" in text else None

    leaked = await guarded(ScriptedProvider([answer("it is hunter2")]), no_secrets).execute(
        ask("password?")
    )
    fine = await guarded(ScriptedProvider([answer("I cannot say")]), no_secrets).execute(
        ask("password?")
    )

    assert leaked.exit_reason == GUARDRAIL_TRIPPED
    assert leaked.message.as_text() == "Stopped by guardrail 'no secrets' on the answer: a secret"
    assert fine.exit_reason == "complete" and fine.message.as_text() == "I cannot say"
    assert not any(isinstance(effect, LogEffect) for effect in fine.effects)


async def test_the_first_trip_wins_and_the_other_checks_are_cancelled() -> None:
    cancelled = asyncio.Event()

    @input_guardrail
    async def never_decides(context: RunContext[Any], message: Content) -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    turn = guarded(ScriptedProvider([answer("hi")]), never_decides, no_homework)
    output = await turn.execute(ask("homework"))

    assert output.exit_reason == GUARDRAIL_TRIPPED
    assert the_log(output).data["guardrail"]["name"] == "no_homework"  # type: ignore[index,call-overload]
    assert cancelled.is_set()


@input_guardrail
async def broken(context: RunContext[Any], message: Content) -> None:
    raise KeyError("threshold")


@input_guardrail
async def rate_limited(context: RunContext[Any], message: Content) -> None:
    raise RetryableError("the classifier's model is busy", retry_after=1.0)


@input_guardrail
async def says_yes(context: RunContext[Any], message: Content) -> bool:
    return True


@pytest.mark.parametrize(
    ("guardrail", "error", "why"),
    [
        (broken, GuardrailError, "guardrail 'broken' failed: KeyError: 'threshold'"),
        (rate_limited, RetryableError, "the classifier's model is busy"),
        (says_yes, GuardrailError, "guardrail 'says_yes' returned bool; a check returns None"),
    ],
    ids=["raises", "retryable", "not-a-tripwire"],
)
async def test_a_guardrail_that_fails_fails_the_turn_rather_than_let_it_through(
    guardrail: Any, error: type[Exception], why: str
) -> None:
    turn = guarded(ScriptedProvider([calls(call("c1", "send", text="x")), answer("ok")]), guardrail)
    with pytest.raises(error) as raised:
        await turn.execute(ask("hi"))
    assert why in str(raised.value)
    assert RAN == []


async def test_a_resume_or_a_continuation_is_not_checked_again() -> None:
    checked: list[str] = []

    @input_guardrail
    async def counts(context: RunContext[Any], message: Content) -> None:
        checked.append(message.as_text())

    store = InMemoryStore()
    limited = RateLimitError("429", provider="scripted", retry_after=0.0)
    script = [calls(call("c1", "send", text="x")), limited, answer("done")]
    turn = guarded(ScriptedProvider(script), counts, store=store)
    with pytest.raises(RetryableError) as raised:
        await turn.execute(ask("go", session="s1"))
    partial = raised.value.partial
    assert partial is not None
    await store.append_history(appended(partial.output))

    output = await turn.execute(continuation_input(ask("go", session="s1")))

    assert output.exit_reason == "complete"
    assert checked == ["go"]
    assert await store.read(SessionScope(id="s1"), "messages") is not None


def test_guardrails_are_named_for_their_function_unless_named() -> None:
    @output_guardrail(name="tone")
    async def check(context: RunContext[Any], text: str) -> None:
        return None

    assert no_homework.name == "no_homework"
    assert isinstance(check, OutputGuardrail) and check.name == "tone"


async def test_once_the_input_guardrails_pass_the_answer_streams_as_it_comes() -> None:
    go_on = asyncio.Event()

    class Gated:
        """Streams its first word, then waits to be let go on."""

        async def complete(self, request: ProviderRequest) -> ProviderResponse:
            raise AssertionError("streamed only")

        async def stream(self, request: ProviderRequest) -> Any:
            yield TextDelta("first ")
            await go_on.wait()
            yield TextDelta("second")
            yield answer("first second")

    turn = guarded(Gated(), no_homework)
    texts: list[str] = []
    # Were the first word held for the whole answer, it would wait for ever: bounded.
    async with asyncio.timeout(10), turn.stream(ask("hi")) as events:
        async for event in events:
            if isinstance(event, TextDelta):
                # The check passed at once: the first word is here while the model writes.
                texts.append(event.text)
                go_on.set()
    assert texts == ["first ", "second"]
    assert events.output.message.as_text() == "first second"


def test_a_check_that_is_not_async_is_refused_when_made_a_guardrail() -> None:
    def sync_check(context: RunContext[Any], message: Content) -> None:
        return None

    with pytest.raises(TypeError, match="a guardrail's check must be an async function"):
        input_guardrail(sync_check)  # type: ignore[arg-type]


async def test_an_output_guardrail_sees_the_model_calls_made_and_the_usage() -> None:
    seen: list[tuple[int, int, int]] = []

    @output_guardrail
    async def watch(context: RunContext[Any], text: str) -> Tripwire | None:
        usage = context.usage
        seen.append((context.step, usage.total_tokens, usage.tool_calls))
        return None

    script = [calls(call("c1", "send", text="hi")), answer("sent")]

    await guarded(ScriptedProvider(script), watch).execute(ask("send hi"))

    assert seen == [(2, 30, 1)]
