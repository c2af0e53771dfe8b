"""The agent the AG-UI tests serve: a real server on a loopback port, called over real HTTP.

Every event the client reads is parsed from the SSE stream and validated with
the official `ag_ui.core` models, so a malformed event fails the test.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from ag_ui.core import BaseEvent, Event, EventType
from neuron_ag_ui import serve_ag_ui
from pydantic import JsonValue, TypeAdapter

from layer0.testing import InMemoryStore
from neuron_orch_local import LocalOrchestrator
from neuron_tool import ToolRegistry
from neuron_turn import (
    NeuronTurn,
    NeuronTurnConfig,
    ProviderRequest,
    ProviderResponse,
    TextDelta,
    ToolUsePart,
)
from neuron_turn.testing import text_response
from tests.serving import running

TOKEN = "ag-ui-test-token-0123456789abcdef"
EVENTS: TypeAdapter[Any] = TypeAdapter(Event)


@dataclass
class Served:
    """A running server: its URL, and the store, orchestrator and model behind it."""

    url: str
    store: InMemoryStore
    orchestrator: LocalOrchestrator
    model: Any
    token: str = TOKEN

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


@asynccontextmanager
async def serving(
    provider: Any,
    *,
    tools: Sequence[Any] = (),
    config: NeuronTurnConfig | None = None,
    output_type: Any = None,
    **options: Any,
) -> AsyncIterator[Served]:
    """Serve a `NeuronTurn` on `provider` in a `LocalOrchestrator`, on 127.0.0.1 port 0.

    `options` go to `serve_ag_ui` (the token is `TOKEN` unless given).
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

    def serve(on_ready: Callable[[str], object]) -> Awaitable[None]:
        return serve_ag_ui(orchestrator, "helper", port=0, on_ready=on_ready, **options)

    async with running(serve) as url:
        yield Served(url, store, orchestrator, provider, token=options["token"])


def user(text: str | list[JsonValue], id: str | None = None) -> dict[str, JsonValue]:
    return {"id": id or str(uuid.uuid4()), "role": "user", "content": text}


def assistant(text: str = "", calls: Sequence[ToolUsePart] = ()) -> dict[str, JsonValue]:
    message: dict[str, JsonValue] = {"id": str(uuid.uuid4()), "role": "assistant"}
    if text:
        message["content"] = text
    if calls:
        message["toolCalls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.input)},
            }
            for c in calls
        ]
    return message


def tool_message(call_id: str, content: str, error: str | None = None) -> dict[str, JsonValue]:
    message: dict[str, JsonValue] = {
        "id": str(uuid.uuid4()),
        "role": "tool",
        "toolCallId": call_id,
        "content": content,
    }
    if error is not None:
        message["error"] = error
    return message


def run_input(thread: str, *messages: dict[str, JsonValue], **fields: Any) -> dict[str, Any]:
    """A `RunAgentInput` of thread `thread` holding `messages` (camelCase `fields` beside)."""
    return {"threadId": thread, "runId": str(uuid.uuid4()), "messages": list(messages), **fields}


async def run(served: Served, body: Any, **headers: str) -> list[BaseEvent]:
    """POST a run; return its events, each validated as an AG-UI event."""
    async with httpx.AsyncClient(timeout=10) as http:
        async with http.stream(
            "POST", served.url + "/", json=body, headers={**served.headers(), **headers}
        ) as response:
            assert response.status_code == 200, (await response.aread()).decode()
            assert response.headers["content-type"].startswith("text/event-stream")
            return [event async for event in events_of(response)]


async def events_of(response: httpx.Response) -> AsyncIterator[BaseEvent]:
    """The events of an SSE response, validated with `ag_ui.core`."""
    async for line in response.aiter_lines():
        if line.startswith("data: "):
            yield EVENTS.validate_json(line[len("data: ") :])


def types(events: Sequence[BaseEvent]) -> list[str]:
    """The events' types, as their wire names."""
    return [EventType(e.type).value for e in events]


def of(events: Sequence[BaseEvent], kind: EventType) -> list[Any]:
    """The events of type `kind`."""
    return [e for e in events if e.type == kind]


def text_of(events: Sequence[BaseEvent]) -> str:
    """The text the events stream, all messages joined."""
    return "".join(e.delta for e in of(events, EventType.TEXT_MESSAGE_CONTENT))


class GatedModel:
    """Streams "Hel", then waits for the test's gate; says when its stream is cancelled."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.waiting = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        raise AssertionError("a streamed request must stream")

    async def stream(self, request: ProviderRequest) -> AsyncIterator[Any]:
        yield TextDelta("Hel")
        self.waiting.set()
        try:
            await self.gate.wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        yield TextDelta("lo!")
        yield text_response("Hello!")
