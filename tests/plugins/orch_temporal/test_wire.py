"""What crosses the engine: layer0 models through the pydantic converter, never a float cost."""

from __future__ import annotations

import json

from layer0 import (
    CustomExit,
    DelegateEffect,
    SessionScope,
    ToolCallRecord,
    TurnInput,
    TurnMetadata,
    TurnOutput,
    WriteMemoryEffect,
    usd,
)
from neuron_orch_temporal import DATA_CONVERTER, Chain, DispatchResult, TurnPolicy
from neuron_orch_temporal.messages import Delegation, TurnResult, WorkflowInput

OUTPUT = TurnOutput(
    message="done",
    exit_reason=CustomExit(name="await_signal"),
    metadata=TurnMetadata(
        tokens_in=3,
        tokens_out=4,
        cost=usd("0.00030"),
        turns_used=1,
        tools_called=[ToolCallRecord(name="t", duration=5, success=True)],
        duration=6,
    ),
    effects=[
        WriteMemoryEffect(scope=SessionScope(id="s"), key="k", value={"b": 1, "a": [True, None]}),
        DelegateEffect(agent="b", input=TurnInput(message="go", trigger="task")),
    ],
)


def round_trip(value: object, kind: type) -> tuple[object, dict[str, object]]:
    converter = DATA_CONVERTER.payload_converter
    [payload] = converter.to_payloads([value])
    [back] = converter.from_payloads([payload], [kind])
    return back, json.loads(payload.data)


def test_a_dispatch_result_round_trips_with_its_cost_as_a_decimal_string() -> None:
    result = DispatchResult(
        workflow_id="w",
        agent="a",
        output=OUTPUT,
        route=("a",),
        delegations=(Delegation(agent="b", workflow_id="w/t0/d1-b", output=OUTPUT),),
    )
    back, wire = round_trip(result, DispatchResult)
    assert back == result
    assert wire["output"]["metadata"]["cost"] == "0.00030"  # type: ignore[index]
    assert wire["output"]["effects"][0]["scope"] == {"session": "s"}  # type: ignore[index]


def test_a_turn_result_round_trips_and_reads_an_output_an_older_worker_returned() -> None:
    result = TurnResult(
        output=OUTPUT, delegations=(Delegation(agent="b", workflow_id="w/t0/a-b-1", output=OUTPUT),)
    )
    back, _ = round_trip(result, TurnResult)
    assert back == result
    # A worker from before `TurnRequest.answered` ignores it and returns the output alone.
    older, _ = round_trip(OUTPUT, TurnResult)
    assert older == TurnResult(output=OUTPUT, delegations=())


def test_a_workflow_input_and_its_policy_hold_no_float() -> None:
    params = WorkflowInput(
        agent="a",
        input=TurnInput(message="hi", trigger="user", session="s"),
        chain=Chain.root("a", max_depth=3),
        policy=TurnPolicy(),
    )
    back, wire = round_trip(params, WorkflowInput)
    assert back == params

    def floats(value: object) -> list[float]:
        if isinstance(value, float):
            return [value]
        if isinstance(value, dict):
            return [f for item in value.values() for f in floats(item)]
        if isinstance(value, list):
            return [f for item in value for f in floats(item)]
        return []

    assert floats(wire) == []
    assert wire["policy"]["backoff"] == "2"  # type: ignore[index]
