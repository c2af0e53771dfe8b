"""Agents for the Temporal tests: NeuronTurns on function providers, and a few bare Turns.

Function providers answer from the request alone, so an agent behaves the
same on every attempt, replay and dispatch. Shared with the worker process
of the durability test.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import JsonValue

from layer0 import (
    CustomExit,
    EffectPolicy,
    NonRetryableError,
    StateReader,
    Turn,
    TurnInput,
    TurnMetadata,
    TurnOutput,
    usd,
)
from neuron_tool import ToolRegistry, tool
from neuron_turn import (
    ApprovalPolicy,
    NeuronTurn,
    NeuronTurnConfig,
    ProviderRequest,
    ProviderResponse,
    RateLimitError,
    TextPart,
    TokenUsage,
    ToolResultPart,
    ToolUsePart,
)
from neuron_turn.loop.effect_tools import declare_effect
from neuron_turn.testing import (
    FunctionProvider,
    ScriptedProvider,
    text_response,
    tool_call_response,
)

Calls = Sequence[tuple[str, Mapping[str, JsonValue]]]

COST = usd("0.00030")
"""What every model call of these agents costs: a scale a float would lose."""


def user_text(request: ProviderRequest) -> str:
    """Return the text of the last user message that has text (this turn's input)."""
    for message in reversed(request.messages):
        texts = [part.text for part in message.content if isinstance(part, TextPart)]
        if message.role == "user" and texts:
            return " ".join(texts)
    return ""


def two_step(
    calls: Callable[[str], Calls], final: Callable[[str], str]
) -> Callable[[ProviderRequest], ProviderResponse]:
    """A model that first calls `calls(text)` (if any), then answers `final(text)`."""

    def respond(request: ProviderRequest) -> ProviderResponse:
        text = user_text(request)
        usage = TokenUsage(input_tokens=10, output_tokens=5)
        answered = any(isinstance(p, ToolResultPart) for p in request.messages[-1].content)
        wanted = [] if answered else list(calls(text))
        if not wanted:
            return text_response(final(text), usage=usage, cost=COST)
        parts = [
            ToolUsePart(id=f"call-{i}", name=n, input=dict(a)) for i, (n, a) in enumerate(wanted)
        ]
        return tool_call_response(*parts, usage=usage, cost=COST)

    return respond


def agent(
    respond: Callable[[ProviderRequest], ProviderResponse], *, state: StateReader | None = None
) -> NeuronTurn:
    """A NeuronTurn over a function provider, granted every effect."""
    config = NeuronTurnConfig(model="fn", effect_policy=EffectPolicy.everything())
    return NeuronTurn(FunctionProvider(respond), state=state, config=config)


def planner_agents(state: StateReader | None) -> dict[str, Turn]:
    """The planner scenario: a planner writes its plan and delegates to two agents."""

    def plan(text: str) -> Calls:
        return [
            ("write_memory", {"scope": "global", "key": "plan", "value": {"task": text}}),
            ("delegate", {"agent": "researcher", "message": f"research {text}"}),
            ("delegate", {"agent": "writer", "message": f"draft {text}"}),
        ]

    def research(text: str) -> Calls:
        return [("write_memory", {"scope": "global", "key": "research", "value": text})]

    def draft(text: str) -> Calls:
        return [("write_memory", {"scope": "global", "key": "draft", "value": text})]

    return {
        "planner": agent(two_step(plan, lambda t: f"planned: {t}"), state=state),
        "researcher": agent(two_step(research, lambda t: f"researched: {t}"), state=state),
        "writer": agent(two_step(draft, lambda t: f"drafted: {t}"), state=state),
    }


def handoff_agents(state: StateReader | None) -> dict[str, Turn]:
    """Triage hands the conversation to billing, which answers."""

    def triage(text: str) -> Calls:
        return [("handoff", {"agent": "billing", "state": {"reason": "refund"}})]

    return {
        "triage": agent(two_step(triage, lambda t: "handing off"), state=state),
        "billing": agent(two_step(lambda t: [], lambda t: f"billing got: {t}"), state=state),
    }


class DeclaringTurn:
    """A hand-written Turn declaring, unchecked, the effects `calls(text)` would have a model call.

    A model's effect-tool call the worker would refuse is refused as the model
    makes it; this turn's effects meet only the worker's checks after the turn.
    """

    def __init__(self, calls: Callable[[str], Calls]) -> None:
        self.calls = calls

    async def execute(self, input: TurnInput) -> TurnOutput:
        """Declare the effects of the calls for the input's text."""
        text = input.message.as_text() or ""
        everything = EffectPolicy.everything()
        effects = [
            declare_effect(name, dict(arguments), policy=everything, session=input.session)[0]
            for name, arguments in self.calls(text)
        ]
        return _output("declared", "complete").model_copy(update={"effects": effects})


class WaiterTurn:
    """Asks to wait for a signal on its first turn; answers with the signal's data after."""

    async def execute(self, input: TurnInput) -> TurnOutput:
        """Wait on a user or task trigger; echo the signal metadata on a signal trigger."""
        if input.trigger == "signal":
            signal: Any = input.metadata["signal"] if isinstance(input.metadata, dict) else None
            return _output(f"woken by {signal['signal_type']}: {signal['data']}", "complete")
        return _output("waiting", CustomExit(name="await_signal"))


def sender_agent() -> NeuronTurn:
    """Signals the workflow named in its message, then answers."""

    def send(text: str) -> Calls:
        target = text.split()[-1]
        return [("signal", {"target": target, "signal_type": "go", "data": {"from": "sender"}})]

    return agent(two_step(send, lambda t: "sent"))


def _output(text: str, reason: Any) -> TurnOutput:
    return TurnOutput(message=text, exit_reason=reason, metadata=TurnMetadata.zero())


def file_tools(
    tool_log: Path,
    *,
    on_read: Callable[[], None] | None = None,
    delete_after: asyncio.Event | None = None,
) -> ToolRegistry:
    """`read_file` and `delete_file`, each appending a line to `tool_log` when it runs.

    `on_read` is called when `read_file` runs: a test can wait for that moment.
    `delete_after`: `delete_file` waits for it before it runs, so a test can act
    while the turn is held there.
    """

    @tool
    async def read_file(path: str) -> str:
        """Read a file."""
        with tool_log.open("a", encoding="utf-8") as log:
            log.write(f"read {path}\n")
        if on_read is not None:
            on_read()
        return f"contents of {path}"

    @tool
    async def delete_file(path: str) -> str:
        """Delete a file."""
        if delete_after is not None:
            await delete_after.wait()
        with tool_log.open("a", encoding="utf-8") as log:
            log.write(f"delete {path}\n")
        return f"deleted {path}"

    return ToolRegistry([read_file, delete_file])


def cleaner_agent(
    tool_log: Path, *, state: StateReader | None = None, delete_after: asyncio.Event | None = None
) -> NeuronTurn:
    """Reads one file and deletes another in one response; deleting needs approval.

    Each tool appends a line to `tool_log` when it runs, so a test counts the
    runs (see `file_tools` for `delete_after`). The final answer lists the
    results the model got back.
    """

    def respond(request: ProviderRequest) -> ProviderResponse:
        last = request.messages[-1].content
        results = [p for m in request.messages for p in m.content if isinstance(p, ToolResultPart)]
        if not any(isinstance(p, ToolResultPart) for p in last):
            return tool_call_response(
                ToolUsePart("c1", "read_file", {"path": "notes.txt"}),
                ToolUsePart("c2", "delete_file", {"path": "old.log"}),
                cost=COST,
            )
        return text_response("; ".join(r.content for r in results), cost=COST)

    config = NeuronTurnConfig(
        model="fn",
        effect_policy=EffectPolicy.everything(),
        approval=ApprovalPolicy.of(["delete_*"]),
    )
    return NeuronTurn(
        FunctionProvider(respond),
        tools=file_tools(tool_log, delete_after=delete_after),
        state=state,
        config=config,
    )


def twice_pausing_cleaner(tool_log: Path, state: StateReader) -> NeuronTurn:
    """Deletes `a.log` (call c1), then `b.log` (c2), one response each, each needing approval."""
    model = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("c1", "delete_file", {"path": "a.log"})),
            tool_call_response(ToolUsePart("c2", "delete_file", {"path": "b.log"})),
            text_response("both gone"),
        ]
    )
    config = NeuronTurnConfig(
        model="scripted",
        effect_policy=EffectPolicy.everything(),
        approval=ApprovalPolicy.of(["delete_*"]),
    )
    return NeuronTurn(model, tools=file_tools(tool_log), state=state, config=config)


