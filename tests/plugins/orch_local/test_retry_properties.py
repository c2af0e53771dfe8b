"""Whatever fails between a model's calls, no tool run is lost or told twice, no message repeats.

Hypothesis writes a model's side of a turn with failures in between: calls
to a tool with a side effect, answers, rate limits, dropped connections,
refused requests, bad keys. The turn runs through `LocalOrchestrator`
(retries, a fallback chain of two models on one session), which keeps
what each failed attempt did and continues from it. Then the session is
read back: every time the tool ran is there once, with its result; the
user's message is there once; and the next turn on the session answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Final

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from layer0 import DispatchFailed, SessionScope, Turn, TurnError, TurnInput, TurnOutput
from layer0.testing import InMemoryStore
from neuron_orch_local import FallbackTurn, LocalOrchestrator, RetryPolicy
from neuron_tool import ToolRegistry, tool
from neuron_turn import (
    InvalidRequestError,
    NeuronTurn,
    ProviderAuthenticationError,
    ProviderConnectionError,
    ProviderRequest,
    ProviderResponse,
    RateLimitError,
    TextPart,
    ToolResultPart,
    ToolUsePart,
)
from neuron_turn.loop._convert import history_from_json
from neuron_turn.testing import FunctionProvider, text_response, tool_call_response

from ._doubles import user
from .test_retries import FakeClock

SESSION: Final = SessionScope(id="s1")

_FAILURES: Final[dict[str, Callable[[], Exception]]] = {
    "429": lambda: RateLimitError("429 too many requests", provider="p", retry_after=1.0),
    "dropped": lambda: ProviderConnectionError("connection reset", provider="p"),
    "too long": lambda: InvalidRequestError("prompt is too long", provider="p"),
    "bad key": lambda: ProviderAuthenticationError("invalid x-api-key", provider="p"),
}
# A step: the model calls `send` (once or twice in one answer), answers, or its call fails.
_STEP = (
    st.lists(st.sampled_from(["a", "b"]), min_size=1, max_size=2).map(tuple)
    | st.just("answer")
    | st.sampled_from(sorted(_FAILURES))
)


class Model:
    """The script's model: each call takes the next step; past its end, it answers."""

    def __init__(self, steps: list[object]) -> None:
        self.steps = steps
        self.calls = 0

    def respond(self, request: ProviderRequest) -> ProviderResponse:
        self.calls += 1
        step = self.steps.pop(0) if self.steps else "answer"
        if isinstance(step, tuple):
            parts = [
                ToolUsePart(f"m{self.calls}_{i}", "send", {"text": text})
                for i, text in enumerate(step)
            ]
            return tool_call_response(*parts)
        if step == "answer":
            return text_response("done")
        assert isinstance(step, str)
        raise _FAILURES[step]()


class Reading:
    """A turn around another that does not say it reads continuations."""

    def __init__(self, inner: Turn) -> None:
        self.inner = inner

    async def execute(self, input: TurnInput) -> TurnOutput:
        return await self.inner.execute(input)


async def _converse(steps: list[object], second_reads: bool) -> None:
    store, ran = InMemoryStore(), []

    @tool
    async def send(text: str) -> str:
        """Send `text` (a side effect: each run is numbered)."""
        ran.append(text)
        return f"sent#{len(ran)}"

    model = Model(list(steps))

    def agent() -> NeuronTurn:
        return NeuronTurn(FunctionProvider(model.respond), tools=ToolRegistry([send]), state=store)

    second: Turn = agent() if second_reads else Reading(agent())
    chain = FallbackTurn({"first": agent(), "second": second})
    orchestrator = LocalOrchestrator(
        {"main": chain}, store, retry=RetryPolicy(max_attempts=2), clock=FakeClock()
    )
    try:
        await orchestrator.dispatch("main", user("hi", session="s1"))
    except DispatchFailed as exc:
        assert isinstance(exc.__cause__, TurnError), exc

    stored = await store.read(SESSION, "messages")
    history = history_from_json(stored if isinstance(stored, list) else [])
    results = [p for m in history for p in m.content if isinstance(p, ToolResultPart)]
    # Every run of the tool is in the session once, each with its call.
    told = [r.content for r in results if r.content.startswith("sent#")]
    assert sorted(told) == sorted(f"sent#{n}" for n in range(1, len(ran) + 1)), (told, ran)
    calls = [p.id for m in history for p in m.content if isinstance(p, ToolUsePart)]
    assert len(set(calls)) == len(calls) and {r.tool_use_id for r in results} == set(calls)
    said = [
        p.text
        for m in history
        if m.role == "user"
        for p in m.content
        if isinstance(p, TextPart) and p.text == "hi"
    ]
    # Kept once when anything is (a turn failing before a tool ran keeps nothing);
    # continued, never asked again, unless a turn reading no continuation is given it.
    if second_reads:
        assert len(said) == (1 if history else 0), said
    else:
        assert len(said) >= (1 if history else 0), said
    # The next turn on the session reads all of it and answers.
    model.steps.clear()
    after = await orchestrator.dispatch("main", user("again", session="s1"))
    assert after.message.as_text() == "done"


@settings(
    deadline=None,
    derandomize=True,
    max_examples=150,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(_STEP, max_size=8), st.booleans())
def test_any_failures_between_model_calls_lose_no_tool_run_and_repeat_no_message(
    steps: list[object], second_reads: bool
) -> None:
    asyncio.run(_converse(steps, second_reads))
