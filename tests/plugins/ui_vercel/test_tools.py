"""Frontend tools over two requests (the client runs them, its tool output answers them), and
calls held for approval decided by approval responses or the body's `neuron_decisions`."""

from __future__ import annotations

from neuron_ui_vercel import ChatLimits
from neuron_ui_vercel._input import step_decisions
from neuron_ui_vercel._request import UIMessage

from neuron_tool import tool
from neuron_turn import ApprovalPolicy, Decision, NeuronTurnConfig, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from ._server import (
    PICK_COLOUR,
    assistant,
    chat,
    of,
    post,
    serving,
    text_of,
    tool_part,
    types,
    user,
)

RAN: list[str] = []
PICKING = ToolUsePart("c2", "pick_colour", {"choices": ["red", "blue"]})
APPROVAL = NeuronTurnConfig(model="m", approval=ApprovalPolicy.of(["weather"]))
STEP = {"type": "step-start"}


@tool
async def weather(city: str) -> str:
    """Today's weather in a city (pretend)."""
    RAN.append(city)
    return f"sunny in {city}"


def results_seen(model: ScriptedProvider, request: int = -1) -> str:
    return str(model.requests[request].messages[-1].content)


def answered(output: str, call: str = "c2") -> dict:
    """The assistant message as the client keeps it once it ran the call and added its output."""
    return assistant(
        STEP, tool_part("pick_colour", call, "output-available", PICKING.input, output=output)
    )


async def test_a_frontend_tool_call_ends_the_stream_and_the_next_requests_output_resumes_it() -> (
    None
):
    model = ScriptedProvider([tool_call_response(PICKING), text_response("Red it is.")])
    async with serving(model, frontend_tools=[PICK_COLOUR]) as served:
        first = await post(served, chat("t1", user("Pick a colour")))
        second = await post(served, chat("t1", user("Pick a colour"), answered("red")))

    assert "pick_colour" in [t.name for t in model.requests[0].tools]
    assert types(first) == [
        "start",
        "start-step",
        "tool-input-start",
        "tool-input-delta",
        "tool-input-available",
        "finish-step",
        "finish",
    ]
    (available,) = of(first, "tool-input-available")
    assert (available["toolCallId"], available["toolName"]) == ("c2", "pick_colour")
    assert available["input"] == {"choices": ["red", "blue"]}
    assert first[-1]["finishReason"] == "tool-calls"
    assert "red" in results_seen(model) and "c2" in results_seen(model)
    # The response continues the assistant message; the client's own output is not sent back.
    assert second[0] == {"type": "start", "messageId": "a1"}
    assert text_of(second) == "Red it is." and second[-1]["finishReason"] == "stop"
    assert not of(second, "tool-output-available") and not of(second, "tool-input-available")


async def test_a_tool_output_error_reaches_the_model_as_a_failed_call() -> None:
    model = ScriptedProvider([tool_call_response(PICKING), text_response("Sorry.")])
    async with serving(model, frontend_tools=[PICK_COLOUR]) as served:
        await post(served, chat("t1", user("Pick")))
        failed = tool_part(
            "pick_colour", "c2", "output-error", PICKING.input, errorText="the user closed it"
        )
        await post(served, chat("t1", assistant(STEP, failed)))

    seen = results_seen(model)
    assert "the user closed it" in seen and "is_error=True" in seen


async def test_only_the_last_step_is_read_earlier_outputs_are_in_the_session_already() -> None:
    later = ToolUsePart("c3", "pick_colour", {"choices": ["green", "pink"]})
    model = ScriptedProvider(
        [tool_call_response(PICKING), tool_call_response(later), text_response("Pink, then.")]
    )
    async with serving(model, frontend_tools=[PICK_COLOUR]) as served:
        await post(served, chat("t1", user("Pick two")))
        await post(served, chat("t1", answered("red")))
        message = assistant(
            STEP,
            tool_part("pick_colour", "c2", "output-available", PICKING.input, output="red"),
            STEP,
            tool_part("pick_colour", "c3", "output-available", later.input, output="pink"),
        )
        done = await post(served, chat("t1", message))

    assert text_of(done) == "Pink, then." and "pink" in results_seen(model)


async def test_an_output_for_a_call_not_waiting_is_an_error_naming_it_and_nothing_runs() -> None:
    model = ScriptedProvider([tool_call_response(PICKING), text_response("never")])
    async with serving(model, frontend_tools=[PICK_COLOUR]) as served:
        await post(served, chat("t1", user("Pick")))
        wrong = await post(served, chat("t1", answered("red", call="zz")))
        calls = len(model.requests)
        again = await post(served, chat("t1", answered("red")))

    assert types(wrong) == ["start", "error", "finish"]
    assert "UnknownDecisionError" in wrong[1]["errorText"] and "'zz'" in wrong[1]["errorText"]
    assert calls == 1  # refused before any model call; the session still waits
    assert text_of(again) == "never"