def rate_limited_agent(
    tool_log: Path,
    *,
    state: StateReader | None,
    fail: int = 1,
    retry_after: float = 0.05,
    error: Exception | None = None,
) -> NeuronTurn:
    """Reads a file, then is rate limited (or fails with `error`) `fail` times, then answers.

    Its answer says what it read.

    The tool appends a line to `tool_log` when it runs, so a test counts the runs.
    """
    failures = [fail]

    def respond(request: ProviderRequest) -> ProviderResponse:
        if not any(isinstance(p, ToolResultPart) for m in request.messages for p in m.content):
            return tool_call_response(ToolUsePart("c1", "read_file", {"path": "notes.txt"}))
        if failures[0] > 0:
            failures[0] -= 1
            if error is not None:
                raise error
            raise RateLimitError("429 rate limited", provider="fn", retry_after=retry_after)
        return text_response(f"read it; {len(request.messages)} messages", cost=COST)

    config = NeuronTurnConfig(model="fn")
    return NeuronTurn(
        FunctionProvider(respond), tools=file_tools(tool_log), state=state, config=config
    )


def stalling_agent(
    tool_log: Path, *, state: StateReader | None, stalled: asyncio.Event
) -> NeuronTurn:
    """Reads a file, then calls `wait_for_reply`, which sets `stalled` and never returns.

    Given that call's result (a continuation of the cancelled turn), it answers
    with the results it got back.
    """

    @tool
    async def wait_for_reply() -> str:
        """Wait for a reply."""
        with tool_log.open("a", encoding="utf-8") as log:
            log.write("wait\n")
        stalled.set()
        await asyncio.Event().wait()  # until cancelled
        raise AssertionError("unreachable")

    def respond(request: ProviderRequest) -> ProviderResponse:
        results = [p for m in request.messages for p in m.content if isinstance(p, ToolResultPart)]
        if not results:
            return tool_call_response(ToolUsePart("c1", "read_file", {"path": "notes.txt"}))
        if len(results) == 1:
            return tool_call_response(ToolUsePart("c2", "wait_for_reply", {}))
        return text_response("; ".join(r.content for r in results), cost=COST)

    tools = file_tools(tool_log)
    tools.register(wait_for_reply)
    config = NeuronTurnConfig(model="fn")
    return NeuronTurn(FunctionProvider(respond), tools=tools, state=state, config=config)


