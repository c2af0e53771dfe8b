"""A workflow cancelled through Temporal, or its worker shut down, mid-turn: what ran is kept."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import JsonValue
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowExecutionStatus, WorkflowQueryFailedError
from temporalio.testing import WorkflowEnvironment

from layer0 import (
    DispatchFailed,
    EffectPolicy,
    PartialTurn,
    SessionScope,
    TurnInput,
    TurnMetadata,
    TurnOutput,
    WorkflowNotFound,
    partial_of,
)
from layer0.testing import InMemoryStore
from neuron_orch_temporal import CancellationPendingError, TemporalOrchestrator, create_worker
from neuron_state_sqlite import SqliteStore
from neuron_turn import (
    INTERRUPTED,
    NeuronTurn,
    NeuronTurnConfig,
    ToolUsePart,
)
from neuron_turn.testing import (
    FunctionProvider,
    ScriptedProvider,
    text_response,
    tool_call_response,
)

from ..orch_local._doubles import NeverAnswers, session_roles
from .agents import rate_limited_agent, stalling_agent
from .conftest import FAST, hosting, noting_calls

pytestmark = pytest.mark.asyncio(loop_scope="session")

SESSION = SessionScope(id="s1")
TASK = TurnInput(message="read notes", trigger="user", session="s1")


async def dispatching(orchestrator: TemporalOrchestrator, workflow_id: str) -> object:
    return await orchestrator.dispatch("reader", TASK, workflow_id=workflow_id)


async def streaming(orchestrator: TemporalOrchestrator, workflow_id: str) -> object:
    async with orchestrator.stream("reader", TASK, workflow_id=workflow_id) as events:
        return [item async for item in events]


async def dispatching_until_cancelled(
    orchestrator: TemporalOrchestrator, workflow_id: str, kept: list[PartialTurn | None]
) -> object:
    """`dispatching`, keeping what its cancellation carries (`partial_of`) in `kept`."""
    try:
        return await dispatching(orchestrator, workflow_id)
    except asyncio.CancelledError as cancelled:
        kept.append(partial_of(cancelled))
        raise


async def streaming_until_cancelled(
    orchestrator: TemporalOrchestrator, workflow_id: str, kept: list[PartialTurn | None]
) -> object:
    """`streaming`, keeping what the stream says its cancelled dispatch did in `kept`."""
    events = orchestrator.stream("reader", TASK, workflow_id=workflow_id)
    try:
        async with events:
            return [item async for item in events]
    except asyncio.CancelledError:
        kept.append(events.partial)
        raise


async def goes_on_from(
    orchestrator: TemporalOrchestrator, partial: PartialTurn | None, tool_log: Path
) -> None:
    """`partial` is the kept part, and dispatching its continuation answers without a tool again."""
    assert partial is not None and partial.output.exit_reason == INTERRUPTED
    later = await orchestrator.dispatch("reader", partial.continuation)
    assert later.message.as_text().startswith("contents of notes.txt; Cancelled: ")
    assert tool_log.read_text(encoding="utf-8") == "read notes.txt\nwait\n"


def cancelled_part(failed: DispatchFailed) -> PartialTurn | None:
    """What the cancellation that `failed` says ended its workflow carries, as its cause."""
    cause = failed.__cause__
    assert isinstance(cause, asyncio.CancelledError)
    return partial_of(cause)


def kept_both_tools(tool_log: Path, history: JsonValue) -> None:
    """Each tool ran once, and the session says so: the read with its result, the wait cut off."""
    assert tool_log.read_text(encoding="utf-8") == "read notes.txt\nwait\n"
    assert isinstance(history, list)
    assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant", "user"]  # type: ignore[index,call-overload]
    [read_result] = history[2]["content"]  # type: ignore[index,call-overload]
    assert read_result["content"] == "contents of notes.txt"  # type: ignore[index]
    [wait_result] = history[4]["content"]  # type: ignore[index,call-overload]
    assert wait_result["content"].startswith("Cancelled: ")  # type: ignore[index,union-attr]


@dataclass
class Staller:
    """A worker hosting `stalling_agent` as "reader" on a SQLite store, and its orchestrator."""

    orchestrator: TemporalOrchestrator
    store: SqliteStore
    stalled: asyncio.Event
    """Set once the reader's first tool ran and its second waits for good."""
    tool_log: Path


