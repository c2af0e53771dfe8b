from __future__ import annotations

import asyncio
import logging

import pytest

from layer0 import (
    CustomEffect,
    DelegateEffect,
    DeleteMemoryEffect,
    DispatchFailed,
    Effect,
    EffectPolicy,
    HandoffEffect,
    HistoryAppend,
    LogEffect,
    LogLevel,
    QueryPayload,
    SessionScope,
    SignalEffect,
    SignalPayload,
    TurnInput,
    WorkflowNotFound,
    WriteMemoryEffect,
)
from layer0.testing import EchoTurn, InMemoryStore
from neuron_orch_local import (
    LOGGER_NAME,
    TRACE,
    CustomEffectHandler,
    EffectContext,
    LocalOrchestrator,
)
from neuron_turn import NeuronTurn, NeuronTurnConfig, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from ..orch_temporal.agents import StuckAgent, declaring_lead
from ._doubles import RecordingStore, ScriptTurn, session_roles, trusting, user

SCOPE = SessionScope(id="s")


def write(key: str, value: object = 1) -> WriteMemoryEffect:
    return WriteMemoryEffect.model_validate({"scope": {"session": "s"}, "key": key, "value": value})


def delete(key: str) -> DeleteMemoryEffect:
    return DeleteMemoryEffect(scope=SCOPE, key=key)


def log(message: str, level: LogLevel = LogLevel.INFO, data: object = None) -> LogEffect:
    return LogEffect.model_validate({"level": level, "message": message, "data": data})


def custom(effect_type: str, data: object = None) -> CustomEffect:
    return CustomEffect.model_validate({"effect_type": effect_type, "data": data})


class EventLog(logging.Handler):
    def __init__(self, events: list[str]) -> None:
        super().__init__(level=logging.DEBUG)
        self.events = events

    def emit(self, record: logging.LogRecord) -> None:
        self.events.append(f"log {record.getMessage()}")


@pytest.fixture
def events() -> list[str]:
    return []


@pytest.fixture
def log_events(events: list[str]) -> object:
    logger = logging.getLogger(LOGGER_NAME)
    handler = EventLog(events)
    logger.addHandler(handler)
    previous = logger.level
    logger.setLevel(logging.DEBUG)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(previous)


def recorder(events: list[str], orchestrator: list[LocalOrchestrator]) -> CustomEffectHandler:
    async def handle(effect: CustomEffect, context: EffectContext) -> None:
        inbox = await orchestrator[0].query("target", QueryPayload(query_type="inbox", params=None))
        assert isinstance(inbox, list)
        events.append(f"custom {effect.data} (inbox {len(inbox)})")

    return handle


@pytest.mark.usefixtures("log_events")
async def test_effects_run_in_declaration_order_with_memory_applied_at_the_first_write(
    events: list[str],
) -> None:
    effects: list[Effect] = [
        log("first"),
        custom("mark", "one"),
        write("k1"),
        SignalEffect(target="target", payload=SignalPayload(signal_type="go", data=None)),
        custom("mark", "two"),
        DelegateEffect(agent="child", input=TurnInput(message="task", trigger="task")),
        delete("k2"),
        log("last"),
    ]
    holder: list[LocalOrchestrator] = []
    orchestrator = trusting(
        {
            "a": ScriptTurn(*effects),
            "child": ScriptTurn(events=events, name="child"),
            "target": EchoTurn(),
        },
        RecordingStore(events),
        custom_handlers={"mark": recorder(events, holder)},
    )
    holder.append(orchestrator)
    await orchestrator.dispatch("target", user(), workflow_id="target")
    await orchestrator.dispatch("a", user())
    assert events == [
        "log first",
        "custom one (inbox 0)",
        "write k1",
        "delete k2",
        "custom two (inbox 1)",
        "turn child",
        "log last",
    ]


async def test_write_and_delete_memory_reach_the_store() -> None:
    store = InMemoryStore()
    await store.write(SCOPE, "old", "x")
    orchestrator = trusting({"a": ScriptTurn(write("new", {"v": [1, 2]}), delete("old"))}, store)
    await orchestrator.dispatch("a", user())
    assert await store.read(SCOPE, "new") == {"v": [1, 2]}
    assert await store.read(SCOPE, "old") is None


