"""LocalOrchestrator keeps a record of every turn it runs when its store keeps turn records."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from layer0 import (
    HISTORY_KEY,
    DelegateEffect,
    DispatchFailed,
    EffectPolicy,
    EffectRefused,
    HistoryAppend,
    ModelCallEntry,
    SessionScope,
    ToolCallEntry,
    TurnConfig,
    TurnInput,
    TurnRecord,
    WriteMemoryEffect,
    take_timeline,
    usd,
)
from layer0.testing import InMemoryStore
from neuron_orch_local import LocalOrchestrator
from neuron_state_sqlite import SqliteStore
from neuron_tool import ToolRegistry, tool
from neuron_turn import (
    NeuronTurn,
    ProviderAuthenticationError,
    ProviderRequest,
    ProviderResponse,
    TokenUsage,
    ToolUsePart,
    TurnDone,
)
from neuron_turn.testing import (
    FunctionProvider,
    ScriptedProvider,
    text_response,
    tool_call_response,
)

from ._doubles import NeverAnswers, ScriptTurn, user


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def calculator_turn(store: SqliteStore) -> NeuronTurn:
    provider = ScriptedProvider(
        [
            tool_call_response(
                ToolUsePart("c1", "add", {"a": 17, "b": 25}),
                usage=TokenUsage(30, 8),
                cost=usd("0.0004"),
            ),
            text_response("17 + 25 = 42", usage=TokenUsage(40, 6), cost=usd("0.0005")),
        ]
    )
    return NeuronTurn(provider, tools=ToolRegistry([add]), state=store)


async def only_record(store: SqliteStore) -> TurnRecord:
    summaries = await store.turn_summaries()
    assert len(summaries) == 1
    record = await store.turn_record(summaries[0].turn_id)
    assert record is not None
    return record


async def test_a_dispatched_turn_is_recorded_with_its_timeline_and_the_caller_sees_none(
    tmp_path: Path,
) -> None:
    async with SqliteStore(tmp_path / "state.db") as store:
        orchestrator = LocalOrchestrator({"main": calculator_turn(store)}, store)
        given = TurnInput(message="What is 17 + 25?", trigger="user", session="s")
        result = await orchestrator.run("main", given)
        record = await only_record(store)
    assert take_timeline(result.output) == (result.output, None)
    assert (record.status, record.session, record.agent, record.workflow_id) == (
        "executed",
        "s",
        "main",
        result.workflow_id,
    )
    assert record.input == given  # as the caller gave it, without the request
    assert record.output == result.output
    kinds = [(e.kind, getattr(e, "name", getattr(e, "model", None))) for e in record.timeline]
    assert kinds == [("model_call", "scripted"), ("tool_call", "add"), ("model_call", "scripted")]
    first = record.timeline[0]
    assert isinstance(first, ModelCallEntry) and first.cost == usd("0.0004")
    tool_call = record.timeline[1]
    assert isinstance(tool_call, ToolCallEntry) and tool_call.output == "42"


async def test_a_turn_with_an_effect_outside_its_policy_is_recorded_as_refused(
    tmp_path: Path,
) -> None:
    grab = WriteMemoryEffect(scope="global", key="k", value=1)
    async with SqliteStore(tmp_path / "state.db") as store:
        orchestrator = LocalOrchestrator({"main": ScriptTurn(grab)}, store)
        with pytest.raises(EffectRefused):
            await orchestrator.dispatch("main", user(session="s"))
        record = await only_record(store)
        assert await store.read("global", "k") is None
    assert record.status == "refused"
    assert record.error is not None and record.error.startswith("EffectRefused: ")
    assert record.output is not None and record.output.effects == [grab]
    assert record.timeline == []  # a Turn that keeps no timeline still gets its record


async def test_a_turn_that_raises_is_recorded_as_failed_with_the_error(tmp_path: Path) -> None:
    failing = ScriptedProvider(
        [ProviderAuthenticationError("bad key", provider="scripted", status_code=401)]
    )
    async with SqliteStore(tmp_path / "state.db") as store:
        orchestrator = LocalOrchestrator({"main": NeuronTurn(failing, state=store)}, store)
        with pytest.raises(DispatchFailed):
            await orchestrator.dispatch("main", user("hello", session="s"))
        record = await only_record(store)
    assert (record.status, record.output, record.session) == ("failed", None, "s")
    assert record.error is not None and "bad key" in record.error


async def test_a_delegated_turn_gets_its_own_record_in_its_own_workflow(tmp_path: Path) -> None:
    delegate = DelegateEffect(agent="helper", input=user("help"))
    async with SqliteStore(tmp_path / "state.db") as store:
        orchestrator = LocalOrchestrator(
            {"main": ScriptTurn(delegate), "helper": ScriptTurn(reply="helped")},
            store,
            default_policy=EffectPolicy.everything(),
        )
        result = await orchestrator.run("main", user())
        summaries = await store.turn_summaries()
        records = [await store.turn_record(s.turn_id) for s in summaries]
    by_agent = {r.agent: r for r in records if r is not None}
    assert set(by_agent) == {"main", "helper"}
    assert by_agent["main"].workflow_id == result.workflow_id
    assert by_agent["helper"].workflow_id == result.delegations[0].workflow_id
    assert all(r.status == "executed" for r in by_agent.values())


async def test_a_store_without_turn_records_gets_the_turns_output_unchanged() -> None:
    turn = ScriptTurn(reply="plain")
    orchestrator = LocalOrchestrator({"main": turn}, InMemoryStore())
    output = await orchestrator.dispatch("main", user(metadata={"trace": "t"}))
    assert output.message.as_text() == "plain"
    assert turn.inputs[0].metadata == {"trace": "t"}  # no timeline asked for


async def test_a_record_that_cannot_be_stored_after_a_failure_is_noted_on_the_first_error(
    tmp_path: Path,
) -> None:
    grab = WriteMemoryEffect(scope="global", key="k", value=1)
    store = SqliteStore(tmp_path / "state.db")
    async with store:
        await store.write("global", "seed", 1)
    async with SqliteStore(tmp_path / "state.db", read_only=True) as reader:
        orchestrator = LocalOrchestrator({"main": ScriptTurn(grab)}, reader)
        with pytest.raises(EffectRefused) as caught:
            await orchestrator.dispatch("main", user())
    assert any("turn record could not be stored" in note for note in caught.value.__notes__)


async def test_a_streamed_dispatch_is_recorded_and_its_listeners_see_no_timeline(
    tmp_path: Path,
) -> None:
    async with SqliteStore(tmp_path / "state.db") as store:
        orchestrator = LocalOrchestrator({"main": calculator_turn(store)}, store)
        given = TurnInput(message="What is 17 + 25?", trigger="user", session="s")
        async with orchestrator.stream("main", given) as events:
            seen = [item.event async for item in events]
        record = await only_record(store)
    done = seen[-1]
    assert isinstance(done, TurnDone)
    assert take_timeline(done.output) == (done.output, None)
    assert done.output == events.result.output == record.output
    assert [e.kind for e in record.timeline] == ["model_call", "tool_call", "model_call"]


class CountingStore(SqliteStore):
    """A SqliteStore that counts how turn records reach it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.alone = 0
        self.with_effects = 0

    async def record_turn(self, record: TurnRecord) -> None:
        self.alone += 1
        await super().record_turn(record)

    async def apply_recorded(self, effects: Any, record: TurnRecord) -> None:
        self.with_effects += 1
        await super().apply_recorded(effects, record)


