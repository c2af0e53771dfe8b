"""Turn observers: every turn of the process is watched from start to end, without steering it."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from layer0 import ModelError, TurnOutput
from neuron_tool import ToolRegistry
from neuron_turn import (
    ModelCallDone,
    ModelCallStart,
    NeuronTurn,
    NeuronTurnConfig,
    ProviderResponseError,
    TextDelta,
    ToolResult,
    ToolStart,
    TurnDone,
    TurnEvent,
    TurnObserver,
    TurnStart,
    TurnWatch,
    add_turn_observer,
    remove_turn_observer,
    turn_observers,
)
from neuron_turn.testing import ScriptedProvider

from .support import add, answer, ask, call, calls


class _Watch:
    def __init__(self) -> None:
        self.events: list[TurnEvent] = []
        self.ended: list[tuple[TurnOutput | None, BaseException | None]] = []

    def on_event(self, event: TurnEvent) -> None:
        self.events.append(event)

    def on_end(self, output: TurnOutput | None, error: BaseException | None) -> None:
        self.ended.append((output, error))


class _Observer:
    def __init__(self) -> None:
        self.starts: list[TurnStart] = []
        self.watches: list[_Watch] = []

    def watch(self, turn: TurnStart) -> TurnWatch | None:
        self.starts.append(turn)
        watch = _Watch()
        self.watches.append(watch)
        return watch


@pytest.fixture
def observer() -> Iterator[_Observer]:
    watching = _Observer()
    add_turn_observer(watching)
    yield watching
    remove_turn_observer(watching)


def _turn(provider: ScriptedProvider) -> NeuronTurn:
    config = NeuronTurnConfig(model="test-model", agent="calc")
    return NeuronTurn(provider, tools=ToolRegistry([add]), config=config)


def _two_calls() -> ScriptedProvider:
    return ScriptedProvider(
        [calls(call("c1", "add", a=1, b=2), cost="0.001"), answer("3", cost="0.002")]
    )


async def test_an_observer_sees_the_start_every_call_and_the_end_of_a_turn(
    observer: _Observer,
) -> None:
    provider = _two_calls()
    output = await _turn(provider).execute(ask("add 1 and 2", session="s-1"))

    (start,) = observer.starts
    assert (start.agent, start.model, start.provider, start.input.session) == (
        "calc",
        "test-model",
        provider,
        "s-1",
    )
    (watch,) = observer.watches
    kinds = [e.kind for e in watch.events if e.kind not in ("effect", "lifecycle")]
    assert kinds == [
        "model_call_start",
        "model_call_done",
        "tool_start",
        "tool_result",
        "model_call_start",
        "model_call_done",
    ]
    starts = [e for e in watch.events if isinstance(e, ModelCallStart)]
    assert starts[0].request is not None and starts[0].request.model == "test-model"
    done = [e for e in watch.events if isinstance(e, ModelCallDone)]
    assert [d.response is not None and d.response.stop_reason for d in done] == [
        "tool_use",
        "end_turn",
    ]
    result = next(e for e in watch.events if isinstance(e, ToolResult))
    assert (result.id, result.content, result.is_error) == ("c1", "3", False)
    assert watch.ended == [(output, None)]


async def test_observing_does_not_stream_the_provider_of_an_executed_turn(
    observer: _Observer,
) -> None:
    provider = ScriptedProvider([answer("a long answer")], chunk_size=2)
    await _turn(provider).execute(ask())

    assert not any(isinstance(e, TextDelta) for e in observer.watches[0].events)


async def test_a_streamed_turn_reaches_both_its_consumer_and_the_observer(
    observer: _Observer,
) -> None:
    events = [e async for e in _turn(_two_calls()).stream(ask())]

    watched = observer.watches[0].events
    assert [e.kind for e in events if e.kind != "turn_done"] == [e.kind for e in watched]
    assert isinstance(events[-1], TurnDone)
    assert observer.watches[0].ended == [(events[-1].output, None)]


async def test_a_provider_error_ends_the_watch_with_the_turns_error(observer: _Observer) -> None:
    turn = _turn(ScriptedProvider([ProviderResponseError("the answer did not parse")]))

    with pytest.raises(ModelError) as raised:
        await turn.execute(ask())

    (watch,) = observer.watches
    assert [e.kind for e in watch.events] == ["model_call_start"]
    assert watch.ended == [(None, raised.value)]


async def test_a_watch_that_raises_is_dropped_and_the_turn_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Broken(_Watch):
        def on_event(self, event: TurnEvent) -> None:
            raise RuntimeError("observer bug")

    broken = Broken()

    class Observer:
        def watch(self, turn: TurnStart) -> TurnWatch:
            return broken

    watching = Observer()
    add_turn_observer(watching)
    try:
        with caplog.at_level(logging.ERROR, logger="neuron_turn.observers"):
            output = await _turn(_two_calls()).execute(ask())
    finally:
        remove_turn_observer(watching)

    assert output.message.as_text() == "3"
    assert broken.ended == []  # dropped at its first failure, so never told of the end
    assert "dropped for this turn" in caplog.text


async def test_an_observer_may_skip_a_turn_and_tool_events_name_their_call() -> None:
    seen: list[ToolStart] = []

    class Picky:
        def watch(self, turn: TurnStart) -> TurnWatch | None:
            if turn.agent != "calc":
                return None
            watch = _Watch()
            watch.on_event = lambda e: seen.append(e) if isinstance(e, ToolStart) else None  # type: ignore[method-assign]
            return watch

    picky = Picky()
    add_turn_observer(picky)
    try:
        other = NeuronTurn(_two_calls(), tools=ToolRegistry([add]))
        await other.execute(ask())
        await _turn(_two_calls()).execute(ask())
    finally:
        remove_turn_observer(picky)

    assert seen == [ToolStart("c1", "add", {"a": 1, "b": 2})]


def test_observers_are_added_once_and_removed() -> None:
    watching: TurnObserver = _Observer()
    add_turn_observer(watching)
    add_turn_observer(watching)
    assert turn_observers().count(watching) == 1
    remove_turn_observer(watching)
    assert watching not in turn_observers()
