"""The files a tool returns, through a Temporal worker: sent to the model, kept in the session.

And an output past what a Temporal payload carries fails once, saying so.
"""

from __future__ import annotations

import pytest
from temporalio.testing import WorkflowEnvironment

from layer0 import HISTORY_KEY, DispatchFailed, SessionScope, TurnInput
from layer0.testing import InMemoryStore
from neuron_tool import ToolRegistry, ToolReturn, image_block, tool
from neuron_turn import ImagePart, NeuronTurn, NeuronTurnConfig, ToolResultPart, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from .conftest import hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")

PNG = b"\x89PNG\r\n\x1a\n a chart"


@tool
async def chart(title: str) -> ToolReturn:
    """Draw a chart."""
    return ToolReturn(f"drew {title}", files=[image_block(PNG)])


async def test_a_tools_image_reaches_the_model_and_the_session_through_a_worker(
    env: WorkflowEnvironment,
) -> None:
    store = InMemoryStore()
    model = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("c1", "chart", {"title": "q3"})),
            text_response("It grew."),
            text_response("Still growing."),
        ]
    )
    turn = NeuronTurn(
        model, tools=ToolRegistry([chart]), state=store, config=NeuronTurnConfig(model="m")
    )
    async with hosting(env, {"analyst": turn}, store) as orchestrator:
        first = TurnInput(message="Chart q3", trigger="user", session="s-files")
        await orchestrator.run("analyst", first, workflow_id="files-1")
        again = TurnInput(message="And now?", trigger="user", session="s-files")
        await orchestrator.run("analyst", again, workflow_id="files-2")

    (result,) = model.requests[1].messages[-1].content
    assert isinstance(result, ToolResultPart) and result.content == "drew q3"
    assert isinstance(result.files[0], ImagePart)
    stored = await store.read(SessionScope(id="s-files"), HISTORY_KEY)
    assert isinstance(stored, list)
    kinds = [
        block.get("content_type", block["type"])
        for message in stored
        if isinstance(message, dict) and isinstance(message["content"], list)
        for block in message["content"]
        if isinstance(block, dict)
    ]
    assert "neuron.tool_files" in kinds
    # The next turn, read back from the store the workflow wrote, sends the image again.
    resent = model.requests[2].messages[2].content[0]
    assert isinstance(resent, ToolResultPart) and resent.files == result.files


async def test_an_output_too_large_for_temporal_fails_once_naming_it_and_runs_no_tool_again(
    env: WorkflowEnvironment,
) -> None:
    store = InMemoryStore()
    ran: list[str] = []

    @tool
    async def scan(page: str) -> ToolReturn:
        """Scan a page."""
        ran.append(page)
        return ToolReturn("scanned", files=[image_block(PNG + b"x" * 3_000_000)])

    model = ScriptedProvider(
        [tool_call_response(ToolUsePart("c1", "scan", {"page": "1"})), text_response("done")]
    )
    turn = NeuronTurn(
        model, tools=ToolRegistry([scan]), state=store, config=NeuronTurnConfig(model="m")
    )
    async with hosting(env, {"scanner": turn}, store) as orchestrator:
        request = TurnInput(message="Scan it", trigger="user", session="s-big")
        with pytest.raises(DispatchFailed) as failed:
            await orchestrator.run("scanner", request, workflow_id="files-big")

    message = str(failed.value)
    assert "PayloadTooLargeError" in message and "more than the 2,031,616" in message
    assert ran == ["1"] and len(model.requests) == 2  # not retried: no tool ran again
    assert await store.read(SessionScope(id="s-big"), HISTORY_KEY) is None  # nothing half-kept
