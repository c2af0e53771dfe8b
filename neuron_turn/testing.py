"""Test doubles for agents built on NeuronTurn: providers that need no network.

Use them in your own tests: `ScriptedProvider` plays back a fixed list of
responses and records every request; `FunctionProvider` answers with a
function of the request.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeAlias

from moneyed import Money

from layer0 import usd

from .loop.provider import (
    ContentPart,
    ProviderRequest,
    ProviderResponse,
    StopReason,
    TextPart,
    TokenUsage,
    ToolUsePart,
)
from .loop.provider_errors import ProviderError

__all__ = [
    "FunctionProvider",
    "ScriptExhaustedError",
    "ScriptedProvider",
    "text_response",
    "tool_call_response",
]

ResponseFunction: TypeAlias = Callable[
    [ProviderRequest], ProviderResponse | Awaitable[ProviderResponse]
]


class ScriptExhaustedError(ProviderError):
    """A `ScriptedProvider` was asked for more responses than it was given."""


def text_response(
    text: str,
    *,
    usage: TokenUsage | None = None,
    cost: Money | None = None,
    model: str = "scripted",
    stop_reason: StopReason = "end_turn",
) -> ProviderResponse:
    """Return a final answer holding `text` (a convenience for scripts)."""
    return ProviderResponse(
        content=(TextPart(text),),
        stop_reason=stop_reason,
        usage=usage or TokenUsage(),
        model=model,
        cost=usd() if cost is None else cost,
    )


def tool_call_response(
    *calls: ToolUsePart,
    text: str | None = None,
    usage: TokenUsage | None = None,
    cost: Money | None = None,
    model: str = "scripted",
) -> ProviderResponse:
    """Return a response asking for `calls` (a convenience for scripts)."""
    content: list[ContentPart] = [TextPart(text)] if text else []
    content.extend(calls)
    return ProviderResponse(
        content=tuple(content),
        stop_reason="tool_use",
        usage=usage or TokenUsage(),
        model=model,
        cost=usd() if cost is None else cost,
    )


class ScriptedProvider:
    """Returns queued responses in order and records every request it got.

    An exception in the script is raised instead of returned, to script
    provider failures. Running out raises `ScriptExhaustedError`, naming how
    many responses were scripted, rather than returning something made up.
    """

    def __init__(self, responses: Iterable[ProviderResponse | BaseException]) -> None:
        """Create a provider that will answer with `responses`, one per call."""
        self._script = list(responses)
        self._next = 0
        self.requests: list[ProviderRequest] = []

    @property
    def remaining(self) -> int:
        """How many scripted responses have not been used."""
        return len(self._script) - self._next

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Record `request` and return (or raise) the next scripted item."""
        self.requests.append(request)
        if self._next >= len(self._script):
            raise ScriptExhaustedError(
                f"ScriptedProvider ran out: call {self._next + 1} but only "
                f"{len(self._script)} response(s) were scripted",
                provider="scripted",
            )
        item = self._script[self._next]
        self._next += 1
        if isinstance(item, BaseException):
            raise item
        return item


class FunctionProvider:
    """Answers each request with `fn(request)`; `fn` may be sync or async."""

    def __init__(self, fn: ResponseFunction) -> None:
        """Create a provider that calls `fn` for every request."""
        self.fn = fn
        self.requests: list[ProviderRequest] = []

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Record `request` and return what `fn` makes of it."""
        self.requests.append(request)
        result = self.fn(request)
        if inspect.isawaitable(result):
            return await result
        return result
