"""Frontend tools over two runs (the client runs them, a tool message answers them), and
calls held for approval decided by `resume` entries or `forwardedProps.neuron_decisions`."""

from __future__ import annotations

import json
from typing import Any

from ag_ui.core import EventType

from neuron_tool import tool
from neuron_turn import ApprovalPolicy, Decision, NeuronTurnConfig, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from ._server import assistant, of, run, run_input, serving, text_of, tool_message, types, user

RAN: list[str] = []
PICK_COLOUR = {
    "name": "pick_colour",
    "description": "Ask the user to pick a colour in their browser.",
    "parameters": {
        "type": "object",
        "properties": {"choices": {"type": "array", "items": {"type": "string"}}},
        "required": ["choices"],
    },
}
PICKING = ToolUsePart("c2", "pick_colour", {"choices": ["red", "blue"]})
APPROVAL = NeuronTurnConfig(model="m", approval=ApprovalPolicy.of(["weather"]))


@tool
async def weather(city: str) -> str:
    """Today's weather in a city (pretend)."""
    RAN.append(city)
    return f"sunny in {city}"


def results_seen(model: ScriptedProvider, request: int = -1) -> str:
    return str(model.requests[request].messages[-1].content)


async def test_a_frontend_tool_call_ends_the_run_for_the_client_then_its_result_resumes_it() -> (
    None
):
    model = ScriptedProvider([tool_call_response(PICKING), text_response("Red it is.")])
    async with serving(model) as served:
        first = await run(served, run_input("t1", user("Pick a colour"), tools=[PICK_COLOUR]))
        messages = [user("Pick a colour"), assistant(calls=[PICKING]), tool_message("c2", "red")]
        second = await run(served, run_input("t1", *messages, tools=[PICK_COLOUR]))

    offered = [t.name for t in model.requests[0].tools]
    assert "pick_colour" in offered
    assert types(first) == [
        "RUN_STARTED",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "MESSAGES_SNAPSHOT",
        "RUN_FINISHED",
    ]
    (start,) = of(first, EventType.TOOL_CALL_START)
    (args,) = of(first, EventType.TOOL_CALL_ARGS)
    assert (start.tool_call_id, start.tool_call_name) == ("c2", "pick_colour")
    assert json.loads(args.delta) == {"choices": ["red", "blue"]}
    assert first[-1].outcome.type == "success"
    assert first[-1].outcome.pending_tool_call_ids == ["c2"]
    assert "red" in results_seen(model) and "c2" in results_seen(model)
    assert types(second)[-1] == "RUN_FINISHED" and text_of(second) == "Red it is."
    # The client knows its call and its own result: neither comes back to it.
    assert "TOOL_CALL_START" not in types(second) and "TOOL_CALL_RESULT" not in types(second)


