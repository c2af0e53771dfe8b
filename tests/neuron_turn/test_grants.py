"""Effect tools under the caller's grant, and through the hook pipeline like any tool."""

from __future__ import annotations

import pytest
from pydantic import JsonValue

from layer0 import (
    DelegateEffect,
    EffectPolicy,
    HookAction,
    HookContext,
    HookPoint,
    ModifyToolInput,
    SessionScope,
    TurnConfig,
    WriteMemoryEffect,
)
from layer0.testing import RecordingHook
from neuron_hooks import FunctionHook, HookRegistry, ToolPolicyHook
from neuron_turn import NeuronTurnConfig, ToolResultPart

from .support import answer, ask, build, call, calls

HOSTILE: list[tuple[str, dict[str, JsonValue]]] = [
    ("write_memory", {"scope": "session:victim", "key": "messages", "value": []}),
    ("write_memory", {"scope": "session:victim", "key": "notes", "value": "pwned"}),
    ("delete_memory", {"scope": "session:victim2", "key": "messages"}),
    ("write_memory", {"scope": "global", "key": "k", "value": 1}),
    ("delete_memory", {"scope": "global", "key": "neuron-turn/sessions/victim"}),
    ("write_memory", {"scope": "workflow:wf-1", "key": "k", "value": 1}),
    ("write_memory", {"scope": "agent:wf-1/planner", "key": "k", "value": 1}),
    ("write_memory", {"scope": "custom:tenant", "key": "k", "value": 1}),
    ("write_memory", {"scope": "tenant:acme", "key": "k", "value": 1}),
    ("write_memory", {"scope": "session", "key": "messages", "value": []}),
    ("delete_memory", {"scope": "session", "key": "messages"}),
    ("delegate", {"agent": "root", "message": "rm -rf"}),
    ("handoff", {"agent": "admin", "state": None}),
    ("signal", {"target": "wf-other", "signal_type": "stop"}),
]


def results(request_messages: object) -> list[ToolResultPart]:
    assert isinstance(request_messages, tuple | list)
    return [p for p in request_messages[-1].content if isinstance(p, ToolResultPart)]


async def test_a_hostile_model_declares_nothing_and_reads_a_refusal_for_each_call() -> None:
    script = [calls(*(call(f"c{i}", n, **a) for i, (n, a) in enumerate(HOSTILE))), answer("ok")]
    turn, provider = build(script, config=NeuronTurnConfig(model="m", max_consecutive_failures=99))
    output = await turn.execute(ask(session="mine"))
    assert [e.type for e in output.effects] == ["custom"]  # only its own history append
    answers = results(provider.requests[1].messages)
    assert len(answers) == len(HOSTILE)
    for (name, _), result in zip(HOSTILE, answers, strict=True):
        assert result.is_error, name
        assert result.content.startswith("Refused:"), result.content
    assert "'session:victim'" in answers[1].content and "granted" in answers[1].content
    assert "conversation history" in answers[9].content


async def test_by_default_the_own_session_scope_is_granted() -> None:
    script = [calls(call("c1", "write_memory", key="todo", value=[1])), answer("ok")]
    turn, _ = build(script)
    output = await turn.execute(ask(session="mine"))
    assert output.effects[0] == WriteMemoryEffect(
        scope=SessionScope(id="mine"), key="todo", value=[1]
    )


async def test_without_a_session_the_own_session_scope_is_refused() -> None:
    script = [calls(call("c1", "write_memory", key="todo", value=1)), answer("ok")]
    turn, provider = build(script)
    output = await turn.execute(ask())
    assert output.effects == []
    assert "no session" in results(provider.requests[1].messages)[0].content


