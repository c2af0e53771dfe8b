"""Streamed HTTP bodies for provider tests: chunks one by one, a cut, a close we can see; a
typed turn streamed over a provider."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx
from pydantic import BaseModel

from layer0 import TurnInput, TurnOutput
from neuron_turn import NeuronTurn, NeuronTurnConfig, OutputDelta, Provider
from neuron_turn.loop.events import ProviderDelta
from neuron_turn.loop.provider import ProviderResponse
from neuron_turn.loop.provider_stream import ProviderStreamEvent


class ChunkedBody(httpx.AsyncByteStream):
    """Sends `chunks` one at a time; then raises `fail` (a cut connection) or, with `hang`,
    waits forever. `closed` is set when the client closes the response."""

    def __init__(
        self,
        chunks: Sequence[bytes | str],
        *,
        fail: Exception | None = None,
        hang: bool = False,
    ) -> None:
        self.chunks = [c.encode() if isinstance(c, str) else c for c in chunks]
        self.fail = fail
        self.hang = hang
        self.sent = 0
        self.closed = asyncio.Event()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            self.sent += 1
            yield chunk
        if self.fail is not None:
            raise self.fail
        if self.hang:
            await asyncio.Event().wait()

    async def aclose(self) -> None:
        self.closed.set()


def client_for(
    body: ChunkedBody | bytes, *, status: int = 200, content_type: str = "text/event-stream"
) -> httpx.AsyncClient:
    """A client whose every request is answered with `body`."""

    def answer(request: httpx.Request) -> httpx.Response:
        headers = {"content-type": content_type}
        if isinstance(body, bytes):
            return httpx.Response(status, headers=headers, content=body)
        return httpx.Response(status, headers=headers, stream=body)

    return httpx.AsyncClient(transport=httpx.MockTransport(answer))


async def collect(
    events: AsyncIterator[ProviderStreamEvent],
) -> tuple[list[ProviderDelta], ProviderResponse]:
    """Read a provider stream to its end: its deltas, and the response it ended with."""
    deltas: list[ProviderDelta] = []
    final: ProviderResponse | None = None
    async for event in events:
        if isinstance(event, ProviderResponse):
            assert final is None, "a stream yields one response"
            final = event
        else:
            assert final is None, "no delta after the response"
            deltas.append(event)
    assert final is not None, "the stream ended without a response"
    return deltas, final


class City(BaseModel):
    """A typed answer for streamed-output tests."""

    name: str
    population: int
    districts: list[str] = []


PARIS_PIECES = ('{"name": "Paris", "pop', 'ulation": 2100', '000, "districts": ["Mar', 'ais"]}')
"""A typed answer in the pieces a provider streams it in."""
PARIS_AS_IT_GROWS = [
    City(name="Paris", population=2100000, districts=["Mar"]),
    City(name="Paris", population=2100000, districts=["Marais"]),
]
"""Its partials: not before the population is whole, then as each district grows."""


async def typed_partials(provider: Provider, model: str) -> tuple[list[Any], TurnOutput]:
    """Stream a turn over `provider` with `City` as its output type: its partials, its output."""
    turn = NeuronTurn(provider, config=NeuronTurnConfig(model=model), output_type=City)
    partials: list[Any] = []
    async with turn.stream(TurnInput(message="Paris?", trigger="user")) as events:
        async for event in events:
            if isinstance(event, OutputDelta):
                partials.append(event.value)
    return partials, events.output
