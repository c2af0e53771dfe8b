"""Retries of `RetryableError` and fallback between models, on a fake clock."""

from __future__ import annotations

from decimal import Decimal

import pytest
from pydantic import ValidationError

from layer0 import (
    DispatchFailed,
    LogEffect,
    LogLevel,
    ModelError,
    NonRetryableError,
    RetryableError,
    ToolExecutionError,
    TurnInput,
    TurnOutput,
)
from layer0.testing import EchoTurn, InMemoryStore
from neuron_orch_local import ATTEMPTS_LOG, FallbackTurn, LocalOrchestrator, RetryPolicy
from neuron_turn import NeuronTurn

from ..provider_anthropic._support import FakeApi, error_body, reply
from ..provider_openai._support import completion, json_response, mocked
from ._doubles import FailingTurn, output, user


class FakeClock:
    """A clock whose sleeps return at once, advancing it, and are recorded."""

    def __init__(self) -> None:
        self.time = 1000.0
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self.time

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.time += seconds


class FlakyTurn:
    """Raises each of `errors` in turn, then answers."""

    def __init__(self, *errors: Exception, reply: str = "done") -> None:
        self.errors = list(errors)
        self.reply = reply
        self.calls = 0

    async def execute(self, input: TurnInput) -> TurnOutput:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return output(self.reply)


def rate_limited(seconds: str) -> object:
    return reply(
        error_body("rate_limit_error", "Number of requests has exceeded your rate limit"),
        status=429,
        headers={"retry-after": seconds},
    )


def attempts_record(result: TurnOutput) -> dict[str, object]:
    first = result.effects[0]
    assert isinstance(first, LogEffect)
    assert isinstance(first.data, dict)
    record = first.data[ATTEMPTS_LOG]
    assert isinstance(record, dict)
    return record


async def test_a_429_twice_is_retried_after_the_advertised_delays_then_answers() -> None:
    api = FakeApi(rate_limited("7"), rate_limited("3"), reply())
    clock = FakeClock()
    orchestrator = LocalOrchestrator(
        {"main": NeuronTurn(api.provider())}, InMemoryStore(), clock=clock
    )

    result = await orchestrator.dispatch("main", user())

    assert result.message.as_text() == "Hello."
    assert clock.sleeps == [7.0, 3.0]
    assert len(api.requests) == 3
    record = attempts_record(result)
    assert record["answered_by"] == "main"
    failures = record["failures"]
    assert isinstance(failures, list)
    assert [(f["error"], f["waited"]) for f in failures] == [  # type: ignore[index]
        ("RetryableError", 7.0),
        ("RetryableError", 3.0),
    ]


async def test_a_401_falls_back_to_the_second_model_and_records_both() -> None:
    anthropic = FakeApi(reply(error_body("authentication_error", "invalid x-api-key"), status=401))
    openai, recorder = mocked(json_response(completion("Hi from OpenAI.")))
    clock = FakeClock()
    agent = FallbackTurn(
        {
            "anthropic:claude-haiku-4-5": NeuronTurn(anthropic.provider()),
            "openai:gpt-4o-mini": NeuronTurn(openai),
        }
    )
    orchestrator = LocalOrchestrator({"main": agent}, InMemoryStore(), clock=clock)

    result = await orchestrator.dispatch("main", user())

    assert result.message.as_text() == "Hi from OpenAI."
    assert len(anthropic.requests) == 1  # a bad key is not retried
    assert len(recorder.requests) == 1
    assert clock.sleeps == []
    record = attempts_record(result)
    assert record["answered_by"] == "openai:gpt-4o-mini"
    failures = record["failures"]
    assert isinstance(failures, list) and len(failures) == 1
    assert failures[0]["model"] == "anthropic:claude-haiku-4-5"  # type: ignore[index]
    assert failures[0]["error"] == "NonRetryableError"  # type: ignore[index]
    assert result.effects[0].level is LogLevel.WARN  # type: ignore[union-attr]


async def test_when_retries_run_out_the_next_model_answers() -> None:
    first = FlakyTurn(*(RetryableError("overloaded", retry_after=2.0) for _ in range(5)))
    agent = FallbackTurn({"a:1": first, "b:2": EchoTurn()})
    clock = FakeClock()
    orchestrator = LocalOrchestrator(
        {"main": agent}, InMemoryStore(), retry=RetryPolicy(max_attempts=2), clock=clock
    )

    result = await orchestrator.dispatch("main", user("ping"))

    assert result.message.as_text() == "ping"
    assert first.calls == 2
    assert clock.sleeps == [2.0]
    failures = attempts_record(result)["failures"]
    assert [(f["model"], f["attempt"], f["waited"]) for f in failures] == [  # type: ignore[index, union-attr]
        ("a:1", 1, 2.0),
        ("a:1", 2, None),
    ]


async def test_a_fallback_chain_that_succeeds_at_once_records_who_answered() -> None:
    agent = FallbackTurn({"a:1": EchoTurn(), "b:2": EchoTurn()})
    result = await LocalOrchestrator({"main": agent}, InMemoryStore()).dispatch("main", user())
    record = attempts_record(result)
    assert record == {"answered_by": "a:1", "failures": []}
    assert result.effects[0].level is LogLevel.INFO  # type: ignore[union-attr]