async def test_signal_effect_reaches_the_target_inbox() -> None:
    payload = SignalPayload(signal_type="done", data={"n": 1})
    orchestrator = trusting(
        {"a": ScriptTurn(SignalEffect(target="t", payload=payload)), "t": EchoTurn()},
        InMemoryStore(),
    )
    await orchestrator.dispatch("t", user(), workflow_id="t")
    await orchestrator.dispatch("a", user())
    assert orchestrator.workflow("t").inbox == (payload,)


async def test_signal_effect_to_an_unknown_workflow_raises_before_any_effect_runs() -> None:
    store = InMemoryStore()
    effects: list[Effect] = [
        write("k"),
        SignalEffect(target="ghost", payload=SignalPayload(signal_type="x", data=None)),
    ]
    orchestrator = trusting({"a": ScriptTurn(*effects)}, store)
    with pytest.raises(WorkflowNotFound, match=r"agent 'a' .* signals workflow 'ghost'") as caught:
        await orchestrator.dispatch("a", user())
    assert caught.value.workflow == "ghost"
    assert await store.read(SCOPE, "k") is None


@pytest.mark.parametrize(
    ("level", "stdlib"),
    [
        (LogLevel.TRACE, TRACE),
        (LogLevel.DEBUG, logging.DEBUG),
        (LogLevel.INFO, logging.INFO),
        (LogLevel.WARN, logging.WARNING),
        (LogLevel.ERROR, logging.ERROR),
    ],
)
async def test_log_effect_goes_to_stdlib_logging_with_its_data(
    caplog: pytest.LogCaptureFixture, level: LogLevel, stdlib: int
) -> None:
    caplog.set_level(TRACE, logger=LOGGER_NAME)
    effect = log("100% done", level, {"step": 3})
    orchestrator = trusting({"a": ScriptTurn(effect)}, InMemoryStore())
    await orchestrator.dispatch("a", user(), workflow_id="w")
    (record,) = [r for r in caplog.records if r.name == LOGGER_NAME]
    assert record.levelno == stdlib
    assert record.getMessage() == "100% done"
    assert record.__dict__["data"] == {"step": 3}
    assert record.__dict__["agent"] == "a"
    assert record.__dict__["workflow_id"] == "w"
    assert record.__dict__["log_level"] == level.value


async def test_log_effect_below_the_logger_level_is_not_emitted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER_NAME)
    effects = (log("hidden", LogLevel.TRACE), log("shown", LogLevel.INFO))
    orchestrator = trusting({"a": ScriptTurn(*effects)}, InMemoryStore())
    await orchestrator.dispatch("a", user())
    assert [r.getMessage() for r in caplog.records if r.name == LOGGER_NAME] == ["shown"]


async def test_custom_effect_goes_to_the_handler_of_its_type() -> None:
    seen: list[tuple[CustomEffect, EffectContext]] = []

    async def notify(effect: CustomEffect, context: EffectContext) -> None:
        seen.append((effect, context))

    effect = custom("notify", {"to": "ops"})
    orchestrator = trusting(
        {"a": ScriptTurn(effect, custom("other"))},
        InMemoryStore(),
        custom_handlers={"notify": notify, "other": notify},
    )
    await orchestrator.dispatch("a", user(), workflow_id="w")
    assert seen[0] == (effect, EffectContext(workflow_id="w", agent="a"))
    assert [e.effect_type for e, _ in seen] == ["notify", "other"]


async def test_unknown_custom_type_fails_naming_it_and_registered_ones_before_anything_runs() -> (
    None
):
    async def notify(effect: CustomEffect, context: EffectContext) -> None:
        raise AssertionError("must not run")

    store = InMemoryStore()
    orchestrator = trusting(
        {"a": ScriptTurn(write("k"), custom("notify"), custom("page"))},
        store,
        custom_handlers={"notify": notify, "audit": notify},
    )
    with pytest.raises(
        DispatchFailed,
        match=r"type 'page', which has no handler; registered types: audit, notify",
    ):
        await orchestrator.dispatch("a", user())
    assert await store.read(SCOPE, "k") is None


async def test_unknown_custom_type_with_no_handlers_says_none() -> None:
    orchestrator = trusting({"a": ScriptTurn(custom("page"))}, InMemoryStore())
    with pytest.raises(DispatchFailed, match=r"registered types: none"):
        await orchestrator.dispatch("a", user())