def lost_attempt_agent(
    tool_log: Path, *, state: StateReader | None, stalled: asyncio.Event
) -> NeuronTurn:
    """Reads a file; its next model call, the first time, sets `stalled` and never returns.

    So its attempt is lost after the tool ran (it times out); given the read's
    result again, it answers with how many messages it saw.
    """

    async def respond(request: ProviderRequest) -> ProviderResponse:
        if not any(isinstance(p, ToolResultPart) for m in request.messages for p in m.content):
            return tool_call_response(ToolUsePart("c1", "read_file", {"path": "notes.txt"}))
        if not stalled.is_set():
            stalled.set()
            await asyncio.Event().wait()  # until the attempt is given up
        return text_response(f"read it; {len(request.messages)} messages", cost=COST)

    config = NeuronTurnConfig(model="fn")
    return NeuronTurn(
        FunctionProvider(respond), tools=file_tools(tool_log), state=state, config=config
    )


class StuckAgent:
    """A delegated agent that fails; with `reached`, it sets it and waits for good instead."""

    def __init__(self, reached: asyncio.Event | None = None) -> None:
        self.reached = reached

    async def execute(self, input: TurnInput) -> TurnOutput:
        """Fail, or wait for good once `reached` is set."""
        if self.reached is None:
            raise NonRetryableError("the child broke")
        self.reached.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def declaring_lead(state: StateReader) -> NeuronTurn:
    """Calls `delegate` (to "child": declared only, when nobody answers it) and
    `write_memory` (k1 = 1) in one response, then answers "asked"."""
    provider = ScriptedProvider(
        [
            tool_call_response(
                ToolUsePart("c1", "delegate", {"agent": "child", "message": "go"}),
                ToolUsePart("c2", "write_memory", {"key": "k1", "value": 1}),
            ),
            text_response("asked"),
        ]
    )
    config = NeuronTurnConfig(effect_policy=EffectPolicy.everything())
    return NeuronTurn(provider, state=state, config=config)
