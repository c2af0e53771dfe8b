"""A remote MCP call the provider asks about, on Temporal: the workflow waits for the decision."""

from __future__ import annotations

import pytest
from temporalio.testing import WorkflowEnvironment

from layer0 import TurnInput
from layer0.testing import InMemoryStore
from neuron_turn import (
    AWAITING_APPROVAL,
    Decision,
    HostedMCP,
    NeuronTurn,
    NeuronTurnConfig,
    ToolResultPart,
    ToolUsePart,
    pending_approvals,
)
from neuron_turn.loop.hosted_approvals import APPROVED, hosted_call_input
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from .conftest import hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")

DOCS = HostedMCP("docs", "https://mcp.example.com/mcp", require_approval=True)


async def test_the_paused_workflow_sends_the_decision_to_the_provider_when_decided(
    env: WorkflowEnvironment,
) -> None:
    store = InMemoryStore()
    asked = ToolUsePart(
        "hosted:mcpr_1", "mcp", hosted_call_input("docs", "delete_page", {"page": 7})
    )
    model = ScriptedProvider(
        [tool_call_response(asked), text_response("Page 7 is gone.")],
        hosted_tools=["mcp"],
        approves_hosted_calls=True,
    )
    editor = NeuronTurn(model, state=store, config=NeuronTurnConfig(hosted_tools=[DOCS]))
    ask = TurnInput(message="Delete page 7", trigger="user", session="s")
    async with hosting(env, {"editor": editor}, store) as orchestrator:
        # Real time: skipping would run the approval timeout out at once.
        with env.auto_time_skipping_disabled():
            paused = await orchestrator.run("editor", ask, workflow_id="hosted-1")
            [waiting] = await orchestrator.awaiting("hosted-1")
            done = await orchestrator.decide("hosted-1", [Decision.approve("hosted:mcpr_1")])

    assert paused.output.exit_reason == AWAITING_APPROVAL
    assert [(c.id, c.hosted) for c in pending_approvals(paused.output)] == [("hosted:mcpr_1", True)]
    assert [c.id for c in waiting.calls] == ["hosted:mcpr_1"]
    assert done.output.message.as_text() == "Page 7 is gone."
    last = model.requests[1].messages[-1].content
    assert [p for p in last if isinstance(p, ToolResultPart)] == [
        ToolResultPart("hosted:mcpr_1", APPROVED)
    ]