async def test_granted_scopes_and_kinds_are_offered_and_declared() -> None:
    grant = EffectPolicy.of(["global", "delegate:researcher"])
    script = [
        calls(
            call("c1", "write_memory", scope="global", key="k", value=1),
            call("c2", "delegate", agent="researcher", message="go"),
            call("c3", "delegate", agent="intruder", message="go"),
        ),
        answer("ok"),
    ]
    turn, provider = build(script, config=NeuronTurnConfig(model="m", effect_policy=grant))
    output = await turn.execute(ask(session="mine"))
    assert [e.type for e in output.effects] == ["write_memory", "delegate", "custom"]
    assert isinstance(output.effects[1], DelegateEffect)
    tools = {t.name: t.input_schema for t in provider.requests[0].tools}
    assert sorted(tools) == ["add", "delegate", "delete_memory", "echo", "write_memory"]
    assert tools["write_memory"]["properties"]["scope"]["enum"] == ["session", "global"]  # type: ignore[index]
    assert tools["delegate"]["properties"]["agent"]["enum"] == ["researcher"]  # type: ignore[index]
    refused = results(provider.requests[1].messages)[2]
    assert refused.is_error and "'intruder'" in refused.content


async def test_a_calls_policy_replaces_the_turns_default() -> None:
    wide = NeuronTurnConfig(model="m", effect_policy=EffectPolicy.everything())
    script = [calls(call("c1", "write_memory", scope="global", key="k", value=1)), answer("ok")]
    turn, provider = build(script, config=wide)
    narrow = TurnConfig(effect_policy=EffectPolicy())
    output = await turn.execute(ask(session="mine", config=narrow))
    assert [e.type for e in output.effects] == ["custom"]
    assert [t.name for t in provider.requests[0].tools] == [
        "add",
        "echo",
        "write_memory",
        "delete_memory",
    ]


async def test_wildcard_grants_describe_the_scope_instead_of_listing_it() -> None:
    grant = EffectPolicy.of(["session:*"])
    turn, provider = build([answer("ok")], config=NeuronTurnConfig(model="m", effect_policy=grant))
    await turn.execute(ask(session="mine"))
    scope = provider.requests[0].tools[2].input_schema["properties"]["scope"]  # type: ignore[index]
    assert "enum" not in scope  # type: ignore[operator]


@pytest.mark.parametrize("name", ["write_memory", "delete_memory", "delegate", "handoff", "signal"])
async def test_tool_policy_hook_denying_everything_blocks_effect_tools(name: str) -> None:
    arguments: dict[str, JsonValue] = {
        "write_memory": {"key": "k", "value": 1},
        "delete_memory": {"key": "k"},
        "delegate": {"agent": "a", "message": "m"},
        "handoff": {"agent": "a"},
        "signal": {"target": "wf", "signal_type": "t"},
    }[name]  # type: ignore[assignment]
    hooks = HookRegistry()
    hooks.add(ToolPolicyHook(deny=["*"]), name="policy")
    config = NeuronTurnConfig(model="m", effect_policy=EffectPolicy.everything())
    turn, provider = build(
        [calls(call("c1", name, **arguments)), answer("ok")], hooks=hooks, config=config
    )
    output = await turn.execute(ask(session="mine"))
    assert [e.type for e in output.effects] == ["custom"]
    (result,) = results(provider.requests[1].messages)
    assert result.is_error and result.content.startswith("Skipped:")
    assert output.metadata.tools_called[0].success is False


async def test_a_pre_tool_use_hook_rewrites_an_effect_tools_input_before_it_is_declared() -> None:
    async def redirect(ctx: HookContext) -> HookAction:
        assert ctx.tool_name == "write_memory"
        return ModifyToolInput(new_input={"scope": "session", "key": "safe", "value": 0})

    hooks = HookRegistry()
    hooks.add(FunctionHook(redirect, points=[HookPoint.PRE_TOOL_USE]))
    recorder = RecordingHook([HookPoint.POST_TOOL_USE])
    hooks.add(recorder, name="recorder")
    script = [
        calls(call("c1", "write_memory", scope="global", key="k", value=1)),
        answer("ok"),
    ]
    turn, _ = build(script, hooks=hooks)
    output = await turn.execute(ask(session="mine"))
    assert output.effects[0] == WriteMemoryEffect(
        scope=SessionScope(id="mine"), key="safe", value=0
    )
    assert [(c.tool_name, c.tool_result) for c in recorder.seen] == [
        ("write_memory", "Memory written.")
    ]
