"""Errors set the status of the span where they happened, and of the turn's when it fails."""

from __future__ import annotations

import asyncio

import pytest
from neuron_tracing_otel import instrument
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from layer0 import RetryableError, TurnConfig, TurnInput
from neuron_tool import ToolRegistry, tool
from neuron_turn import NeuronTurn, RateLimitError, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from .scripts import QUESTION, calculator, two_tool_calls


def _named(exporter: InMemorySpanExporter, name: str) -> ReadableSpan:
    (span,) = [s for s in exporter.get_finished_spans() if s.name == name]
    return span


async def test_a_failed_tool_call_marks_its_span_and_not_the_turns(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    instrument(tracer_provider=provider, capture_content=False)

    output = await calculator(two_tool_calls(divisor=0)).execute(QUESTION)

    assert output.exit_reason == "complete"
    divide = _named(exporter, "execute_tool divide")
    assert divide.status.status_code == StatusCode.ERROR
    assert divide.status.description == "the tool call failed"  # the error text is content
    assert (divide.attributes or {})["error.type"] == "tool_error"
    assert _named(exporter, "execute_tool add").status.status_code == StatusCode.UNSET
    assert _named(exporter, "invoke_agent calculator").status.status_code == StatusCode.UNSET


async def test_with_content_a_failed_tool_calls_status_says_why(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    instrument(tracer_provider=provider, capture_content=True)

    await calculator(two_tool_calls(divisor=0)).execute(QUESTION)

    assert "division by zero" in str(_named(exporter, "execute_tool divide").status.description)


async def test_a_provider_error_marks_the_chat_span_and_the_turn(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    instrument(tracer_provider=provider, capture_content=False)
    model = ScriptedProvider([RateLimitError("slow down", retry_after=2.0)])

    with pytest.raises(RetryableError):
        await calculator(model).execute(QUESTION)

    chat = _named(exporter, "chat test-model")
    assert chat.status.status_code == StatusCode.ERROR
    assert (chat.attributes or {})["error.type"] == "RateLimitError"
    assert [e.name for e in chat.events] == ["exception"]
    agent = _named(exporter, "invoke_agent calculator")
    assert agent.status.status_code == StatusCode.ERROR
    assert agent.status.description == "RetryableError: slow down"
    assert (agent.attributes or {})["error.type"] == "RetryableError"
    assert "gen_ai.usage.input_tokens" not in (agent.attributes or {})


async def test_work_cut_short_by_the_deadline_is_marked_cancelled(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    started = asyncio.Event()

    @tool
    async def hang() -> str:
        """Never finish."""
        started.set()
        await asyncio.Event().wait()
        return "never"

    model = ScriptedProvider([tool_call_response(ToolUsePart("c1", "hang", {}))])
    turn = NeuronTurn(model, tools=ToolRegistry([hang]))
    instrument(tracer_provider=provider, capture_content=False)

    output = await turn.execute(
        TurnInput(message="wait", trigger="user", config=TurnConfig(max_duration=50))
    )

    assert output.exit_reason == "timeout"
    hang_span = _named(exporter, "execute_tool hang")
    assert hang_span.status.status_code == StatusCode.ERROR
    assert (hang_span.attributes or {})["error.type"] == "cancelled"
    agent = _named(exporter, "invoke_agent neuron_turn")
    assert (agent.attributes or {})["neuron.turn.exit_reason"] == "timeout"


async def test_a_hook_halt_is_an_event_on_the_agent_span(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    from layer0 import Halt, HookContext, HookPoint
    from neuron_hooks import FunctionHook, HookRegistry

    async def stop(ctx: HookContext) -> Halt:
        return Halt(reason="policy says no")

    hooks = HookRegistry()
    hooks.add(FunctionHook(stop, points=[HookPoint.PRE_TOOL_USE], name="stop"))
    model = ScriptedProvider(
        [tool_call_response(ToolUsePart("c1", "add", {"a": 1, "b": 2})), text_response("x")]
    )
    turn = calculator(model)
    turn = NeuronTurn(model, tools=turn.tools, hooks=hooks, config=turn.config)
    instrument(tracer_provider=provider, capture_content=False)

    output = await turn.execute(QUESTION)

    agent = _named(exporter, "invoke_agent calculator")
    assert (agent.attributes or {})["neuron.turn.exit_reason"] == "observer_halt"
    halted = [e for e in agent.events if e.name == "neuron.hook_halted"]
    assert [dict(e.attributes or {}) for e in halted] == [{"neuron.reason": "policy says no"}]
    assert output.exit_reason != "complete"