@asynccontextmanager
async def hosting_a_staller(env: WorkflowEnvironment, tmp_path: Path) -> AsyncIterator[Staller]:
    tool_log, stalled = tmp_path / "tools.log", asyncio.Event()
    async with SqliteStore(tmp_path / "state.db") as store:
        agent = stalling_agent(tool_log, state=store, stalled=stalled)
        async with hosting(env, {"reader": agent}, store) as orchestrator:
            yield Staller(orchestrator, store, stalled, tool_log)


@pytest.mark.parametrize("run", [dispatching, streaming])
async def test_a_workflow_cancelled_mid_turn_keeps_the_tools_that_ran_and_ends_cancelled(
    dev_env: WorkflowEnvironment,
    tmp_path: Path,
    run: Callable[[TemporalOrchestrator, str], Awaitable[object]],
) -> None:
    workflow_id = f"cancel-{run.__name__}"
    async with hosting_a_staller(dev_env, tmp_path) as staller:
        running = asyncio.ensure_future(run(staller.orchestrator, workflow_id))
        await staller.stalled.wait()
        handle = dev_env.client.get_workflow_handle(workflow_id)
        await handle.cancel()
        with pytest.raises(DispatchFailed, match=f"{workflow_id} was cancelled") as raised:
            await running
        description = await handle.describe()
        history = await staller.store.read(SESSION, "messages")
        [summary] = await staller.store.turn_summaries(session="s1")
        record = await staller.store.turn_record(summary.turn_id)
        kept_both_tools(staller.tool_log, history)
        # Its cancellation, the cause, carries the part and its continuation.
        await goes_on_from(staller.orchestrator, cancelled_part(raised.value), staller.tool_log)

    assert description.status == WorkflowExecutionStatus.CANCELED
    assert record is not None and record.status == "accepted"
    assert record.error is not None and record.error.startswith("CancelledError")


@pytest.mark.parametrize("run", [dispatching_until_cancelled, streaming_until_cancelled])
async def test_a_caller_cancelled_stops_the_workflow_when_asked_handing_on_what_ran(
    dev_env: WorkflowEnvironment,
    tmp_path: Path,
    run: Callable[[TemporalOrchestrator, str, list[PartialTurn | None]], Awaitable[object]],
) -> None:
    workflow_id = f"caller-{run.__name__}"
    async with hosting_a_staller(dev_env, tmp_path) as staller:
        task_queue = staller.orchestrator.task_queue
        orchestrator = TemporalOrchestrator(
            dev_env.client, task_queue=task_queue, policy=FAST, stop_with_caller=True
        )
        kept: list[PartialTurn | None] = []
        running = asyncio.ensure_future(run(orchestrator, workflow_id, kept))
        await staller.stalled.wait()
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
        # Ended before the cancellation reached the caller: no wait for it here.
        description = await dev_env.client.get_workflow_handle(workflow_id).describe()
        history = await staller.store.read(SESSION, "messages")
        kept_both_tools(staller.tool_log, history)
        # The cancellation carries the part and its continuation, as LocalOrchestrator's does.
        [partial] = kept
        await goes_on_from(orchestrator, partial, staller.tool_log)

    assert description.status == WorkflowExecutionStatus.CANCELED


