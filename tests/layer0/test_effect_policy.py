"""EffectPolicy grants, effect_refusal, the append_history effect and TurnConfig's extensions."""

from __future__ import annotations

import json

import pytest

from layer0 import (
    APPEND_HISTORY,
    AgentScope,
    CustomEffect,
    CustomScope,
    DelegateEffect,
    DeleteMemoryEffect,
    Effect,
    EffectPolicy,
    HandoffEffect,
    HistoryAppend,
    LogEffect,
    LogLevel,
    SessionScope,
    SignalEffect,
    SignalPayload,
    TurnConfig,
    TurnInput,
    WorkflowScope,
    WriteMemoryEffect,
    effect_refusal,
)

FOREIGN: list[Effect] = [
    WriteMemoryEffect(scope=SessionScope(id="victim"), key="messages", value=[]),
    DeleteMemoryEffect(scope="global", key="k"),
    WriteMemoryEffect(scope=WorkflowScope(id="wf"), key="k", value=1),
    WriteMemoryEffect(scope=AgentScope(workflow="wf", agent="a"), key="k", value=1),
    WriteMemoryEffect(scope=CustomScope(name="tenant"), key="k", value=1),
    DelegateEffect(agent="a", input=TurnInput(message="m", trigger="task")),
    HandoffEffect(agent="a", state=None),
    SignalEffect(target="wf", payload=SignalPayload(signal_type="t", data=None)),
    HistoryAppend(session="victim", turn_id="t", messages=[{}]).effect(),
]


@pytest.mark.parametrize("effect", FOREIGN, ids=lambda e: e.type)
def test_the_default_policy_refuses_everything_beyond_the_own_session(effect: Effect) -> None:
    reason = effect_refusal(EffectPolicy(), effect, "mine")
    assert reason is not None and "not granted" in reason and "own session only" in reason
    assert effect_refusal(EffectPolicy.everything(), effect, "mine") is None


@pytest.mark.parametrize(
    "effect",
    [
        WriteMemoryEffect(scope=SessionScope(id="mine"), key="k", value=1),
        DeleteMemoryEffect(scope=SessionScope(id="mine"), key="k"),
        HistoryAppend(session="mine", turn_id="t", messages=[{}]).effect(),
        LogEffect(level=LogLevel.INFO, message="hi"),
        CustomEffect(effect_type="notify", data=None),
    ],
    ids=lambda e: e.type,
)
def test_the_own_session_logs_and_handled_custom_effects_are_always_allowed(
    effect: Effect,
) -> None:
    assert effect_refusal(EffectPolicy(), effect, "mine") is None


def test_grants_name_scopes_and_targets_exactly_or_by_wildcard() -> None:
    policy = EffectPolicy.of(["session:*", "workflow:wf-1", "delegate:researcher", "signal"])
    assert policy.allows_scope(SessionScope(id="any"), None)
    assert policy.allows_scope(WorkflowScope(id="wf-1"), None)
    assert not policy.allows_scope(WorkflowScope(id="wf-2"), None)
    assert not policy.allows_scope("global", None)
    assert policy.allows("delegate", "researcher") and not policy.allows("delegate", "x")
    assert policy.allows("signal", "anything") and not policy.grants_kind("handoff")
    assert policy.targets("delegate") == ("researcher",) and policy.targets("signal") is None


def test_reading_is_granted_apart_from_writing() -> None:
    policy = EffectPolicy.of(["global", "read:session:*", "read:agent:wf/a"])
    assert policy.allows_scope("global", "mine") and not policy.allows_read("global", "mine")
    assert policy.allows_read(SessionScope(id="other"), "mine")
    assert not policy.allows_scope(SessionScope(id="other"), "mine")
    assert policy.allows_read(AgentScope(workflow="wf", agent="a"), None)
    assert not policy.allows_read(AgentScope(workflow="wf", agent="b"), None)
    assert policy.read_grants() == ("session:*", "agent:wf/a")
    assert policy.memory_grants() == ("global",)


def test_by_default_only_the_own_session_is_readable() -> None:
    policy = EffectPolicy()
    assert policy.allows_read(SessionScope(id="mine"), "mine")
    for scope in (SessionScope(id="x"), "global", WorkflowScope(id="w"), CustomScope(name="c")):
        assert not policy.allows_read(scope, "mine")
    assert not policy.allows_read(SessionScope(id="mine"), None)
    everything = EffectPolicy.everything()
    assert everything.allows_read(CustomScope(name="c"), None) and everything.read_grants() == (
        "*",
    )
    assert EffectPolicy.of(["read:*"]).allows_read("global", None)


@pytest.mark.parametrize(
    ("grant", "problem"),
    [
        ("workflow", "workflow:<id>"),
        ("session:", "session:<id>"),
        ("agent:wf", "agent:<workflow>/<agent>"),
        ("admin", "unknown kind 'admin'"),
        ("Global", "unknown kind"),
        ("read:", "a read grant names memory scopes"),
        ("read:delegate", "a read grant names memory scopes"),
        ("read:read:global", "a read grant names memory scopes"),
        ("read:workflow", "workflow:<id>"),
        ("read:agent:wf", "agent:<workflow>/<agent>"),
    ],
)
def test_a_malformed_grant_is_refused_saying_why(grant: str, problem: str) -> None:
    with pytest.raises(ValueError, match="bad grant") as raised:
        EffectPolicy.of([grant])
    assert problem in str(raised.value) and not str(raised.value).startswith("Value error")


def test_a_policy_travels_as_a_list_of_grants() -> None:
    policy = EffectPolicy.of(["global", "delegate:a"])
    assert policy.model_dump_json() == '{"grants":["global","delegate:a"]}'
    assert EffectPolicy.model_validate_json(policy.model_dump_json()) == policy


def test_turn_config_extensions_are_written_only_when_set() -> None:
    assert set(json.loads(TurnConfig().model_dump_json())) == {
        "max_turns",
        "max_cost",
        "max_duration",
        "model",
        "allowed_tools",
        "system_addendum",
    }
    config = TurnConfig(effect_policy=EffectPolicy.of(["global"]), session_conflict="fail")
    wire = json.loads(config.model_dump_json())
    assert wire["effect_policy"] == {"grants": ["global"]} and wire["session_conflict"] == "fail"
    assert TurnConfig.model_validate(wire) == config


def test_append_history_is_a_custom_effect_with_sorted_data_keys() -> None:
    append = HistoryAppend(session="s", turn_id="t-1", messages=[{"role": "user", "content": "hi"}])
    effect = append.effect()
    assert effect.effect_type == APPEND_HISTORY
    assert effect.model_dump_json() == (
        '{"type":"custom","effect_type":"append_history","data":{"expected_length":null,'
        '"messages":[{"content":"hi","role":"user"}],"session":"s","turn_id":"t-1"}}'
    )
    assert HistoryAppend.from_effect(effect) == append


@pytest.mark.parametrize(
    "data",
    [{"session": "s", "turn_id": "t", "messages": []}, {"session": "s", "messages": [1]}, "x"],
)
def test_a_malformed_append_is_refused_naming_the_problem(data: object) -> None:
    effect = CustomEffect(effect_type=APPEND_HISTORY, data=data)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="malformed append_history"):
        HistoryAppend.from_effect(effect)
    assert "malformed" in (effect_refusal(EffectPolicy(), effect, "s") or "")
