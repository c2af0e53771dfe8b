"""What the tests of providers over HTTP share: a recording mock transport, a tool, a message."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from neuron_tool import tool
from neuron_turn.loop.provider import ProviderMessage, TextPart


@tool
def get_weather(city: str) -> str:
    """Return the current weather in a city."""
    return "Sunny, 18 C, light wind from the west"


def user(text: str) -> ProviderMessage:
    return ProviderMessage("user", [TextPart(text)])


class Recorder:
    """A MockTransport handler that answers from a queue and keeps every request."""

    def __init__(self, *responses: httpx.Response | Callable[[httpx.Request], httpx.Response]):
        self.responses = list(responses)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.responses.pop(0) if len(self.responses) > 1 else self.responses[0]
        return answer(request) if callable(answer) else answer

    @property
    def body(self) -> dict[str, Any]:
        """The JSON body of the last request."""
        return json.loads(self.requests[-1].content)


def json_response(body: Any, status: int = 200, **headers: str) -> httpx.Response:
    return httpx.Response(status, json=body, headers=headers)