async def test_a_worker_shut_down_mid_turn_keeps_the_tools_that_ran_and_another_goes_on(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    # The dev server: the time-skipping one keeps the workflow's next task for the worker
    # that stopped (its sticky queue), where no worker takes it.
    env = dev_env
    tool_log, stalled = tmp_path / "tools.log", asyncio.Event()
    task_queue = f"test-{uuid.uuid4()}"
    orchestrator = TemporalOrchestrator(env.client, task_queue=task_queue, policy=FAST)
    async with SqliteStore(tmp_path / "state.db") as store:
        agent = stalling_agent(tool_log, state=store, stalled=stalled)
        agents = {"reader": agent}
        async with create_worker(env.client, agents=agents, store=store, task_queue=task_queue):
            dispatch = asyncio.ensure_future(
                orchestrator.dispatch("reader", TASK, workflow_id="shutdown-1")
            )
            await stalled.wait()
        # The first worker has stopped; a second takes the turn up from its kept part.
        async with create_worker(env.client, agents=agents, store=store, task_queue=task_queue):
            async with asyncio.timeout(60):  # were the turn run again whole, it would stall again
                output = await dispatch
        history = await store.read(SESSION, "messages")

    assert tool_log.read_text(encoding="utf-8") == "read notes.txt\nwait\n"
    # The second worker's model got the read's result and the wait's, cut off.
    assert output.message.as_text() == (
        "contents of notes.txt; Cancelled: the turn ended before this tool call finished."
    )
    assert isinstance(history, list)
    roles = [m["role"] for m in history]  # type: ignore[index,call-overload]
    assert roles == ["user", "assistant", "user", "assistant", "user", "assistant"]


async def test_a_cancel_no_worker_takes_says_so_and_the_next_worker_ends_it_keeping_the_part(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    tool_log, stalled = tmp_path / "tools.log", asyncio.Event()
    task_queue = f"test-{uuid.uuid4()}"
    orchestrator = TemporalOrchestrator(
        dev_env.client, task_queue=task_queue, policy=FAST, pickup_timeout=1
    )
    async with SqliteStore(tmp_path / "state.db") as store:
        agents = {"reader": stalling_agent(tool_log, state=store, stalled=stalled)}
        async with create_worker(dev_env.client, agents=agents, store=store, task_queue=task_queue):
            dispatch = asyncio.ensure_future(dispatching(orchestrator, "orphaned"))
            await stalled.wait()
        # Its worker stopped, handing back the part; no worker is left to take the cancel.
        with pytest.raises(
            CancellationPendingError, match="'orphaned' is cancelled, but no worker"
        ):
            await orchestrator.cancel("orphaned")
        async with create_worker(dev_env.client, agents=agents, store=store, task_queue=task_queue):
            async with asyncio.timeout(60):
                with pytest.raises(DispatchFailed, match="orphaned was cancelled"):
                    await dispatch
        history = await store.read(SESSION, "messages")
        description = await dev_env.client.get_workflow_handle("orphaned").describe()

    # The next worker took the cancellation: the part kept, nothing run again.
    assert description.status == WorkflowExecutionStatus.CANCELED
    kept_both_tools(tool_log, history)


async def test_cancelling_a_workflow_cancels_the_delegation_its_turn_waits_on(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    tool_log, stalled = tmp_path / "tools.log", asyncio.Event()
    asks = ToolUsePart("c1", "delegate", {"agent": "reader", "message": "read notes"})
    config = NeuronTurnConfig(model="scripted", effect_policy=EffectPolicy.everything())
    async with SqliteStore(tmp_path / "state.db") as store:
        provider = ScriptedProvider([tool_call_response(asks), text_response("never asked")])
        lead = NeuronTurn(provider, state=store, config=config)
        reader = stalling_agent(tool_log, state=store, stalled=stalled)
        async with hosting(dev_env, {"lead": lead, "reader": reader}, store) as orchestrator:
            running = asyncio.ensure_future(
                orchestrator.dispatch("lead", TASK, workflow_id="cancel-lead")
            )
            await stalled.wait()
            await dev_env.client.get_workflow_handle("cancel-lead").cancel()
            with pytest.raises(DispatchFailed, match="cancel-lead was cancelled"):
                await running
            listed = dev_env.client.list_workflows("WorkflowId STARTS_WITH 'cancel-lead/'")
            [listing] = [workflow async for workflow in listed]
            child = await dev_env.client.get_workflow_handle(listing.id).describe()
        history = await store.read(SESSION, "messages")

    # The delegation stopped with its parent rather than running on for nobody.
    assert child.status == WorkflowExecutionStatus.CANCELED
    assert tool_log.read_text(encoding="utf-8") == "read notes.txt\nwait\n"
    assert len(provider.requests) == 1
    # The parent's session keeps its delegate call, cut off.
    assert isinstance(history, list)
    assert [m["role"] for m in history] == ["user", "assistant", "user"]  # type: ignore[index,call-overload]
    [result] = history[2]["content"]  # type: ignore[index,call-overload]
    assert result["content"].startswith("Cancelled: ")  # type: ignore[index,union-attr]


async def test_cancel_stops_a_running_dispatch_keeping_what_ran_and_leaves_an_ended_one(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    async with hosting_a_staller(dev_env, tmp_path) as staller:
        orchestrator = staller.orchestrator
        running = asyncio.ensure_future(dispatching(orchestrator, "cancel-api"))
        await staller.stalled.wait()
        # Returns once the workflow has ended: its part is in the session by then.
        assert await orchestrator.cancel("cancel-api") is True
        history = await staller.store.read(SESSION, "messages")
        with pytest.raises(DispatchFailed, match="cancel-api was cancelled") as raised:
            await running
        assert await orchestrator.cancel("cancel-api") is False  # ended: left as it is
        with pytest.raises(WorkflowNotFound):
            await orchestrator.cancel("no-such-workflow")
        kept_both_tools(staller.tool_log, history)
        await goes_on_from(orchestrator, cancelled_part(raised.value), staller.tool_log)


class FinishesAnyway:
    """A turn of another kind: cancelled while it waits, it answers all the same."""

    def __init__(self) -> None:
        self.waiting = asyncio.Event()

    async def execute(self, input: TurnInput) -> TurnOutput:
        self.waiting.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            pass  # it finishes what it was doing
        return TurnOutput(
            message="done anyway", exit_reason="complete", metadata=TurnMetadata.zero()
        )


async def test_a_workflow_cancelled_while_a_turn_finishes_anyway_still_ends_cancelled(
    dev_env: WorkflowEnvironment,
) -> None:
    turn = FinishesAnyway()
    async with hosting(dev_env, {"main": turn}, InMemoryStore()) as orchestrator:
        running = asyncio.ensure_future(orchestrator.run("main", TASK, workflow_id="anyway-1"))
        await turn.waiting.wait()
        assert await orchestrator.cancel("anyway-1") is True
        with pytest.raises(DispatchFailed, match="anyway-1 was cancelled") as raised:
            await running
        description = await dev_env.client.get_workflow_handle("anyway-1").describe()

    assert description.status == WorkflowExecutionStatus.CANCELED
    assert cancelled_part(raised.value) is None  # it finished: nothing to go on from


async def test_a_turn_cancelled_before_any_tool_ran_leaves_a_record_saying_so(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    model = NeverAnswers()
    async with SqliteStore(tmp_path / "state.db") as store:
        agent = NeuronTurn(FunctionProvider(model.respond), state=store)
        async with hosting(dev_env, {"reader": agent}, store) as orchestrator:
            running = asyncio.ensure_future(dispatching(orchestrator, "cancel-early"))
            await model.asked.wait()
            assert await orchestrator.cancel("cancel-early") is True
            with pytest.raises(DispatchFailed, match="cancel-early was cancelled") as raised:
                await running
        [summary] = await store.turn_summaries(session="s1")
        record = await store.turn_record(summary.turn_id)
        history = await store.read(SESSION, "messages")

    assert record is not None
    assert (record.status, record.error, record.output) == ("failed", "CancelledError", None)
    assert history is None  # nothing ran that the session must hold
    assert cancelled_part(raised.value) is None


class OlderWorkflow:
    """A handle on a cancelled workflow whose worker predates the `neuron.kept` query."""

    id = "w-old"

    async def query(self, query: str, **options: object) -> object:
        raise WorkflowQueryFailedError(f"unknown queryType {query}")


async def test_a_cancellation_whose_kept_part_cannot_be_learned_says_so_and_carries_none() -> None:
    cancelled = asyncio.CancelledError()
    orchestrator = TemporalOrchestrator(address="127.0.0.1:1")
    await orchestrator._hand_on_kept_part(OlderWorkflow(), cancelled)  # type: ignore[arg-type]

    assert partial_of(cancelled) is None
    assert cancelled.__notes__ == [
        "what workflow w-old's turn kept is unknown: query 'neuron.kept' of workflow "
        "'w-old' failed: unknown queryType neuron.kept"
    ]


async def waiting_for_a_worker(
    orchestrator: TemporalOrchestrator, workflow_id: str, monkeypatch: pytest.MonkeyPatch
) -> asyncio.Future[object]:
    """A dispatch to a task queue no worker polls, once it waits for its workflow's end."""
    waiting = noting_calls(monkeypatch, "result")
    running = asyncio.ensure_future(dispatching(orchestrator, workflow_id))
    await waiting.wait()
    return running


def nobody(dev_env: WorkflowEnvironment, **options: Any) -> TemporalOrchestrator:
    """An orchestrator dispatching to a task queue no worker polls."""
    return TemporalOrchestrator(dev_env.client, task_queue=f"nobody-{uuid.uuid4()}", **options)


async def test_a_caller_cancelled_before_any_worker_picked_it_up_stops_at_once(
    dev_env: WorkflowEnvironment, monkeypatch: pytest.MonkeyPatch
) -> None:
    orchestrator = nobody(dev_env, stop_with_caller=True)
    running = await waiting_for_a_worker(orchestrator, "unpicked-caller", monkeypatch)
    running.cancel()
    # Bounded so that a wait for a worker that never comes fails here rather than hangs.
    async with asyncio.timeout(30):
        with pytest.raises(asyncio.CancelledError):
            await running
    description = await dev_env.client.get_workflow_handle("unpicked-caller").describe()

    # Nothing of it ran; it does not linger, nor run when a worker comes.
    assert description.status == WorkflowExecutionStatus.TERMINATED


async def test_cancel_of_a_workflow_no_worker_picked_up_ends_it_and_its_dispatch_at_once(
    dev_env: WorkflowEnvironment, monkeypatch: pytest.MonkeyPatch
) -> None:
    orchestrator = nobody(dev_env, pickup_timeout=None)
    running = await waiting_for_a_worker(orchestrator, "unpicked", monkeypatch)
    async with asyncio.timeout(30):
        assert await orchestrator.cancel("unpicked") is True
        with pytest.raises(DispatchFailed, match=r"^workflow unpicked was cancelled before any"):
            await running
    description = await dev_env.client.get_workflow_handle("unpicked").describe()

    assert description.status == WorkflowExecutionStatus.TERMINATED


async def test_a_workflow_cancelled_while_it_waits_to_retry_ends_cancelled_with_its_part(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    tool_log, store = tmp_path / "tools.log", InMemoryStore()
    # Rate limited after its tool ran, told to come back in an hour.
    agent = rate_limited_agent(tool_log, state=store, retry_after=3600.0)
    async with hosting(dev_env, {"reader": agent}, store) as orchestrator, asyncio.timeout(60):
        workflow_id = await orchestrator.start("reader", TASK, workflow_id="retry-wait-1")
        handle = dev_env.client.get_workflow_handle(workflow_id)
        # Temporal's own history, long-polled (no sleep): the retry's timer starts once the
        # part is carried out.
        async for event in handle.fetch_history_events(wait_new_event=True):
            if event.event_type == EventType.EVENT_TYPE_TIMER_STARTED:
                break
        assert await orchestrator.cancel(workflow_id) is True
        with pytest.raises(DispatchFailed, match="retry-wait-1 was cancelled") as raised:
            await orchestrator.result(workflow_id)
        described = await handle.describe()

    assert described.status == WorkflowExecutionStatus.CANCELED
    # The part stays in the session and goes to the caller; its tool ran once.
    assert tool_log.read_text(encoding="utf-8") == "read notes.txt\n"
    assert await session_roles(store) == ["user", "assistant", "user"]
    partial = cancelled_part(raised.value)
    assert partial is not None and partial.output.exit_reason == INTERRUPTED
    assert partial.continuation.session == "s1"