async def test_without_retry_after_the_waits_grow_by_the_backoff_less_the_jitter() -> None:
    turn = FlakyTurn(*(RetryableError("busy") for _ in range(4)))
    clock = FakeClock()
    policy = RetryPolicy(
        max_attempts=5, initial_interval=1000, backoff=Decimal(3), max_interval=5000
    )
    orchestrator = LocalOrchestrator(
        {"main": turn}, InMemoryStore(), retry=policy, clock=clock, randomness=lambda: 0.5
    )

    await orchestrator.dispatch("main", user())

    # 1 s, 3 s, 9 s capped at 5 s, each less 0.2 * 0.5 of itself.
    assert clock.sleeps == [0.9, 2.7, 4.5, 4.5]


async def test_a_retry_after_beyond_max_interval_is_not_waited_for() -> None:
    error = RetryableError("come back tomorrow", retry_after=86_400.0)
    clock = FakeClock()
    orchestrator = LocalOrchestrator({"main": FailingTurn(error)}, InMemoryStore(), clock=clock)

    with pytest.raises(DispatchFailed, match="RetryableError: come back tomorrow") as caught:
        await orchestrator.dispatch("main", user())

    assert caught.value.__cause__ is error
    assert clock.sleeps == []


async def test_no_wait_ends_past_the_total_deadline() -> None:
    turn = FlakyTurn(*(RetryableError("busy", retry_after=4.0) for _ in range(9)))
    clock = FakeClock()
    policy = RetryPolicy(max_attempts=10, max_total=10_000)
    orchestrator = LocalOrchestrator({"main": turn}, InMemoryStore(), retry=policy, clock=clock)

    with pytest.raises(DispatchFailed, match=r"try 3: RetryableError: busy") as caught:
        await orchestrator.dispatch("main", user())

    assert clock.sleeps == [4.0, 4.0]  # a third wait would end at 12 s
    assert turn.calls == 3
    assert isinstance(caught.value.__cause__, RetryableError)


@pytest.mark.parametrize(
    "error", [ToolExecutionError("search", "index gone"), RuntimeError("a bug in the turn")]
)
async def test_errors_that_are_not_the_models_are_neither_retried_nor_fallen_back_on(
    error: Exception,
) -> None:
    first = FlakyTurn(error)
    second = FlakyTurn()
    clock = FakeClock()
    agent = FallbackTurn({"a:1": first, "b:2": second})
    orchestrator = LocalOrchestrator({"main": agent}, InMemoryStore(), clock=clock)

    with pytest.raises(DispatchFailed) as caught:
        await orchestrator.dispatch("main", user())

    assert caught.value.__cause__ is error
    assert (first.calls, second.calls, clock.sleeps) == (1, 0, [])


async def test_when_every_model_fails_the_error_lists_every_attempt() -> None:
    agent = FallbackTurn(
        {
            "a:1": FailingTurn(NonRetryableError("invalid x-api-key")),
            "b:2": FailingTurn(ModelError("content filtered")),
        }
    )
    orchestrator = LocalOrchestrator({"main": agent}, InMemoryStore(), clock=FakeClock())

    with pytest.raises(
        DispatchFailed,
        match=r"ModelError: content filtered; attempts: a:1 try 1: NonRetryableError: "
        r"invalid x-api-key; b:2 try 1: ModelError: content filtered",
    ) as caught:
        await orchestrator.dispatch("main", user())

    assert isinstance(caught.value.__cause__, ModelError)


async def test_max_attempts_one_never_retries() -> None:
    turn = FlakyTurn(RetryableError("busy"))
    clock = FakeClock()
    orchestrator = LocalOrchestrator(
        {"main": turn}, InMemoryStore(), retry=RetryPolicy(max_attempts=1), clock=clock
    )
    with pytest.raises(DispatchFailed):
        await orchestrator.dispatch("main", user())
    assert (turn.calls, clock.sleeps) == (1, [])


async def test_a_fallback_turn_alone_tries_each_model_once() -> None:
    first = FlakyTurn(RetryableError("busy", retry_after=1.0))
    agent = FallbackTurn({"a:1": first, "b:2": EchoTurn()})

    result = await agent.execute(user("pong"))

    assert result.message.as_text() == "pong"
    assert first.calls == 1
    assert attempts_record(result)["answered_by"] == "b:2"


def test_a_fallback_turn_needs_turns() -> None:
    with pytest.raises(ValueError, match="at least one model"):
        FallbackTurn({})
    with pytest.raises(TypeError, match=r"model 'a:1' is not a layer0.Turn"):
        FallbackTurn({"a:1": object()})  # type: ignore[dict-item]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_attempts", 0),
        ("initial_interval", 0),
        ("backoff", "0.5"),
        ("jitter", "1.5"),
        # Past a timedelta's range: a retry timer (or a Temporal workflow) built from it fails.
        ("max_interval", 10**17),
        ("max_total", 10**17),
    ],
)
def test_a_retry_policy_refuses_values_that_cannot_work(field: str, value: object) -> None:
    with pytest.raises(ValidationError, match=field):
        RetryPolicy.model_validate({field: value})


def test_the_policy_waits_exactly_the_retry_after_it_was_given() -> None:
    policy = RetryPolicy(max_interval=10_000)
    assert policy.wait(1, 7.0, 0.99) == 7.0
    assert policy.wait(1, 11.0, 0.0) is None
    assert policy.wait(3, None, 0.0) == 4.0
