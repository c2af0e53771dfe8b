"""An attempt's checkpoints: heartbeated after each tool round, bounded, handoffs left out."""

from __future__ import annotations

import dataclasses

import pytest
from temporalio.testing import ActivityEnvironment

from layer0 import HandoffEffect, PartialTurn, TurnInput, TurnMetadata, TurnOutput
from neuron_orch_temporal.activities import _MAX_CHECKPOINT, _Checkpoints, _lost_part
from neuron_orch_temporal.messages import Delegation, TurnCheckpoint, TurnRequest

TASK = TurnInput(message="read notes", trigger="user", session="s1")
REQUEST = TurnRequest(
    workflow_id="w", agent="reader", input=TASK, route="reader", answered=True, continues=True
)


class Reads:
    """A turn that reads continuations (as `NeuronTurn` does)."""

    continues_partial_turns = True


def part(text: str, *effects: HandoffEffect) -> PartialTurn:
    output = TurnOutput(
        message=text, exit_reason="complete", metadata=TurnMetadata.zero(), effects=list(effects)
    )
    return PartialTurn(output, TurnInput(message="", trigger="user", session="s1"))


def test_a_checkpoint_too_large_for_a_heartbeat_leaves_the_last_one_that_fits() -> None:
    # A hostile model's enormous answer: the attempt goes on, its last checkpoint stands.
    environment, sent = ActivityEnvironment(), []
    environment.on_heartbeat = lambda *details: sent.append(details)
    checkpoints = _Checkpoints(REQUEST, Reads(), [], _MAX_CHECKPOINT)

    def take_both() -> None:
        checkpoints.take(part("read it"))
        checkpoints.take(part("x" * 300_000))

    environment.run(take_both)

    assert len(sent) == 1 and checkpoints.details == sent[0]
    kept = TurnCheckpoint.model_validate_json(checkpoints.details[0])
    assert kept.output.message.as_text() == "read it"


def test_with_large_payloads_kept_out_of_the_history_a_large_checkpoint_is_heartbeated() -> None:
    environment, sent = ActivityEnvironment(), []
    environment.on_heartbeat = lambda *details: sent.append(details)
    checkpoints = _Checkpoints(REQUEST, Reads(), [], None)

    environment.run(checkpoints.take, part("x" * 300_000))

    assert len(sent) == 1 and checkpoints.details == sent[0]
    kept = TurnCheckpoint.model_validate_json(checkpoints.details[0])
    assert kept.output.message.as_text() == "x" * 300_000


def test_a_part_declaring_a_handoff_is_not_a_checkpoint() -> None:
    environment, sent = ActivityEnvironment(), []
    environment.on_heartbeat = lambda *details: sent.append(details)
    checkpoints = _Checkpoints(REQUEST, Reads(), [], None)

    environment.run(
        checkpoints.take, part("handing off", HandoffEffect(agent="billing", state=None))
    )

    assert sent == [] and checkpoints.details == ()


def second_attempt(*details: str) -> ActivityEnvironment:
    environment = ActivityEnvironment()
    environment.info = dataclasses.replace(
        environment.info, attempt=2, heartbeat_details=list(details)
    )
    return environment


def test_a_second_attempt_hands_on_the_part_its_lost_predecessor_checkpointed() -> None:
    checkpoint = TurnCheckpoint(output=part("read it").output, continuation=TASK)
    answered: list[Delegation] = []

    lost = second_attempt(checkpoint.model_dump_json()).run(_lost_part, REQUEST, answered)

    assert lost is not None
    output, (interruption, error) = lost
    assert output.message.as_text() == "read it" and error is None
    assert (interruption.error, interruption.attempts, interruption.last) == (
        "AttemptLost",
        2,
        False,
    )
    assert interruption.message == "attempt 1 of the turn was lost after this part"


def test_an_unreadable_checkpoint_is_logged_and_the_turn_runs_again_whole(
    caplog: pytest.LogCaptureFixture,
) -> None:
    lost = second_attempt('{"not": "a checkpoint"}').run(_lost_part, REQUEST, [])

    assert lost is None
    assert "the turn runs again whole: its checkpoint is unreadable" in caplog.text