async def test_a_streamed_frontend_call_is_announced_once_with_its_arguments_whole() -> None:
    model = ScriptedProvider([tool_call_response(PICKING)], chunk_size=5)
    async with serving(model) as served:
        events = await run(served, run_input("t1", user("Pick a colour"), tools=[PICK_COLOUR]))

    kinds = types(events)
    assert kinds[:2] == ["RUN_STARTED", "TOOL_CALL_START"]
    assert kinds[-3:] == ["TOOL_CALL_END", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    assert set(kinds[2:-3]) == {"TOOL_CALL_ARGS"} and len(kinds[2:-3]) > 1
    arguments = "".join(e.delta for e in of(events, EventType.TOOL_CALL_ARGS))
    assert json.loads(arguments) == PICKING.input
    assert events[-1].outcome.pending_tool_call_ids == ["c2"]


async def test_a_tool_message_with_an_error_reaches_the_model_as_a_failed_call() -> None:
    model = ScriptedProvider([tool_call_response(PICKING), text_response("Sorry.")])
    async with serving(model) as served:
        await run(served, run_input("t1", user("Pick"), tools=[PICK_COLOUR]))
        answer = tool_message("c2", "", error="the user closed the dialog")
        await run(served, run_input("t1", answer, tools=[PICK_COLOUR]))

    seen = results_seen(model)
    assert "the user closed the dialog" in seen and "is_error=True" in seen


async def test_a_result_for_an_unknown_call_is_a_run_error_naming_it_and_nothing_runs() -> None:
    model = ScriptedProvider([tool_call_response(PICKING), text_response("never")])
    async with serving(model) as served:
        await run(served, run_input("t1", user("Pick"), tools=[PICK_COLOUR]))
        wrong = await run(
            served, run_input("t1", tool_message("c2", "red"), tool_message("zz", "x"))
        )
        calls = len(model.requests)
        again = await run(served, run_input("t1", tool_message("c2", "red")))

    assert types(wrong) == ["RUN_STARTED", "RUN_ERROR"]
    assert wrong[-1].code == "UnknownDecisionError" and "'zz'" in wrong[-1].message
    assert calls == 1  # refused before any model call; the session still waits
    assert text_of(again) == "never"


async def test_a_waiting_call_left_unanswered_is_a_run_error_naming_it() -> None:
    other = ToolUsePart("c3", "pick_colour", {"choices": ["green"]})
    model = ScriptedProvider([tool_call_response(PICKING, other)])
    async with serving(model) as served:
        first = await run(served, run_input("t1", user("Pick two"), tools=[PICK_COLOUR]))
        partial = await run(served, run_input("t1", tool_message("c2", "red")))

    assert first[-1].outcome.pending_tool_call_ids == ["c2", "c3"]
    assert partial[-1].code == "MissingDecisionError" and "c3" in partial[-1].message
    assert len(model.requests) == 1


async def test_a_call_answered_twice_is_refused_before_anything_runs() -> None:
    model = ScriptedProvider([tool_call_response(PICKING)])
    async with serving(model) as served:
        await run(served, run_input("t1", user("Pick"), tools=[PICK_COLOUR]))
        twice = await run(served, run_input("t1", tool_message("c2", "a"), tool_message("c2", "b")))

    assert twice[-1].code == "InvalidDecisionsError" and '"c2"' in twice[-1].message


def _held() -> list[Any]:
    return [tool_call_response(ToolUsePart("c1", "weather", {"city": "Oslo"}))]


async def test_a_call_held_for_approval_ends_the_run_as_an_interrupt_with_a_custom_event() -> None:
    RAN.clear()
    model = ScriptedProvider(_held())
    async with serving(model, tools=[weather], config=APPROVAL) as served:
        events = await run(served, run_input("t1", user("Weather?")))

    assert types(events)[-2:] == ["CUSTOM", "RUN_FINISHED"]
    custom = events[-2]
    assert custom.name == "neuron.awaiting_approval"
    assert custom.value == {
        "awaiting_approval": [{"id": "c1", "name": "weather", "input": {"city": "Oslo"}}]
    }
    outcome = events[-1].outcome
    assert outcome.type == "interrupt"
    (interrupt,) = outcome.interrupts
    assert (interrupt.id, interrupt.tool_call_id, interrupt.reason) == ("c1", "c1", "tool_approval")
    assert RAN == []


async def test_decisions_in_forwarded_props_resume_the_held_call() -> None:
    RAN.clear()
    model = ScriptedProvider([*_held(), text_response("Sunny in Oslo.")])
    async with serving(model, tools=[weather], config=APPROVAL) as served:
        await run(served, run_input("t1", user("Weather?")))
        decisions = [Decision.approve("c1").model_dump(mode="json")]
        events = await run(served, run_input("t1", forwardedProps={"neuron_decisions": decisions}))

    assert RAN == ["Oslo"]
    assert "TOOL_CALL_START" not in types(events)  # announced by the run that paused
    (result,) = of(events, EventType.TOOL_CALL_RESULT)
    assert (result.tool_call_id, result.content) == ("c1", "sunny in Oslo")
    assert text_of(events) == "Sunny in Oslo." and types(events)[-1] == "RUN_FINISHED"


async def test_a_resume_entry_denying_the_interrupt_tells_the_model_why() -> None:
    RAN.clear()
    model = ScriptedProvider([*_held(), text_response("Fine.")])
    async with serving(model, tools=[weather], config=APPROVAL) as served:
        await run(served, run_input("t1", user("Weather?")))
        resume = [
            {
                "interruptId": "c1",
                "status": "resolved",
                "payload": {"approve": False, "reason": "not today"},
            }
        ]
        events = await run(served, run_input("t1", resume=resume))

    assert RAN == [] and types(events)[-1] == "RUN_FINISHED"
    assert "not today" in results_seen(model)


async def test_malformed_decisions_are_refused_naming_what_is_wrong() -> None:
    model = ScriptedProvider(_held())
    async with serving(model, tools=[weather], config=APPROVAL) as served:
        await run(served, run_input("t1", user("Weather?")))
        bad = await run(
            served,
            run_input(
                "t1", forwardedProps={"neuron_decisions": [{"id": "c1", "decision": "maybe"}]}
            ),
        )
        resume = [{"interruptId": "c1", "status": "resolved", "payload": "yes"}]
        odd = await run(served, run_input("t1", resume=resume))

    assert bad[-1].code == "InvalidDecisionsError" and "neuron_decisions[0]" in bad[-1].message
    assert odd[-1].code == "InvalidDecisionsError" and "resume[0].payload" in odd[-1].message
    assert len(model.requests) == 1
