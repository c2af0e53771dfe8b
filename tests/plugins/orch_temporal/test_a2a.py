"""A2A and Temporal: an agent on a worker served over A2A, and a remote A2A agent on a worker."""

from __future__ import annotations

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.helpers import get_artifact_text, new_text_message
from a2a.types import SendMessageRequest, TaskState
from temporalio.testing import WorkflowEnvironment

from layer0 import HISTORY_KEY, SessionScope, TurnInput
from layer0.testing import InMemoryStore
from neuron_a2a import RemoteAgent
from neuron_orch_local import LocalOrchestrator
from neuron_tool import ToolRegistry, tool
from neuron_turn import NeuronTurn, NeuronTurnConfig, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response
from tests.plugins.a2a._server import TOKEN, served

from .conftest import hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_a_message_runs_as_a_workflow_on_the_worker_and_its_answer_completes_the_task(
    env: WorkflowEnvironment,
) -> None:
    ran: list[str] = []

    @tool
    async def look_up(city: str) -> str:
        """Look a city up."""
        ran.append(city)
        return f"{city}: 12 °C"

    store = InMemoryStore()
    model = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("c1", "look_up", {"city": "Oslo"})),
            text_response("It is 12 °C in Oslo."),
        ]
    )
    turn = NeuronTurn(
        model, tools=ToolRegistry([look_up]), state=store, config=NeuronTurnConfig(model="m")
    )
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    async with hosting(env, {"helper": turn}, store) as orchestrator, served(orchestrator) as url:
        config = ClientConfig(streaming=False, httpx_client=http)
        async with http, await create_client(url, client_config=config) as client:
            message = new_text_message("Weather in Oslo?", context_id="trip")
            (response,) = [
                r async for r in client.send_message(SendMessageRequest(message=message))
            ]

    task = response.task
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert get_artifact_text(task.artifacts[0]) == "It is 12 °C in Oslo."
    assert ran == ["Oslo"]
    # The workflow kept the exchange in the session the A2A context names.
    history = await store.read(SessionScope(id="a2a:trip"), HISTORY_KEY)
    assert isinstance(history, list) and len(history) == 4


async def test_a_remote_a2a_agent_hosted_on_a_worker_answers_a_dispatch(
    env: WorkflowEnvironment,
) -> None:
    # The remote side: a plain local agent served over A2A (another system, in use).
    remote_store = InMemoryStore()
    remote_turn = NeuronTurn(
        ScriptedProvider([text_response("Bonjour.")]),
        state=remote_store,
        config=NeuronTurnConfig(model="m"),
    )
    serving_side = LocalOrchestrator({"helper": remote_turn}, remote_store)
    store = InMemoryStore()
    async with served(serving_side) as url, RemoteAgent(url, token=TOKEN) as remote:
        async with hosting(env, {"greeter": remote}, store) as orchestrator:
            ask = TurnInput(message="Say hello in French", trigger="user", session="s-remote")
            output = await orchestrator.dispatch("greeter", ask)

    assert output.message.as_text() == "Bonjour."
    # The workflow applied the exchange the remote agent's turn recorded.
    history = await store.read(SessionScope(id="s-remote"), HISTORY_KEY)
    assert isinstance(history, list) and [m["role"] for m in history] == ["user", "assistant"]