async def test_custom_handler_error_fails_the_dispatch_with_the_cause_chained() -> None:
    error = ConnectionError("smtp down")

    async def notify(effect: CustomEffect, context: EffectContext) -> None:
        raise error

    orchestrator = trusting(
        {"a": ScriptTurn(custom("notify"))}, InMemoryStore(), custom_handlers={"notify": notify}
    )
    with pytest.raises(
        DispatchFailed, match=r"handler of custom effect 'notify' .* smtp down"
    ) as caught:
        await orchestrator.dispatch("a", user())
    assert caught.value.__cause__ is error


async def test_two_handoffs_in_one_turn_fail_before_anything_runs() -> None:
    store = InMemoryStore()
    other = ScriptTurn()
    turn = ScriptTurn(
        write("k"), HandoffEffect(agent="b", state=None), HandoffEffect(agent="c", state=None)
    )
    orchestrator = trusting({"a": turn, "b": other, "c": other}, store)
    with pytest.raises(DispatchFailed, match=r"declared 2 handoffs \(to 'b', 'c'\)"):
        await orchestrator.dispatch("a", user())
    assert other.inputs == []
    assert await store.read(SCOPE, "k") is None


async def test_a_delegation_failing_before_the_turns_memory_still_has_it_stored() -> None:
    store = InMemoryStore()
    orchestrator = trusting(
        {"lead": declaring_lead(store), "child": StuckAgent()}, store, answer_delegations=False
    )

    with pytest.raises(DispatchFailed, match="the child broke"):
        await orchestrator.dispatch("lead", user("tidy up", session="s1"))

    # The lead's turn happened: its exchange and its write stand.
    assert await session_roles(store) == ["user", "assistant", "user", "assistant"]
    assert await store.read(SessionScope(id="s1"), "k1") == 1


async def test_a_dispatch_cancelled_in_a_delegation_before_the_turns_memory_still_stores_it() -> (
    None
):
    store, reached = InMemoryStore(), asyncio.Event()
    agents = {"lead": declaring_lead(store), "child": StuckAgent(reached)}
    orchestrator = trusting(agents, store, answer_delegations=False)
    tidy = user("tidy up", session="s1")
    dispatching = asyncio.ensure_future(orchestrator.dispatch("lead", tidy))
    await reached.wait()
    dispatching.cancel()
    with pytest.raises(asyncio.CancelledError):
        await dispatching

    assert await session_roles(store) == ["user", "assistant", "user", "assistant"]
    assert await store.read(SessionScope(id="s1"), "k1") == 1


async def test_a_custom_handler_failing_before_the_turns_writes_still_has_them_applied() -> None:
    async def notify(effect: CustomEffect, context: EffectContext) -> None:
        raise ConnectionError("smtp down")

    store = InMemoryStore()
    orchestrator = trusting(
        {"a": ScriptTurn(custom("notify"), write("k1"), delete("k2"))},
        store,
        custom_handlers={"notify": notify},
    )
    await store.write(SCOPE, "k2", 2)

    with pytest.raises(DispatchFailed, match="smtp down"):
        await orchestrator.dispatch("a", user())

    assert (await store.read(SCOPE, "k1"), await store.read(SCOPE, "k2")) == (1, None)


class SlowAppend(InMemoryStore):
    """Appends history only once `release` is set; `appending` says one waits."""

    def __init__(self) -> None:
        super().__init__()
        self.appending, self.release = asyncio.Event(), asyncio.Event()

    async def append_history(self, append: HistoryAppend) -> int:
        self.appending.set()
        await self.release.wait()
        return await super().append_history(append)


async def test_a_dispatch_cancelled_as_the_turns_memory_is_applied_applies_all_of_it() -> None:
    store = SlowAppend()
    turn = NeuronTurn(
        ScriptedProvider(
            [
                tool_call_response(ToolUsePart("c1", "write_memory", {"key": "k1", "value": 1})),
                text_response("noted"),
            ]
        ),
        state=store,
        config=NeuronTurnConfig(effect_policy=EffectPolicy.everything()),
    )
    orchestrator = trusting({"main": turn}, store)
    dispatching = asyncio.ensure_future(orchestrator.dispatch("main", user(session="s1")))
    await store.appending.wait()  # its write is in; the append waits
    dispatching.cancel()
    store.release.set()
    with pytest.raises(asyncio.CancelledError):
        await dispatching

    # All or none, and the turn happened: all of it.
    assert await store.read(SessionScope(id="s1"), "k1") == 1
    assert await session_roles(store) == ["user", "assistant", "user", "assistant"]
