"""The Vercel AI SDK server and Temporal: an agent on a worker serves a chat, frontend tools too."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest
from neuron_ui_vercel import serve_vercel_ai
from temporalio.testing import WorkflowEnvironment

from layer0 import HISTORY_KEY, Base64Source, SessionScope
from layer0.testing import InMemoryStore
from neuron_orch_temporal import TemporalOrchestrator
from neuron_turn import (
    ImageGeneration,
    ImagePart,
    NeuronTurn,
    NeuronTurnConfig,
    ProviderResponse,
    TextPart,
    TokenUsage,
)
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response
from tests.plugins.ui_vercel._server import (
    PICK_COLOUR,
    TOKEN,
    Served,
    chat,
    of,
    post,
    text_of,
    user,
)
from tests.plugins.ui_vercel.test_tools import PICKING, answered
from tests.serving import running

from .conftest import hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")


@asynccontextmanager
async def served(orchestrator: TemporalOrchestrator, store: InMemoryStore) -> AsyncIterator[Served]:
    def serve(on_ready: Callable[[str], object]) -> Awaitable[None]:
        return serve_vercel_ai(
            orchestrator,
            "helper",
            port=0,
            token=TOKEN,
            frontend_tools=[PICK_COLOUR],
            on_ready=on_ready,
        )

    async with running(serve) as url:
        yield Served(url, store, orchestrator, None)  # type: ignore[arg-type]


async def test_a_frontend_tool_round_trip_runs_on_the_worker_and_the_output_resumes_it(
    env: WorkflowEnvironment,
) -> None:
    store = InMemoryStore()
    model = ScriptedProvider([tool_call_response(PICKING), text_response("Red it is.")])
    turn = NeuronTurn(model, state=store, config=NeuronTurnConfig(model="m"))
    async with hosting(env, {"helper": turn}, store) as orchestrator:
        # Real time: skipping would run the pause's approval timeout out at once.
        with env.auto_time_skipping_disabled():
            async with served(orchestrator, store) as server:
                first = await post(server, chat("v1", user("Pick a colour")))
                second = await post(server, chat("v1", user("Pick a colour"), answered("red")))

    (available,) = of(first, "tool-input-available")
    assert (available["toolCallId"], available["input"]) == ("c2", PICKING.input)
    assert first[-1]["finishReason"] == "tool-calls"
    assert text_of(second) == "Red it is." and second[-1]["finishReason"] == "stop"
    assert "red" in str(model.requests[1].messages[-1].content)
    # The workflows kept the exchange in the chat's session, the answer once.
    history = await store.read(SessionScope(id="vercel:v1"), HISTORY_KEY)
    assert isinstance(history, list) and len(history) == 4


async def test_an_image_the_model_made_on_the_worker_reaches_the_chat_once_as_a_file(
    env: WorkflowEnvironment,
) -> None:
    store = InMemoryStore()
    pixel = (
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQ"
        "AAAABJRU5ErkJggg=="
    )
    drawn = ProviderResponse(
        content=(TextPart("A cat:"), ImagePart(Base64Source(data=pixel), "image/png")),
        stop_reason="end_turn",
        usage=TokenUsage(),
        model="m",
    )
    model = ScriptedProvider([drawn], hosted_tools={"image_generation"})
    config = NeuronTurnConfig(model="m", hosted_tools=[ImageGeneration()])
    turn = NeuronTurn(model, state=store, config=config)
    async with hosting(env, {"helper": turn}, store) as orchestrator:
        async with served(orchestrator, store) as server:
            answer = await post(server, chat("v2", user("Draw a cat")))

    assert text_of(answer) == "A cat:"
    # The worker's events carry no answer: the image comes from the output, once.
    assert of(answer, "file") == [
        {"type": "file", "mediaType": "image/png", "url": f"data:image/png;base64,{pixel}"}
    ]
