"""External tools on Temporal: offered for one dispatch, the pause waits for the caller's answer."""

from __future__ import annotations

import pytest
from temporalio.testing import WorkflowEnvironment

from layer0 import TurnInput
from layer0.testing import InMemoryStore
from neuron_tool import ExternalTool
from neuron_turn import (
    AWAITING_APPROVAL,
    Decision,
    NeuronTurn,
    ToolResultPart,
    ToolUsePart,
    pending_approvals,
    with_external_tools,
)
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from .conftest import hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")

PICK = ExternalTool(
    "pick_colour",
    "Ask the user to pick a colour.",
    {"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]},
)


async def test_a_call_of_a_tool_offered_for_the_dispatch_waits_for_the_callers_answer(
    env: WorkflowEnvironment,
) -> None:
    store = InMemoryStore()
    model = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("c1", "pick_colour", {"prompt": "Which?"})),
            text_response("Red it is."),
        ]
    )
    painter = NeuronTurn(model, state=store)
    ask = with_external_tools(TurnInput(message="Paint", trigger="user", session="s"), [PICK])
    async with hosting(env, {"painter": painter}, store) as orchestrator:
        # Real time: skipping would run the approval timeout out at once.
        with env.auto_time_skipping_disabled():
            paused = await orchestrator.run("painter", ask, workflow_id="external-1")
            [waiting] = await orchestrator.awaiting("external-1")
            done = await orchestrator.decide("external-1", [Decision.answer("c1", "red")])

    assert paused.output.exit_reason == AWAITING_APPROVAL
    assert [(c.id, c.external) for c in pending_approvals(paused.output)] == [("c1", True)]
    assert [c.id for c in waiting.calls] == ["c1"]
    assert done.output.message.as_text() == "Red it is."
    last = model.requests[1].messages[-1].content
    assert [p for p in last if isinstance(p, ToolResultPart)] == [
        ToolResultPart("c1", "red", is_error=False)
    ]
    # The resume, built by the workflow, offered the tool again: the pause kept it.
    assert "pick_colour" in [t.name for t in model.requests[1].tools]