async def test_an_assistant_message_answering_nothing_is_refused() -> None:
    model = ScriptedProvider([])
    async with serving(model, frontend_tools=[PICK_COLOUR]) as served:
        chunks = await post(served, chat("t1", assistant(STEP, {"type": "text", "text": "hi"})))

    assert chunks[1]["errorText"].startswith("EmptyMessageError: ") and model.requests == []


def _held() -> list:
    return [tool_call_response(ToolUsePart("c1", "weather", {"city": "Oslo"}))]


def _responded(approved: bool, reason: str | None = None) -> dict:
    approval = {"id": "c1", "approved": approved, **({"reason": reason} if reason else {})}
    part = tool_part("weather", "c1", "approval-responded", {"city": "Oslo"}, approval=approval)
    return assistant(STEP, part)


async def test_a_call_held_for_approval_ends_the_stream_with_an_approval_request() -> None:
    RAN.clear()
    model = ScriptedProvider(_held())
    async with serving(model, tools=[weather], config=APPROVAL) as served:
        chunks = await post(served, chat("t1", user("Weather?")))

    assert types(chunks)[-4:] == [
        "tool-input-available",
        "tool-approval-request",
        "finish-step",
        "finish",
    ]
    (request,) = of(chunks, "tool-approval-request")
    assert request == {"type": "tool-approval-request", "approvalId": "c1", "toolCallId": "c1"}
    assert chunks[-1]["finishReason"] == "tool-calls" and RAN == []


async def test_an_approval_response_runs_the_held_call_and_its_output_streams() -> None:
    RAN.clear()
    model = ScriptedProvider([*_held(), text_response("Sunny in Oslo.")])
    async with serving(model, tools=[weather], config=APPROVAL) as served:
        await post(served, chat("t1", user("Weather?")))
        chunks = await post(served, chat("t1", _responded(True)))

    assert RAN == ["Oslo"]
    assert not of(chunks, "tool-input-available")  # the client has the call's part
    (output,) = of(chunks, "tool-output-available")
    assert (output["toolCallId"], output["output"]) == ("c1", "sunny in Oslo")
    assert text_of(chunks) == "Sunny in Oslo." and chunks[-1]["finishReason"] == "stop"


async def test_a_denial_tells_the_model_why_and_streams_output_denied() -> None:
    RAN.clear()
    model = ScriptedProvider([*_held(), text_response("Fine.")])
    async with serving(model, tools=[weather], config=APPROVAL) as served:
        await post(served, chat("t1", user("Weather?")))
        chunks = await post(served, chat("t1", _responded(False, "not today")))

    assert RAN == [] and "not today" in results_seen(model)
    assert of(chunks, "tool-output-denied") == [{"type": "tool-output-denied", "toolCallId": "c1"}]
    assert not of(chunks, "tool-output-available") and text_of(chunks) == "Fine."


async def test_decisions_in_the_body_resume_the_held_call() -> None:
    RAN.clear()
    model = ScriptedProvider([*_held(), text_response("Sunny.")])
    async with serving(model, tools=[weather], config=APPROVAL) as served:
        await post(served, chat("t1", user("Weather?")))
        decisions = [Decision.approve("c1").model_dump(mode="json")]
        chunks = await post(served, chat("t1", neuron_decisions=decisions))

    assert RAN == ["Oslo"] and text_of(chunks) == "Sunny."


async def test_malformed_decisions_are_refused_naming_what_is_wrong() -> None:
    model = ScriptedProvider(_held())
    async with serving(model, tools=[weather], config=APPROVAL) as served:
        await post(served, chat("t1", user("Weather?")))
        bad = [{"id": "c1", "decision": "maybe"}]
        odd = await post(served, chat("t1", neuron_decisions=bad))
        twice = await post(
            served,
            chat("t1", _responded(True), neuron_decisions=[{"id": "c1", "decision": "approve"}]),
        )

    assert odd[1]["errorText"].startswith("InvalidDecisionsError: neuron_decisions[0]")
    assert twice[1]["errorText"].startswith("InvalidDecisionsError: ")
    assert '"c1"' in twice[1]["errorText"] and len(model.requests) == 1


def test_a_static_tool_part_is_named_by_its_type_whatever_tool_name_it_carries() -> None:
    spoofed = tool_part("weather", "c1", "output-available", {}, output="x", toolName="pick_colour")
    message = UIMessage(role="assistant", parts=[STEP, spoofed])

    assert step_decisions(message, {"pick_colour"}, ChatLimits()) == []
    named = tool_part("pick_colour", "c2", "output-available", {}, output="red")
    (answer,) = step_decisions(
        UIMessage(role="assistant", parts=[STEP, named]), {"pick_colour"}, ChatLimits()
    )
    assert (answer.id, answer.decision) == ("c2", "answer")
