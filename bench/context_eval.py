"""Whether compaction keeps what matters: one JSON line per context strategy.

Run with `python bench/context_eval.py` (about a minute; `--steps N` to change
the session's length). A scripted model reads pages with a tool, hundreds
of times; each page is large, and the first three carry a fact (a code, a
region, a name). The model counts tokens as 3 characters each (the loop's
estimate says 4), so only the calibrated measure keeps the requests under
the limit. Reported per strategy: the peak request size by the model's own
count, how many compactions and summary calls it took and what those cost,
and which planted facts are still in the last request.

`--local` adds a short real run: the summaries are written by the embedded
local model (`local:default`), and the line shows the summary it wrote.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from neuron_context_strategies import SUMMARY_PREFIX, SUMMARY_SYSTEM, Summarize

from layer0 import TurnInput, usd
from neuron_hooks import HookRegistry, LifecycleEvent
from neuron_tool import ToolRegistry, tool
from neuron_turn import (
    ContextStrategy,
    NeuronTurn,
    NeuronTurnConfig,
    ProviderMessage,
    ProviderRequest,
    ProviderResponse,
    TextPart,
    TokenUsage,
    ToolResultPart,
    ToolUsePart,
    get_context_strategy,
)
from neuron_turn.testing import FunctionProvider, text_response, tool_call_response

FACTS = {
    1: "the vault code is 7731",
    2: "the deploy region is eu-west-3",
    3: "the on-call engineer is Ines",
}
STRATEGIES = ("none", "sliding_window", "clear_tool_results", "summarize", "tiered")
CALL_COST = "0.002"
SUMMARY_COST = "0.001"


@tool
async def fetch(n: int) -> str:
    """Return page `n`: about 4,200 characters, a fact on the first three."""
    fact = f"Note: {FACTS[n]}. " if n in FACTS else ""
    return f"page {n}. {fact}" + "lorem ipsum " * 350


def model_tokens(request: ProviderRequest) -> int:
    """The scripted model's own count: 3 characters a token, schemas included."""
    chars = len(request.system or "")
    for schema in request.tools:
        chars += len(schema.name) + len(schema.description) + len(json.dumps(schema.input_schema))
    for message in request.messages:
        for part in message.content:
            if isinstance(part, TextPart):
                chars += len(part.text)
            elif isinstance(part, ToolUsePart):
                chars += len(part.name) + len(json.dumps(part.input))
            elif isinstance(part, ToolResultPart):
                chars += len(part.content)
    return math.ceil(chars / 3)


def text_of(messages: Sequence[ProviderMessage]) -> str:
    """Every text and tool result of a conversation, for finding facts in it."""
    out: list[str] = []
    for message in messages:
        for part in message.content:
            if isinstance(part, TextPart):
                out.append(part.text)
            elif isinstance(part, ToolResultPart):
                out.append(part.content)
    return "\n".join(out)


@dataclass
class Session:
    """The scripted model: reads `steps` pages, then answers; summarises faithfully."""

    steps: int
    tool: str = "fetch"
    calls: list[ProviderRequest] = field(default_factory=list)
    summaries: int = 0

    def respond(self, request: ProviderRequest) -> ProviderResponse:
        usage = TokenUsage(model_tokens(request), 20)
        if request.system == SUMMARY_SYSTEM:
            self.summaries += 1
            seen = text_of(request.messages)
            kept = [fact for fact in FACTS.values() if fact in seen]
            summary = " ".join([*kept, "The agent is reading pages with fetch."])
            return text_response(summary, usage=usage, cost=usd(SUMMARY_COST))
        self.calls.append(request)
        n = len(self.calls)
        if n > self.steps:
            return text_response("read them all", usage=usage, cost=usd(CALL_COST))
        call = ToolUsePart(f"call-{n}", self.tool, {"n": n})
        return tool_call_response(call, usage=usage, cost=usd(CALL_COST))


class Counter:
    """Counts compactions as the lifecycle events report them."""

    def __init__(self) -> None:
        self.compactions = 0

    async def on_lifecycle(self, event: LifecycleEvent) -> None:
        if event.type == "compaction_complete":
            self.compactions += 1


async def evaluate(name: str, strategy: ContextStrategy, *, steps: int, limit: int) -> dict:  # type: ignore[type-arg]
    """Run the session through `strategy` and return its figures."""
    session = Session(steps)
    hooks = HookRegistry()
    counter = Counter()
    hooks.add_lifecycle_observer(counter)
    turn = NeuronTurn(
        FunctionProvider(session.respond),
        tools=ToolRegistry([fetch]),
        hooks=hooks,
        context=strategy,
        config=NeuronTurnConfig(model="scripted", max_turns=steps + 1, context_limit=limit),
    )
    started = time.perf_counter()
    output = await turn.execute(TurnInput(message="Read every page.", trigger="user"))
    last = text_of(session.calls[-1].messages)
    return {
        "strategy": name,
        "steps": steps,
        "exit": str(output.exit_reason),
        "limit": limit,
        "peak_tokens": max(model_tokens(r) for r in session.calls),
        "over_limit_calls": sum(1 for r in session.calls if model_tokens(r) > limit),
        "compactions": counter.compactions,
        "summary_calls": session.summaries,
        "summary_cost": str((usd(SUMMARY_COST) * session.summaries).amount),
        "total_cost": str(output.metadata.cost.amount),
        "facts_kept": [fact for fact in FACTS.values() if fact in last],
        "seconds": round(time.perf_counter() - started, 2),
    }


@tool
async def fetch_short(n: int) -> str:
    """Return page `n`: about 600 characters, a fact on the first three."""
    fact = f"Note: {FACTS[n]}. " if n in FACTS else ""
    return f"page {n}. {fact}" + "lorem ipsum " * 50


async def local_summary(limit: int) -> dict:  # type: ignore[type-arg]
    """A short run whose summaries the embedded local model writes (small pages: it is slow)."""
    session = Session(steps=8, tool="fetch_short")
    strategy = Summarize(model="local:default", max_summary_tokens=120)
    turn = NeuronTurn(
        FunctionProvider(session.respond),
        tools=ToolRegistry([fetch_short]),
        context=strategy,
        config=NeuronTurnConfig(model="scripted", max_turns=20, context_limit=limit),
    )
    started = time.perf_counter()
    try:
        await turn.execute(TurnInput(message="Read every page.", trigger="user"))
    finally:
        await strategy.aclose()
    last = text_of(session.calls[-1].messages)
    summary = next(
        (
            part.text
            for message in session.calls[-1].messages
            for part in message.content
            if isinstance(part, TextPart) and part.text.startswith(SUMMARY_PREFIX)
        ),
        "",
    )
    return {
        "strategy": "summarize(local:default)",
        "steps": 8,
        "limit": limit,
        "summary_calls": strategy.calls,
        "facts_kept": [fact for fact in FACTS.values() if fact in last],
        "summary": summary[:600],
        "seconds": round(time.perf_counter() - started, 2),
    }


async def main() -> None:
    """Print one JSON line per strategy (and one for the local model with --local)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--limit", type=int, default=12_000)
    parser.add_argument("--local", action="store_true", help="also summarise with local:default")
    args = parser.parse_args()
    for name in STRATEGIES:
        strategy = get_context_strategy(name)
        print(json.dumps(await evaluate(name, strategy, steps=args.steps, limit=args.limit)))
    if args.local:
        print(json.dumps(await local_summary(limit=1_500)))


if __name__ == "__main__":
    asyncio.run(main())
