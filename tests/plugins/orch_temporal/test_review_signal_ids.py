"""A signal to a workflow id Temporal cannot name (empty) is refused as one there is not."""

from __future__ import annotations

import pytest
from temporalio.testing import WorkflowEnvironment

from layer0 import (
    SignalEffect,
    SignalPayload,
    TurnInput,
    TurnMetadata,
    TurnOutput,
    WorkflowNotFound,
)
from layer0.testing import InMemoryStore

from .conftest import hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")


class Signaller:
    """Declares a signal to `target`, counting its turns."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.turns = 0

    async def execute(self, input: TurnInput) -> TurnOutput:
        self.turns += 1
        payload = SignalPayload(signal_type="note", data={"a": 1})
        return TurnOutput(
            message="sent",
            exit_reason="complete",
            metadata=TurnMetadata.zero(),
            effects=[SignalEffect(target=self.target, payload=payload)],
        )


async def test_a_declared_signal_to_an_empty_workflow_id_fails_once_as_not_found(
    dev_env: WorkflowEnvironment,
) -> None:
    # The real server refuses to describe '' (INVALID_ARGUMENT; the test server says NOT_FOUND).
    # NeuronTurn's signal tool refuses an empty target; a Turn of another kind may declare one.
    turn = Signaller("")
    async with hosting(dev_env, {"s": turn}, InMemoryStore()) as orchestrator:
        with pytest.raises(WorkflowNotFound, match="signals workflow '', which does not exist"):
            await orchestrator.dispatch("s", TurnInput(message="x", trigger="user"))
    assert turn.turns == 1  # not retried as a worker fault: it ran once
