"""The agent the AI SDK tests serve: a real server on a loopback port, called over real HTTP.

Every chunk the client reads is parsed from the SSE stream and checked to be
one of the UI message stream's chunk types with its required fields (the node
test checks them against the AI SDK's own schema), and the stream must end
with `data: [DONE]`.
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
from neuron_ui_vercel import serve_vercel_ai
from pydantic import JsonValue

from layer0.testing import InMemoryStore
from neuron_orch_local import LocalOrchestrator
from neuron_tool import ExternalTool, ToolRegistry
from neuron_turn import NeuronTurn, NeuronTurnConfig, ProviderRequest, ProviderResponse, TextDelta
from neuron_turn.testing import text_response
from tests.serving import running

TOKEN = "vercel-ai-test-token-0123456789abcdef"
PICK_COLOUR = ExternalTool(
    "pick_colour",
    "Ask the user to pick a colour in their browser.",
    {
        "type": "object",
        "properties": {"choices": {"type": "array", "items": {"type": "string"}}},
        "required": ["choices"],
    },
)
# The fields each chunk type must have (ai@6's uiMessageChunkSchema; data-* parts apart).
REQUIRED = {
    "start": set(),
    "finish": set(),
    "start-step": set(),
    "finish-step": set(),
    "text-start": {"id"},
    "text-delta": {"id", "delta"},
    "text-end": {"id"},
    "reasoning-start": {"id"},
    "reasoning-delta": {"id", "delta"},
    "reasoning-end": {"id"},
    "error": {"errorText"},
    "tool-input-start": {"toolCallId", "toolName"},
    "tool-input-delta": {"toolCallId", "inputTextDelta"},
    "tool-input-available": {"toolCallId", "toolName", "input"},
    "tool-approval-request": {"approvalId", "toolCallId"},
    "tool-output-available": {"toolCallId", "output"},
    "tool-output-error": {"toolCallId", "errorText"},
    "tool-output-denied": {"toolCallId"},
    "file": {"url", "mediaType"},
}
FINISH_REASONS = {"stop", "length", "content-filter", "tool-calls", "error", "other"}


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

    `options` go to `serve_vercel_ai` (the token is `TOKEN` unless given).
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
        return serve_vercel_ai(orchestrator, "helper", port=0, on_ready=on_ready, **options)

    async with running(serve) as url:
        yield Served(url, store, orchestrator, provider, token=options["token"])


def user(*parts: str | dict[str, JsonValue], id: str | None = None) -> dict[str, JsonValue]:
    """A user message of `parts` (a string is a text part)."""
    made: list[JsonValue] = [
        {"type": "text", "text": p} if isinstance(p, str) else p for p in parts
    ]
    return {"id": id or str(uuid.uuid4()), "role": "user", "parts": made}


def assistant(*parts: dict[str, JsonValue], id: str = "a1") -> dict[str, JsonValue]:
    return {"id": id, "role": "assistant", "parts": list(parts)}


def tool_part(
    name: str, call: str, state: str, input: JsonValue = None, **fields: JsonValue
) -> dict[str, JsonValue]:
    """A tool part as the client keeps it (`tool-<name>`)."""
    return {"type": f"tool-{name}", "toolCallId": call, "state": state, "input": input, **fields}


def chat(chat_id: str, *messages: dict[str, JsonValue], **fields: Any) -> dict[str, Any]:
    """A chat request of chat `chat_id` holding `messages` (other body `fields` beside)."""
    return {"id": chat_id, "messages": list(messages), "trigger": "submit-message", **fields}


async def post(served: Served, body: Any, **headers: str) -> list[dict[str, Any]]:
    """POST a chat request; return its chunks, each checked, the stream ended by [DONE]."""
    async with httpx.AsyncClient(timeout=10) as http:
        async with http.stream(
            "POST", served.url + "/", json=body, headers={**served.headers(), **headers}
        ) as response:
            assert response.status_code == 200, (await response.aread()).decode()
            assert response.headers["content-type"].startswith("text/event-stream")
            assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
            lines = [line async for line in response.aiter_lines() if line]
    assert lines[-1] == "data: [DONE]", lines[-1]
    return [checked(line) for line in lines[:-1]]


async def chunks_of(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    """The chunks of an SSE response as they arrive, checked."""
    async for line in response.aiter_lines():
        if line.startswith("data: {"):
            yield checked(line)


def checked(line: str) -> dict[str, Any]:
    """The chunk of one SSE line, failing on a type or a field the AI SDK does not take."""
    assert line.startswith("data: "), line
    chunk = json.loads(line[len("data: ") :])
    kind = chunk["type"]
    if kind.startswith("data-"):
        assert "data" in chunk, chunk
    else:
        assert kind in REQUIRED, f"unknown chunk type {kind!r}"
        assert REQUIRED[kind] <= chunk.keys(), chunk
    if kind == "finish":
        assert chunk["finishReason"] in FINISH_REASONS, chunk
    return chunk


def types(chunks: Sequence[dict[str, Any]]) -> list[str]:
    return [c["type"] for c in chunks]


def of(chunks: Sequence[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [c for c in chunks if c["type"] == kind]


def text_of(chunks: Sequence[dict[str, Any]]) -> str:
    return "".join(c["delta"] for c in of(chunks, "text-delta"))


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
