"""AG-UI and Temporal: an agent on a worker served over AG-UI, its frontend tools included."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from ag_ui.core import EventType
from neuron_ag_ui import serve_ag_ui
from temporalio.testing import WorkflowEnvironment

from layer0 import HISTORY_KEY, SessionScope
from layer0.testing import InMemoryStore
from neuron_orch_temporal import TemporalOrchestrator
from neuron_turn import NeuronTurn, NeuronTurnConfig, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response
from tests.plugins.ag_ui._server import (
    TOKEN,
    Served,
    assistant,
    of,
    run,
    run_input,
    text_of,
    tool_message,
    types,
    user,
)
from tests.plugins.ag_ui.test_state import CART, add_item
from tests.plugins.ag_ui.test_tools import PICK_COLOUR, PICKING
from tests.serving import running

from .conftest import hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")


@asynccontextmanager
async def served(orchestrator: TemporalOrchestrator, store: InMemoryStore) -> AsyncIterator[Served]:
    def serve(on_ready: Callable[[str], object]) -> Awaitable[None]:
        return serve_ag_ui(orchestrator, "helper", port=0, token=TOKEN, on_ready=on_ready)

    async with running(serve) as url:
        yield Served(url, store, orchestrator, None)  # type: ignore[arg-type]


async def test_a_frontend_tool_round_trip_runs_on_the_worker_and_the_answer_resumes_it(
    env: WorkflowEnvironment,
) -> None:
    store = InMemoryStore()
    model = ScriptedProvider([tool_call_response(PICKING), text_response("Red it is.")])
    turn = NeuronTurn(model, state=store, config=NeuronTurnConfig(model="m"))
    async with hosting(env, {"helper": turn}, store) as orchestrator:
        # Real time: skipping would run the pause's approval timeout out at once.
        with env.auto_time_skipping_disabled():
            async with served(orchestrator, store) as server:
                first = await run(server, run_input("t1", user("Pick"), tools=[PICK_COLOUR]))
                answered: list[Any] = [
                    user("Pick"),
                    assistant(calls=[PICKING]),
                    tool_message("c2", "red"),
                ]
                second = await run(server, run_input("t1", *answered, tools=[PICK_COLOUR]))

    assert types(first)[-1] == "RUN_FINISHED"
    assert first[-1].outcome.pending_tool_call_ids == ["c2"]
    assert types(second)[-1] == "RUN_FINISHED" and text_of(second) == "Red it is."
    assert "red" in str(model.requests[1].messages[-1].content)
    # The workflows kept the exchange in the thread's session, the answer once.
    history = await store.read(SessionScope(id="ag-ui:t1"), HISTORY_KEY)
    assert isinstance(history, list) and len(history) == 4


async def test_the_state_a_tool_on_the_worker_sends_reaches_the_client_as_a_snapshot(
    env: WorkflowEnvironment,
) -> None:
    store = InMemoryStore()
    adding = ToolUsePart("c1", "add_item", {"item": "milk"})
    model = ScriptedProvider([tool_call_response(adding), text_response("Added.")])
    turn = NeuronTurn(model, tools=[add_item], state=store, config=NeuronTurnConfig(model="m"))
    async with hosting(env, {"helper": turn}, store) as orchestrator:
        async with served(orchestrator, store) as server:
            events = await run(server, run_input("t2", user("Add milk"), state=CART))

    (snapshot,) = of(events, EventType.STATE_SNAPSHOT)
    assert snapshot.snapshot == {"items": ["tea", "milk"]}
    assert types(events)[-1] == "RUN_FINISHED" and text_of(events) == "Added."
