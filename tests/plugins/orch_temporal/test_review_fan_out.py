"""A turn declaring more delegations than Temporal lets a workflow have pending still runs them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from temporalio.testing import WorkflowEnvironment

from layer0 import DelegateEffect, TurnInput, TurnMetadata, TurnOutput
from layer0.testing import InMemoryStore
from neuron_orch_temporal.connect import data_converter
from neuron_orch_temporal.testing import binary_path

from .conftest import FAST, hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")

PENDING = 3
"""The server's limit of pending children per workflow (2,000 by default)."""


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def limited_env() -> AsyncIterator[WorkflowEnvironment]:
    """A dev server refusing a workflow more than `PENDING` pending children (starts in ~0.2 s)."""
    limit = f"limit.numPendingChildExecutions.error={PENDING}"
    environment = await WorkflowEnvironment.start_local(
        data_converter=data_converter(),
        dev_server_existing_path=binary_path("temporal"),
        ip="127.0.0.1",
        dev_server_log_level="error",
        dev_server_extra_args=["--dynamic-config-value", limit],
    )
    try:
        yield environment
    finally:
        await environment.shutdown()


class Echo:
    """Answers with the message it was given."""

    async def execute(self, input: TurnInput) -> TurnOutput:
        text = input.message.as_text()
        return TurnOutput(message=text, exit_reason="complete", metadata=TurnMetadata.zero())


class Lead:
    """Declares `count` delegations to `echo`, numbered."""

    def __init__(self, count: int) -> None:
        self.count = count

    async def execute(self, input: TurnInput) -> TurnOutput:
        effects = [
            DelegateEffect(agent="echo", input=TurnInput(message=str(n), trigger="user"))
            for n in range(self.count)
        ]
        return TurnOutput(
            message="done", exit_reason="complete", metadata=TurnMetadata.zero(), effects=effects
        )


async def test_delegations_past_the_pending_children_limit_run_in_turns_of_the_policys_size(
    limited_env: WorkflowEnvironment,
) -> None:
    policy = FAST.model_copy(update={"max_concurrent_delegations": PENDING - 1})
    agents = {"lead": Lead(7), "echo": Echo()}
    async with hosting(limited_env, agents, InMemoryStore(), policy=policy) as orchestrator:
        # Past the limit the server refuses the workflow's task for ever: this would wait on.
        ask = TurnInput(message="go", trigger="user")
        result = await asyncio.wait_for(orchestrator.run("lead", ask), 30)
    answers = [d.output.message.as_text() for d in result.delegations]
    assert answers == [str(n) for n in range(7)]  # all of them, in effect order
