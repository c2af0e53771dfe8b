"""A long scripted session: a model that reads pages with a tool, facts planted early."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from neuron_context_strategies import SUMMARY_SYSTEM

from layer0 import usd
from neuron_tool import tool
from neuron_turn import (
    ProviderMessage,
    ProviderRequest,
    ProviderResponse,
    TextPart,
    TokenUsage,
    ToolResultPart,
    ToolUsePart,
)
from neuron_turn.testing import FunctionProvider, text_response, tool_call_response

FACTS = {
    1: "FACT-1: the vault code is 7731",
    2: "FACT-2: the deploy region is eu-west-3",
    3: "FACT-3: the on-call engineer is Ines",
}
PINNED = "PINNED: never deploy on Fridays"


def true_tokens(request: ProviderRequest) -> int:
    """The test model's own count: 3 characters a token (the loop's estimate says 4)."""
    chars = len(request.system or "")
    for schema in request.tools:
        chars += len(schema.name) + len(schema.description) + len(json.dumps(schema.input_schema))
    for message in request.messages:
        chars += sum(_chars(part) for part in message.content)
    return math.ceil(chars / 3)


def _chars(part: object) -> int:
    if isinstance(part, TextPart):
        return len(part.text)
    if isinstance(part, ToolUsePart):
        return len(part.name) + len(str(part.input))
    if isinstance(part, ToolResultPart):
        return len(part.content)
    return 0


@tool
async def fetch(n: int) -> str:
    """Return page `n`: large, with a fact on the first pages."""
    fact = FACTS.get(n, "")
    return f"page {n}. {fact} " + "lorem ipsum " * 350


@dataclass
class LongSession:
    """The scripted model: `steps` calls of `fetch`, then an answer; writes summaries on request.

    Every request it gets is kept, split into the turn's calls and the summary calls.
    """

    steps: int
    calls: list[ProviderRequest] = field(default_factory=list)
    summaries: list[ProviderRequest] = field(default_factory=list)

    def provider(self) -> FunctionProvider:
        return FunctionProvider(self.respond)

    def respond(self, request: ProviderRequest) -> ProviderResponse:
        usage = TokenUsage(true_tokens(request), 20)
        if request.system == SUMMARY_SYSTEM:
            self.summaries.append(request)
            return text_response(_summary(request), usage=usage, cost=usd("0.001"))
        self.calls.append(request)
        n = len(self.calls)
        if n > self.steps:
            return text_response("all pages read", usage=usage, cost=usd("0.002"))
        part = ToolUsePart(f"call-{n}", "fetch", {"n": n})
        return tool_call_response(part, usage=usage, cost=usd("0.002"))


def _summary(request: ProviderRequest) -> str:
    """A faithful summariser: keeps every FACT line it is shown."""
    text = "\n".join(p.text for m in request.messages for p in m.content if isinstance(p, TextPart))
    facts = [fact for fact in FACTS.values() if fact in text]
    return " ".join([*facts, "The agent has been reading pages with fetch."])


def context_text(messages: list[ProviderMessage]) -> str:
    """All text a request carries, tool results included."""
    out: list[str] = []
    for message in messages:
        for part in message.content:
            if isinstance(part, TextPart):
                out.append(part.text)
            elif isinstance(part, ToolResultPart):
                out.append(part.content)
    return "\n".join(out)
