"""Turn records: the timeline's custom-effect wire form, the request for it, and the record."""

from __future__ import annotations

import json

import pytest

from layer0 import (
    CustomEffect,
    LogEffect,
    LogLevel,
    ModelCallEntry,
    ToolCallEntry,
    TurnInput,
    TurnMetadata,
    TurnOutput,
    TurnRecord,
    TurnTimeline,
    request_timeline,
    take_timeline,
    usd,
)


def timeline() -> TurnTimeline:
    return TurnTimeline(
        turn_id="t1",
        entries=[
            ModelCallEntry(
                call=1,
                model="m",
                start=3,
                duration=120,
                stop_reason="tool_use",
                input_tokens=10,
                output_tokens=5,
                cost=usd("0.0006"),
            ),
            ToolCallEntry(
                id="c1",
                name="add",
                input={"a": 1},
                output="2",
                is_error=False,
                start=130,
                duration=4,
            ),
        ],
    )


def output(*effects: CustomEffect | LogEffect) -> TurnOutput:
    return TurnOutput(
        message="done", exit_reason="complete", metadata=TurnMetadata.zero(), effects=list(effects)
    )


def test_a_timeline_travels_as_a_custom_effect_and_reads_back_equal() -> None:
    effect = timeline().effect()
    wire = json.loads(effect.model_dump_json())
    assert (wire["type"], wire["effect_type"]) == ("custom", "turn_timeline")
    assert wire["data"]["entries"][0]["cost"] == "0.0006"
    assert TurnTimeline.from_effect(CustomEffect.model_validate(wire)) == timeline()


def test_a_malformed_timeline_effect_is_refused_naming_the_field() -> None:
    bad = CustomEffect(effect_type="turn_timeline", data={"turn_id": "t", "entries": [{}]})
    with pytest.raises(ValueError, match=r"malformed turn_timeline effect: entries\.0"):
        TurnTimeline.from_effect(bad)
    with pytest.raises(ValueError, match="not a turn_timeline effect"):
        TurnTimeline.from_effect(CustomEffect(effect_type="other", data=None))


def test_request_timeline_keeps_the_callers_metadata_and_options() -> None:
    given = TurnInput(
        message="hi", trigger="user", metadata={"trace": "x", "neuron_turn": {"pin": True}}
    )
    asked = request_timeline(given)
    assert asked.metadata == {"trace": "x", "neuron_turn": {"pin": True, "record": True}}
    assert request_timeline(TurnInput(message="hi", trigger="user")).metadata == {
        "neuron_turn": {"record": True}
    }


def test_metadata_that_cannot_carry_the_request_is_left_alone() -> None:
    for metadata in (["a list"], "text", {"neuron_turn": "not an object"}):
        given = TurnInput(message="hi", trigger="user", metadata=metadata)
        assert request_timeline(given) is given


def test_take_timeline_splits_it_from_the_other_effects_in_order() -> None:
    log = LogEffect(level=LogLevel.INFO, message="x")
    rest, found = take_timeline(output(log, timeline().effect()))
    assert found == timeline()
    assert rest.effects == [log]
    plain = output(log)
    assert take_timeline(plain) == (plain, None)


def test_a_record_summarises_its_input_and_output() -> None:
    record = TurnRecord(
        turn_id="t1",
        session="s",
        agent="main",
        workflow_id="w",
        started="2026-01-01T00:00:00.000+00:00",
        input=TurnInput(message="What is\n17*23?", trigger="user"),
        output=output(),
        timeline=timeline().entries,
        status="executed",
    )
    again = TurnRecord.model_validate_json(record.model_dump_json())
    assert again == record
    summary = record.summary()
    assert (summary.title, summary.exit_reason, summary.status) == (
        "What is 17*23?",
        "complete",
        "executed",
    )