async def test_a_turn_with_a_session_is_recorded_in_the_transaction_of_its_history(
    tmp_path: Path,
) -> None:
    async with CountingStore(tmp_path / "state.db") as store:
        orchestrator = LocalOrchestrator({"main": calculator_turn(store)}, store)
        await orchestrator.dispatch("main", user("What is 17 + 25?", session="s"))
        record = await only_record(store)
        assert (store.with_effects, store.alone) == (1, 0)
    assert record.status == "executed"


async def test_a_history_append_that_fails_leaves_only_the_failure_recorded(
    tmp_path: Path,
) -> None:
    other = {"role": "user", "content": "another run's"}
    async with CountingStore(tmp_path / "state.db") as store:

        async def meanwhile(request: ProviderRequest) -> ProviderResponse:
            # Another run appends to the session while this turn thinks.
            await store.append_history(HistoryAppend(session="s", turn_id="o", messages=[other]))
            return text_response("late")

        turn = NeuronTurn(FunctionProvider(meanwhile), state=store)
        orchestrator = LocalOrchestrator({"main": turn}, store)
        config = TurnConfig(session_conflict="fail")
        with pytest.raises(DispatchFailed):
            await orchestrator.dispatch("main", user("mine", session="s", config=config))
        record = await only_record(store)
        history = await store.read(SessionScope(id="s"), HISTORY_KEY)
    assert record.status == "failed" and "HistoryConflict" in (record.error or "")
    assert history == [other]  # neither this turn's messages nor its "executed" record


async def test_a_dispatch_cancelled_before_any_tool_ran_leaves_a_record_saying_so(
    tmp_path: Path,
) -> None:
    model = NeverAnswers()
    async with SqliteStore(tmp_path / "state.db") as store:
        turn = NeuronTurn(FunctionProvider(model.respond))
        orchestrator = LocalOrchestrator({"main": turn}, store)
        dispatch = asyncio.ensure_future(
            orchestrator.dispatch("main", TurnInput(message="hi", trigger="user", session="s"))
        )
        await model.asked.wait()
        dispatch.cancel()
        with pytest.raises(asyncio.CancelledError):
            await dispatch
        record = await only_record(store)

    assert (record.status, record.error, record.output) == ("failed", "CancelledError", None)
    assert record.session == "s" and record.input.message.as_text() == "hi"
