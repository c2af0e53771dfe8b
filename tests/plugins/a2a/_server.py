"""The agent the tests serve: a real server on a loopback port, called over real HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
from a2a.client import Client, ClientConfig, create_client
from a2a.helpers import new_text_message
from a2a.types import Message, Part, Role, SendMessageRequest, StreamResponse, Task

from layer0.testing import InMemoryStore
from neuron_a2a import serve_a2a
from neuron_orch_local import LocalOrchestrator
from neuron_tool import ToolRegistry
from neuron_turn import (
    NeuronTurn,
    NeuronTurnConfig,
    ProviderRequest,
    ProviderResponse,
    TextDelta,
)
from neuron_turn.testing import text_response
from tests.serving import running

TOKEN = "a2a-test-token-0123456789abcdef"


@dataclass
class Served:
    """A running server: its URL, the store and orchestrator behind it."""

    url: str
    store: InMemoryStore
    orchestrator: LocalOrchestrator
    model: Any
    token: str = TOKEN
    clients: list[Client] = field(default_factory=list)
    https: list[httpx.AsyncClient] = field(default_factory=list)

    async def client(self, *, streaming: bool = False, polling: bool = False) -> Client:
        """An SDK client that sends the token, reading the card first as any client does.

        `polling`: a send returns the task at once, as it starts.
        """
        http = httpx.AsyncClient(headers={"Authorization": f"Bearer {self.token}"}, timeout=10)
        config = ClientConfig(streaming=streaming, polling=polling, httpx_client=http)
        client = await create_client(self.url, client_config=config)
        self.clients.append(client)
        self.https.append(http)
        return client


@asynccontextmanager
async def serving(
    provider: Any,
    *,
    tools: Sequence[Any] = (),
    config: NeuronTurnConfig | None = None,
    output_type: Any = None,
    served_as: Callable[[LocalOrchestrator], Any] = lambda orchestrator: orchestrator,
    **options: Any,
) -> AsyncIterator[Served]:
    """Serve a `NeuronTurn` on `provider` in a `LocalOrchestrator`, on 127.0.0.1 port 0.

    `served_as` gives what is served in place of the orchestrator (a wrapper).
    """
    store = InMemoryStore()
    turn = NeuronTurn(
        provider,
        tools=ToolRegistry(list(tools)),
        state=store,
        config=config or NeuronTurnConfig(model="m"),
        output_type=output_type,
    )
    orchestrator = LocalOrchestrator({"helper": turn}, store)
    options.setdefault("token", TOKEN)
    async with served(served_as(orchestrator), **options) as url:
        served_agent = Served(url, store, orchestrator, provider, token=options["token"])
        try:
            yield served_agent
        finally:
            for client in served_agent.clients:
                await client.close()
            for http in served_agent.https:
                await http.aclose()


@asynccontextmanager
async def served(orchestrator: Any, **options: Any) -> AsyncIterator[str]:
    """Serve agent `helper` of `orchestrator` over A2A on 127.0.0.1; yield its URL.

    `options` go to `serve_a2a` (the token is `TOKEN` and the port 0, a free one,
    unless given).
    """
    options.setdefault("token", TOKEN)
    options.setdefault("port", 0)

    def serve(on_ready: Callable[[str], object]) -> Awaitable[None]:
        return serve_a2a(
            orchestrator,
            "helper",
            card_name="Helper",
            description="Answers questions.",
            on_ready=on_ready,
            **options,
        )

    async with running(serve) as url:
        yield url


class GatedModel:
    """Streams "Hel", then waits for the test to see it before it streams the rest."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        raise AssertionError("a streamed request must stream")

    async def stream(self, request: ProviderRequest) -> AsyncIterator[Any]:
        yield TextDelta("Hel")
        await self.gate.wait()
        yield TextDelta("lo!")
        yield text_response("Hello!")


def user_message(*parts: Part | str, context_id: str = "", task_id: str = "") -> SendMessageRequest:
    """A request holding a user message of `parts` (a string is a text part)."""
    message = Message(
        role=Role.ROLE_USER,
        message_id=new_text_message("").message_id,
        context_id=context_id,
        task_id=task_id,
        parts=[Part(text=p) if isinstance(p, str) else p for p in parts],
    )
    return SendMessageRequest(message=message)


async def send(client: Client, request: SendMessageRequest) -> Task:
    """Send `request` without streaming; return the task it made."""
    responses = [r async for r in client.send_message(request)]
    assert len(responses) == 1 and responses[0].HasField("task"), responses
    return responses[0].task


async def stream(
    client: Client,
    request: SendMessageRequest,
    on_event: Callable[[StreamResponse], Any] | None = None,
) -> list[StreamResponse]:
    """Send `request` streaming; return every event received."""
    events = []
    async for response in client.send_message(request):
        events.append(response)
        if on_event is not None:
            result = on_event(response)
            if asyncio.iscoroutine(result):
                await result
    return events
