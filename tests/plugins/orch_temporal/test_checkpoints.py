"""An attempt's checkpoints: heartbeated after each tool round, bounded, handoffs left out."""

from __future__ import annotations

from temporalio.testing import ActivityEnvironment

from layer0 import HandoffEffect, PartialTurn, TurnInput, TurnMetadata, TurnOutput
from neuron_orch_temporal.activities import _Checkpoints
from neuron_orch_temporal.messages import TurnCheckpoint, TurnRequest

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
    checkpoints = _Checkpoints(REQUEST, Reads(), [])

    def take_both() -> None:
        checkpoints.take(part("read it"))
        checkpoints.take(part("x" * 300_000))

    environment.run(take_both)

    assert len(sent) == 1 and checkpoints.details == sent[0]
    kept = TurnCheckpoint.model_validate_json(checkpoints.details[0])
    assert kept.output.message.as_text() == "read it"


def test_a_part_declaring_a_handoff_is_not_a_checkpoint() -> None:
    environment, sent = ActivityEnvironment(), []
    environment.on_heartbeat = lambda *details: sent.append(details)
    checkpoints = _Checkpoints(REQUEST, Reads(), [])

    environment.run(
        checkpoints.take, part("handing off", HandoffEffect(agent="billing", state=None))
    )

    assert sent == [] and checkpoints.details == ()
