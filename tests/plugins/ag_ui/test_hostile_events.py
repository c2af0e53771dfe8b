"""Events an orchestrator sends that no NeuronTurn cleaned still make valid AG-UI events."""

from __future__ import annotations

import json

from neuron_ag_ui._events import RunEvents

from neuron_turn import ToolCallDelta, ToolCallStart, ToolResult, ToolStart


def test_a_lone_surrogate_in_a_tool_result_or_its_arguments_is_replaced_not_fatal() -> None:
    # A lone surrogate fails the event's JSON, which would end the stream unfinished.
    events = RunEvents("t1", "r1")
    made = [
        *events.on(ToolStart(id="c1", name="weather", input={"city": "Oslo"})),
        *events.on(
            ToolResult(id="c1", name="weather", content="sun \ud800", is_error=False, duration=1)
        ),
        *events.on(ToolCallStart("c2", "weather")),
        *events.on(ToolCallDelta("c2", '{"city": "\ud800"}')),
    ]

    sent = [json.loads(event.model_dump_json(by_alias=True)) for event in made]

    (result,) = [e for e in sent if e["type"] == "TOOL_CALL_RESULT"]
    assert result["content"] == "sun \ufffd"
    (args,) = [e for e in sent if e["type"] == "TOOL_CALL_ARGS" and e["toolCallId"] == "c2"]
    assert args["delta"] == '{"city": "\ufffd"}'
