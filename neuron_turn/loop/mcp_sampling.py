"""`ProviderSampler`: MCP servers' sampling requests, answered by a turn's `Provider`.

An MCP server may ask the client's model to write something in the middle of
a tool call (`neuron_tool.mcp.sampling`). `MCPClient(..., sampling=ProviderSampler(provider,
model=...))` answers with the same provider a `NeuronTurn` uses: the server's
system prompt and messages become a `ProviderRequest` offering no tools, and
the response's text the answer.

A server must not spend the client's money unbounded: the model writes at
most `max_tokens` tokens whatever the server asks, and the sampler answers at
most `max_requests` requests over its life, refusing the rest. What each call
cost is logged at INFO with the server's name and added to `cost`, and counted
in the tokens and cost of the turn whose tool call the server is answering
(`RunContext.charge`), so that turn's `max_cost` and token limits see it; a
request an older server sends on its back channel, or one outside a turn's
tool call, is counted in `cost` only.

The server's stop sequences are sent to a provider that takes them
(`takes_sampling`), one to four non-empty ones, the most any API takes;
the answer is cut before the first one the model wrote either way.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from moneyed import Money

from layer0 import Base64Source, usd

from .model_requests import check_model_request
from .provider import (
    ContentPart,
    ImagePart,
    Provider,
    ProviderMessage,
    ProviderRequest,
    ProviderResponse,
    TextPart,
)
from .sampling import Sampling

if TYPE_CHECKING:
    # The MCP SDK takes ~0.5 s to import: only a sampler that answers needs it.
    from neuron_tool.mcp import SamplingAnswer, SamplingMessage, SamplingRequest

__all__ = ["ProviderSampler"]

_log = logging.getLogger(__name__)
_MAX_STOPS: Final = 4

DEFAULT_MAX_TOKENS: Final = 4096
"""The most tokens a server may have the model write per request, unless told otherwise."""
DEFAULT_MAX_REQUESTS: Final = 100
"""The most sampling requests one sampler answers, unless told otherwise."""


class ProviderSampler:
    """A sampling handler (`neuron_tool.mcp.SamplingHandler`) that runs a `Provider`'s model.

    Why: a server's tool that needs a model's words then uses the client's
    model, key and bill, within limits the client sets, as pydantic-ai's
    `MCPServer(sampling_model=...)` does.
    """

    def __init__(
        self,
        provider: Provider,
        *,
        model: str = "",
        max_tokens: int = DEFAULT_MAX_TOKENS,
        max_requests: int | None = DEFAULT_MAX_REQUESTS,
    ) -> None:
        """Answer with `provider`'s `model` (`""`: the provider's default, as for a turn).

        Args:
            provider: The model API, e.g. a turn's `NeuronTurn.provider`.
            model: The model asked for; a server's `model_hints` are not followed.
            max_tokens: The most tokens the model writes per request; a server
                asking for more gets at most this many (a `maxTokens` stop).
            max_requests: The most requests answered over the sampler's life;
                later ones are refused, saying so (None: no limit).

        Raises:
            ValueError: `max_tokens` or `max_requests` is not a positive whole number.
        """
        _check_positive("max_tokens", max_tokens)
        if max_requests is not None:
            _check_positive("max_requests", max_requests)
        self.provider = provider
        self.model = model
        self.max_tokens = max_tokens
        self.max_requests = max_requests
        self.requests = 0
        """The requests taken so far (those refused past `max_requests` not counted)."""
        self.cost: Money = usd()
        """What the answered requests cost, in USD; a model whose price is unknown adds nothing."""

    def __repr__(self) -> str:
        return (
            f"ProviderSampler({self.provider!r}, model={self.model!r},"
            f" max_tokens={self.max_tokens}, max_requests={self.max_requests})"
        )

    async def __call__(self, request: SamplingRequest) -> SamplingAnswer:
        """Run the model on `request` and answer with its text.

        Raises:
            SamplingRefused: `max_requests` are spent, or the model stopped in a
                way MCP cannot say (a content filter).
            ProviderError: The model call failed (the server reads only its class).
        """
        from neuron_tool.mcp import SamplingRefused

        if self.max_requests is not None and self.requests >= self.max_requests:
            raise SamplingRefused(
                f"this client answers at most {self.max_requests} sampling requests, all spent"
            )
        check_model_request(self.provider)
        self.requests += 1
        response = await self.provider.complete(self._provider_request(request))
        self._account(request.server, response)
        return _answer(response, self.model, request.stop_sequences)

    def _provider_request(self, request: SamplingRequest) -> ProviderRequest:
        return ProviderRequest(
            model=self.model,
            messages=[_message(message) for message in request.messages],
            max_tokens=min(request.max_tokens, self.max_tokens),
            temperature=request.temperature,
            system=request.system_prompt or None,
            sampling=self._stops(request.stop_sequences),
        )

    def _stops(self, stops: Sequence[str]) -> Sampling | None:
        # The server is untrusted: more than an API takes would fail a request
        # that cutting the answer serves as well.
        if not 0 < len(stops) <= _MAX_STOPS or not all(isinstance(s, str) and s for s in stops):
            return None
        if "stop_sequences" not in getattr(self.provider, "takes_sampling", ()):
            return None
        return Sampling(stop_sequences=tuple(stops))

    def _account(self, server: str, response: ProviderResponse) -> None:
        from neuron_tool.mcp import charge_for_sampling

        if response.cost is not None:
            self.cost = self.cost + response.cost
        usage = response.usage
        charged = charge_for_sampling(
            response.cost, input_tokens=usage.input_tokens, output_tokens=usage.output_tokens
        )
        _log.info(
            "MCP server %r sampled model %r: %d input and %d output tokens, cost %s (%s)",
            server,
            response.model or self.model,
            usage.input_tokens,
            usage.output_tokens,
            "unknown" if response.cost is None else f"${response.cost.amount:.4f}",
            "counted in the turn" if charged else "outside any turn's budget",
        )


def _check_positive(name: str, value: object) -> None:
    if isinstance(value, bool) or not (isinstance(value, int) and value > 0):
        raise ValueError(f"{name} must be a positive whole number, got {value!r}")


def _message(message: SamplingMessage) -> ProviderMessage:
    parts: list[ContentPart] = []
    for part in message.content:
        if isinstance(part, str):
            parts.append(TextPart(part))
        else:
            data = base64.b64encode(part.data).decode("ascii")
            parts.append(ImagePart(Base64Source(data=data), part.media_type))
    return ProviderMessage(message.role, parts)


def _answer(response: ProviderResponse, model: str, stops: Sequence[str]) -> SamplingAnswer:
    """The response's text as MCP's answer, cut before the first of `stops` it holds.

    Why cut here: a provider that takes no stop sequences (or more than were
    sent) lets the model write past one; the server still gets only what it
    asked for.
    """
    from neuron_tool.mcp import SamplingAnswer, SamplingRefused

    text = "".join(part.text for part in response.content if isinstance(part, TextPart))
    if response.stop_reason in ("tool_use", "content_filter"):
        raise SamplingRefused(f"the model stopped with {response.stop_reason!r}, not an answer")
    cut = min((i for i in (text.find(stop) for stop in stops if stop) if i >= 0), default=-1)
    name = response.model or model
    if cut >= 0:
        return SamplingAnswer(text[:cut], model=name, stop_reason="stopSequence")
    if response.stop_reason == "max_tokens":
        return SamplingAnswer(text, model=name, stop_reason="maxTokens")
    return SamplingAnswer(text, model=name, stop_reason="endTurn")
