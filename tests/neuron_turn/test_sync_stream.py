"""`NeuronTurn.stream_sync`: a turn's events read with a plain `for`, from code with no loop."""

from __future__ import annotations

import asyncio
import gc
import threading

import pytest
from pydantic import BaseModel

from layer0 import ModelError
from neuron_tool import tool
from neuron_turn import (
    ModelSettings,
    NeuronTurn,
    RunSyncError,
    TextDelta,
    ToolResult,
    ToolStart,
    TurnDone,
    output_value,
)
from neuron_turn.loop._blocking import run_blocking
from neuron_turn.testing import ScriptedProvider

from .support import answer, call, calls


class Sum(BaseModel):
    total: int


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_a_for_loop_reads_the_turns_events_in_order_ending_with_turn_done() -> None:
    provider = ScriptedProvider([calls(call("c1", "add", a=2, b=3)), answer("5")])
    turn = NeuronTurn(provider, tools=[add])

    with turn.stream_sync("add 2 and 3") as events:
        seen = list(events)

    kinds = [type(event) for event in seen]
    assert kinds.index(ToolStart) < kinds.index(ToolResult) < kinds.index(TextDelta)
    assert isinstance(seen[-1], TurnDone) and seen[-1].output == events.output
    assert events.output.message.as_text() == "5"
    assert [message.role for message in events.new_messages()] == [
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert (events.usage.input_tokens, events.usage.tool_calls) == (20, 1)


def test_breaking_out_cancels_the_turn_and_the_next_run_sync_works() -> None:
    cancelled: list[str] = []
    release = asyncio.Event()

    @tool
    async def wait() -> str:
        """Wait to be released."""
        try:
            await release.wait()
        except asyncio.CancelledError:
            cancelled.append("wait")
            raise
        return "released"

    provider = ScriptedProvider([calls(call("c1", "wait")), answer("after")])
    turn = NeuronTurn(provider, tools=[wait])

    for event in turn.stream_sync("wait"):
        if isinstance(event, ToolStart):
            break

    assert cancelled == ["wait"]
    assert turn.run_sync("again").output == "after"


def test_breaking_out_cancels_the_turn_while_the_stream_is_still_held() -> None:
    # Held in a name, the stream used to keep its reader alive: the turn stayed
    # suspended, not cancelled, and ran on (its tool, its next model call) inside the
    # thread's next run_sync.
    cancelled: list[str] = []
    release = asyncio.Event()

    @tool
    async def wait() -> str:
        """Wait to be released."""
        try:
            await release.wait()
        except asyncio.CancelledError:
            cancelled.append("wait")
            raise
        return "released"

    @tool
    async def open_gate() -> str:
        """Release the other turn's tool."""
        release.set()
        return "opened"

    provider = ScriptedProvider([calls(call("c1", "wait")), answer("after")])
    events = NeuronTurn(provider, tools=[wait]).stream_sync("wait")
    for event in events:
        if isinstance(event, ToolStart):
            break

    assert cancelled == ["wait"]
    other = NeuronTurn(
        ScriptedProvider([calls(call("o1", "open_gate")), answer("opened")]), tools=[open_gate]
    )
    assert other.run_sync("open").output == "opened"
    assert cancelled == ["wait"] and len(provider.requests) == 1


def test_a_stream_read_on_from_another_thread_is_refused_and_its_own_thread_reads_on() -> None:
    # The turn runs on the loop of the thread that began reading; another thread's loop
    # waited for ever on events that loop never made, and closing there did too.
    provider = ScriptedProvider([calls(call("c1", "add", a=1, b=2)), answer("3")])
    events = NeuronTurn(provider, tools=[add]).stream_sync("add")
    reader = iter(events)
    first = next(reader)
    refusals: list[BaseException] = []

    def elsewhere() -> None:
        for attempt in (lambda: next(reader), events.close):
            try:
                attempt()
            except RunSyncError as exc:
                refusals.append(exc)

    worker = threading.Thread(target=elsewhere)
    worker.start()
    worker.join(timeout=30)

    assert not worker.is_alive()
    assert [str(refusal) for refusal in refusals] == [_ELSEWHERE, _ELSEWHERE]
    rest = list(reader)
    assert [first, *rest][-1] == TurnDone(output=events.output)
    assert events.output.message.as_text() == "3"


_ELSEWHERE = (
    "a stream_sync stream is read and closed on the thread that began reading it, "
    "whose event loop runs its turn"
)


def test_a_reader_collected_while_the_threads_loop_runs_has_its_turn_cancelled_there() -> None:
    # In a reference cycle, a reader left mid-turn is collected whenever the collector
    # runs, perhaps inside a later run_sync: it then could not wait for its turn to stop
    # (the loop already ran), and the turn's task, garbage with it, was destroyed
    # pending, its tools closed mid-await, never cancelled.
    stopped = asyncio.Event()
    cancelled: list[str] = []

    @tool
    async def wait() -> str:
        """Wait until cancelled."""
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append("wait")  # not GeneratorExit: its task was not destroyed
            raise
        finally:
            stopped.set()
        return "never"

    @tool
    async def collect() -> str:
        """Collect garbage, here inside the thread's running loop."""
        gc.collect()
        return "collected"

    class Holder:
        """Holds a reader in a cycle, so only the collector frees it."""

    provider = ScriptedProvider([calls(call("c1", "wait")), answer("never")])
    holder = Holder()
    holder.cycle, holder.reader = (
        holder,
        iter(  # type: ignore[attr-defined]
            NeuronTurn(provider, tools=[wait]).stream_sync("wait")
        ),
    )
    automatic = gc.isenabled()
    gc.disable()
    try:
        for event in holder.reader:  # type: ignore[attr-defined]
            if isinstance(event, ToolStart):
                break
        del holder
        collector = NeuronTurn(
            ScriptedProvider([calls(call("k1", "collect")), answer("done")]), tools=[collect]
        )
        assert collector.run_sync("collect").output == "done"
    finally:
        if automatic:
            gc.enable()

    run_blocking(asyncio.wait_for(stopped.wait(), timeout=30))
    assert cancelled == ["wait"] and len(provider.requests) == 1


def test_a_stream_read_where_an_event_loop_runs_is_refused_naming_stream() -> None:
    # Made outside a loop, read inside one: asyncio's own error, and an event's
    # coroutine left unawaited.
    events = NeuronTurn(ScriptedProvider([answer("hi")])).stream_sync("hi")

    async def read_in_a_loop() -> None:
        with pytest.raises(RunSyncError, match=r"turn\.stream\("):
            next(iter(events))
        with pytest.raises(RunSyncError, match=r"turn\.stream\("):
            events.close()

    run_blocking(read_in_a_loop())
    events.close()


def test_the_turns_error_is_raised_by_the_loop_after_the_events_before_it() -> None:
    turn = NeuronTurn(ScriptedProvider([ModelError("the answer was cut off")]))
    seen = []

    with pytest.raises(ModelError, match="cut off"):
        for event in turn.stream_sync("hi"):
            seen.append(event)

    assert not any(isinstance(event, TurnDone) for event in seen)


def test_a_stream_read_twice_is_refused_and_its_output_waits_for_the_end() -> None:
    events = NeuronTurn(ScriptedProvider([answer("once")])).stream_sync("hi")

    with pytest.raises(RuntimeError, match="read the stream to its end"):
        events.output  # noqa: B018 - raises before the turn has run
    list(events)
    with pytest.raises(RuntimeError, match="read once"):
        iter(events)


def test_stream_sync_takes_streams_per_run_arguments() -> None:
    provider = ScriptedProvider([answer('{"total": 5}')])
    turn = NeuronTurn(provider)

    events = turn.stream_sync("sum", output_type=Sum, model_settings=ModelSettings(max_tokens=30))
    list(events)

    assert output_value(events.output, Sum) == Sum(total=5)
    assert provider.requests[0].max_tokens == 30


async def test_stream_sync_where_an_event_loop_runs_is_refused_naming_stream() -> None:
    turn = NeuronTurn(ScriptedProvider([answer("never")]))

    with pytest.raises(RunSyncError, match=r"turn\.stream\("):
        turn.stream_sync("hi")
