"""The five effect tools: declared, never executed; bad arguments declare nothing."""

from __future__ import annotations

import pytest
from pydantic import JsonValue

from layer0 import (
    AgentScope,
    CustomScope,
    DelegateEffect,
    DeleteMemoryEffect,
    HandoffEffect,
    Scope,
    SessionScope,
    SignalEffect,
    SignalPayload,
    TurnInput,
    WorkflowScope,
    WriteMemoryEffect,
)
from neuron_turn import parse_scope

from .support import TRUSTING, answer, appended, ask, build, call, calls


@pytest.mark.parametrize(
    ("text", "scope"),
    [
        ("global", "global"),
        ("session:s-1", SessionScope(id="s-1")),
        ("workflow:wf-9", WorkflowScope(id="wf-9")),
        ("agent:wf-1/planner", AgentScope(workflow="wf-1", agent="planner")),
        ("tenant:acme", CustomScope(name="tenant:acme")),
        ("agent:no-slash", CustomScope(name="agent:no-slash")),
        ("session:", CustomScope(name="session:")),
        ("Global", CustomScope(name="Global")),
    ],
)
def test_scope_strings_map_to_layer0_scopes(text: str, scope: Scope) -> None:
    assert parse_scope(text) == scope


GOOD = [
    (
        "write_memory",
        {"scope": "session:s1", "key": "k", "value": {"x": [1]}},
        WriteMemoryEffect(scope=SessionScope(id="s1"), key="k", value={"x": [1]}),
        "Memory written.",
    ),
    (
        "delete_memory",
        {"scope": "global", "key": "k"},
        DeleteMemoryEffect(scope="global", key="k"),
        "Memory deleted.",
    ),
    (
        "delegate",
        {"agent": "researcher", "message": "find X"},
        DelegateEffect(agent="researcher", input=TurnInput(message="find X", trigger="task")),
        "Delegation requested.",
    ),
    (
        "handoff",
        {"agent": "closer", "state": {"stage": 3}},
        HandoffEffect(agent="closer", state={"stage": 3}),
        "Handoff initiated.",
    ),
    (
        "signal",
        {"target": "wf-2", "signal_type": "done", "data": 7},
        SignalEffect(target="wf-2", payload=SignalPayload(signal_type="done", data=7)),
        "Signal sent.",
    ),
]


@pytest.mark.parametrize(
    ("name", "arguments", "effect", "confirmation"), GOOD, ids=[g[0] for g in GOOD]
)
async def test_effect_tool_declares_its_effect_and_confirms(
    name: str, arguments: dict[str, JsonValue], effect: object, confirmation: str
) -> None:
    turn, _ = build([calls(call("c1", name, **arguments)), answer("ok")], config=TRUSTING)
    output = await turn.execute(ask(session="s"))
    assert output.effects[0] == effect
    history = appended(output).messages
    (result,) = history[2]["content"]  # type: ignore[call-overload,index]
    assert result == {
        "type": "tool_result",
        "tool_use_id": "c1",
        "content": confirmation,
        "is_error": False,
    }
    assert output.metadata.tools_called[0].success is True


BAD = [
    ("write_memory", {"scope": "global", "key": "k"}, "value"),
    ("write_memory", {"scope": 5, "key": "k", "value": 1}, "scope"),
    ("delete_memory", {"scope": "global", "key": ""}, "key"),
    ("delegate", {"agent": "a"}, "message"),
    ("handoff", {"state": {}}, "agent"),
    ("signal", {"target": "wf", "signal_type": "t", "extra": 1}, "extra"),
]


@pytest.mark.parametrize(("name", "arguments", "field"), BAD)
async def test_bad_arguments_give_an_error_result_and_no_effect(
    name: str, arguments: dict[str, JsonValue], field: str
) -> None:
    turn, provider = build([calls(call("c1", name, **arguments)), answer("ok")], config=TRUSTING)
    output = await turn.execute(ask())
    assert output.effects == []
    result = provider.requests[1].messages[-1].content[0]
    assert result.is_error is True  # type: ignore[union-attr]
    assert name in result.content and field in result.content  # type: ignore[union-attr]


async def test_effect_tools_are_never_executed_even_if_a_tool_has_the_name() -> None:
    from neuron_tool import tool

    ran: list[str] = []

    @tool(name="write_memory")
    async def impostor(scope: str, key: str, value: int) -> str:
        """Must never run."""
        ran.append("ran")
        return "wrote"

    script = [calls(call("c1", "write_memory", scope="global", key="k", value=1)), answer("ok")]
    turn, _ = build(script, tools=[impostor], config=TRUSTING)
    output = await turn.execute(ask())
    assert ran == []
    assert isinstance(output.effects[0], WriteMemoryEffect)


async def test_effects_keep_declaration_order_across_rounds() -> None:
    script = [
        calls(
            call("c1", "write_memory", scope="global", key="a", value=1),
            call("c2", "signal", target="wf", signal_type="s"),
        ),
        calls(call("c3", "delete_memory", scope="global", key="a")),
        answer("ok"),
    ]
    turn, _ = build(script, config=TRUSTING)
    output = await turn.execute(ask())
    assert [e.type for e in output.effects] == ["write_memory", "signal", "delete_memory"]


async def test_disallowed_effect_tool_is_refused_and_declares_nothing() -> None:
    from layer0 import TurnConfig

    script = [calls(call("c1", "handoff", agent="x", state=None)), answer("ok")]
    turn, provider = build(script)
    output = await turn.execute(ask(config=TurnConfig(allowed_tools=["add"])))
    assert output.effects == []
    assert output.exit_reason == "complete"
    result = provider.requests[1].messages[-1].content[0]
    assert "not allowed" in result.content  # type: ignore[union-attr]


async def test_with_effect_tools_off_a_call_to_one_declares_nothing() -> None:
    from neuron_turn import NeuronTurnConfig

    script = [calls(call("c1", "write_memory", scope="global", key="k", value=1)), answer("ok")]
    turn, provider = build(script, config=NeuronTurnConfig(effect_tools=False))
    output = await turn.execute(ask())
    assert output.effects == []
    result = provider.requests[1].messages[-1].content[0]
    assert result.is_error  # type: ignore[union-attr]
    assert "no tool named 'write_memory'" in result.content  # type: ignore[union-attr]
    assert "available: add, echo" in result.content  # type: ignore[union-attr]
