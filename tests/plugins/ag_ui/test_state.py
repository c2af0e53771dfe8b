"""Shared state and context: what the frontend sends reaches the tools and the model,
and the state a tool sends reaches the client as STATE_SNAPSHOT or STATE_DELTA."""

from __future__ import annotations

from typing import Any

import pytest
from ag_ui.core import EventType
from neuron_ag_ui import (
    ContextEntry,
    RunLimits,
    StateError,
    frontend_context,
    frontend_instructions,
    send_state,
    send_state_delta,
    shared_state,
)
from pydantic import JsonValue

from neuron_tool import RunContext, tool
from neuron_turn import NeuronTurnConfig, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from ._server import assistant, of, run, run_input, serving, tool_message, types, user

SEEN: list[tuple[JsonValue, tuple[ContextEntry, ...]]] = []
CART: dict[str, JsonValue] = {"items": ["tea"]}
CONTEXT = [{"description": "The page the user is on", "value": "checkout"}]
PICK = {
    "name": "pick_colour",
    "description": "Ask the user to pick a colour.",
    "parameters": {"type": "object", "properties": {}},
}


@tool
async def look(ctx: RunContext[Any]) -> str:
    """Look at what the frontend shares."""
    SEEN.append((shared_state(ctx), frontend_context(ctx)))
    return "looked"


@tool
async def add_item(ctx: RunContext[Any], item: str) -> str:
    """Add an item to the cart."""
    state = shared_state(ctx)
    assert isinstance(state, dict) and isinstance(state["items"], list)
    await send_state(ctx, {**state, "items": [*state["items"], item]})
    await send_state_delta(ctx, [{"op": "add", "path": "/items/-", "value": item}])
    return f"added {item}"


@tool
async def break_state(ctx: RunContext[Any]) -> str:
    """Send a patch that is no JSON Patch."""
    await send_state_delta(ctx, [{"op": "frobnicate", "path": "/x"}])
    return "unreachable"


def looking(*then: Any) -> ScriptedProvider:
    return ScriptedProvider(
        [tool_call_response(ToolUsePart("c1", "look", {})), text_response("Seen."), *then]
    )


async def test_a_tool_reads_the_state_and_context_the_frontend_sent_with_the_run() -> None:
    SEEN.clear()
    async with serving(looking(), tools=[look]) as served:
        body = run_input("t1", user("What is in my cart?"), state=CART, context=CONTEXT)
        events = await run(served, body)

    assert types(events)[-1] == "RUN_FINISHED"
    assert SEEN == [(CART, (ContextEntry("The page the user is on", "checkout"),))]


async def test_a_run_without_state_or_context_reads_none_and_instructs_nothing() -> None:
    SEEN.clear()
    model = looking()
    config = NeuronTurnConfig(model="m", system="Be brief.", instructions=frontend_instructions)
    async with serving(model, tools=[look], config=config) as served:
        await run(served, run_input("t1", user("Hi")))

    assert SEEN == [(None, ())]
    assert model.requests[0].system == "Be brief."


async def test_frontend_instructions_tell_the_model_the_context_and_the_state() -> None:
    model = ScriptedProvider([text_response("Tea it is.")])
    config = NeuronTurnConfig(model="m", instructions=frontend_instructions)
    async with serving(model, config=config) as served:
        await run(served, run_input("t1", user("Hi"), state=CART, context=CONTEXT))

    system = model.requests[0].system or ""
    assert "- The page the user is on: checkout" in system
    assert 'The state shared with the application (JSON): {"items": ["tea"]}' in system


async def test_a_tools_state_goes_to_the_client_as_a_snapshot_and_a_delta_while_it_runs() -> None:
    model = ScriptedProvider(
        [tool_call_response(ToolUsePart("c1", "add_item", {"item": "milk"})), text_response("Ok")]
    )
    async with serving(model, tools=[add_item]) as served:
        events = await run(served, run_input("t1", user("Add milk"), state=CART))

    kinds = types(events)
    assert kinds.index("TOOL_CALL_END") < kinds.index("STATE_SNAPSHOT")
    assert kinds.index("STATE_SNAPSHOT") < kinds.index("STATE_DELTA")
    assert kinds.index("STATE_DELTA") < kinds.index("TOOL_CALL_RESULT")
    (snapshot,) = of(events, EventType.STATE_SNAPSHOT)
    (delta,) = of(events, EventType.STATE_DELTA)
    assert snapshot.snapshot == {"items": ["tea", "milk"]}
    assert [op.model_dump(exclude_none=True) for op in delta.delta] == [
        {"op": "add", "path": "/items/-", "value": "milk"}
    ]


async def test_a_patch_that_is_no_json_patch_fails_the_tool_and_nothing_reaches_the_client() -> (
    None
):
    model = ScriptedProvider(
        [tool_call_response(ToolUsePart("c1", "break_state", {})), text_response("Sorry.")]
    )
    async with serving(model, tools=[break_state]) as served:
        events = await run(served, run_input("t1", user("Break it")))

    assert "STATE_DELTA" not in types(events) and types(events)[-1] == "RUN_FINISHED"
    (result,) = of(events, EventType.TOOL_CALL_RESULT)
    assert "not a JSON Patch" in result.content and "unreachable" not in result.content


async def test_send_state_delta_refuses_an_operation_of_another_form_naming_it() -> None:
    ctx: RunContext[None] = RunContext(deps=None)
    with pytest.raises(StateError, match="not a JSON Patch: operation 0"):
        await send_state_delta(ctx, [{"op": "add"}])


@pytest.mark.parametrize(
    ("state", "limits", "why"),
    [
        ({"text": "x" * 2000}, RunLimits(max_state_bytes=1000), "larger than 1000 bytes"),
        ({"a": [[[{"b": 1}]]]}, RunLimits(max_state_depth=4), "nests deeper than 4 levels"),
    ],
)
async def test_a_state_past_the_limits_ends_the_run_with_run_error_and_nothing_runs(
    state: JsonValue, limits: RunLimits, why: str
) -> None:
    SEEN.clear()
    model = looking()
    async with serving(model, tools=[look], limits=limits) as served:
        events = await run(served, run_input("t1", user("Hi"), state=state))

    assert types(events) == ["RUN_STARTED", "RUN_ERROR"]
    assert events[-1].code == "MessageTooLargeError" and why in events[-1].message
    assert model.requests == [] and SEEN == []


async def test_a_run_resuming_a_frontend_call_carries_the_state_it_was_sent_with() -> None:
    SEEN.clear()
    calls = [ToolUsePart("c2", "pick_colour", {}), ToolUsePart("c3", "look", {})]
    model = ScriptedProvider(
        [tool_call_response(calls[0]), tool_call_response(calls[1]), text_response("Blue.")]
    )
    async with serving(model, tools=[look]) as served:
        await run(served, run_input("t1", user("Pick"), tools=[PICK], state={"step": 1}))
        messages = [user("Pick"), assistant(calls=calls[:1]), tool_message("c2", "blue")]
        events = await run(served, run_input("t1", *messages, tools=[PICK], state={"step": 2}))

    assert types(events)[-1] == "RUN_FINISHED"
    assert SEEN == [({"step": 2}, ())]
