from __future__ import annotations

from layer0 import TextBlock, TurnConfig, TurnInput
from neuron_orch_local import HANDOFF_KEY, handoff_input
from neuron_turn import DECISIONS_KEY


def test_handoff_input_with_a_session_is_a_text_naming_the_source_and_state() -> None:
    original = TurnInput(
        message="refund please",
        trigger="user",
        session="s",
        config=TurnConfig(max_turns=2),
        metadata={"trace": "t"},
    )
    given = handoff_input(original, source="triage", state={"order": 42, "ü": "é"})
    assert given.message.as_text() == (
        "The conversation was handed off to you by agent 'triage'.\n"
        'Handoff state: {"order": 42, "ü": "é"}'
    )
    assert (given.trigger, given.session, given.config) == ("task", "s", None)
    assert given.metadata == {
        "trace": "t",
        HANDOFF_KEY: {"from": "triage", "state": {"order": 42, "ü": "é"}},
    }


def test_handoff_input_without_a_session_keeps_the_original_blocks() -> None:
    original = TurnInput.model_validate(
        {
            "message": [{"type": "text", "text": "hi"}, {"type": "text", "text": "there"}],
            "trigger": "user",
        }
    )
    given = handoff_input(original, source="a", state=None)
    assert given.message.blocks[1:] == [TextBlock(text="hi"), TextBlock(text="there")]


def test_handoff_input_replaces_metadata_that_is_not_an_object() -> None:
    original = TurnInput(message="x", trigger="user", metadata=["not", "an", "object"])
    given = handoff_input(original, source="a", state=1)
    assert given.metadata == {HANDOFF_KEY: {"from": "a", "state": 1}}


def test_handoff_input_leaves_out_the_previous_agents_per_call_options_and_decisions() -> None:
    original = TurnInput(
        message="x",
        trigger="user",
        session="s",
        metadata={
            "trace": "t",
            "neuron_turn": {"tool_choice": "delete_everything"},
            DECISIONS_KEY: [{"id": "c1", "approve": True}],
        },
    )
    given = handoff_input(original, source="a", state=None)
    assert given.metadata == {"trace": "t", HANDOFF_KEY: {"from": "a", "state": None}}
