"""A scripted turn with two tool calls, as GenAI spans: structure and attribute values."""

from __future__ import annotations

from neuron_tracing_otel import instrument, provider_name, uninstrument
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from neuron_turn.testing import FunctionProvider, ScriptedProvider

from .scripts import QUESTION, calculator, two_tool_calls


def _by_name(spans: tuple[ReadableSpan, ...]) -> dict[str, list[ReadableSpan]]:
    named: dict[str, list[ReadableSpan]] = {}
    for span in spans:
        named.setdefault(span.name, []).append(span)
    return named


async def test_a_turn_is_an_agent_span_over_its_model_and_tool_calls(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    instrument(tracer_provider=provider, capture_content=False)

    await calculator(two_tool_calls()).execute(QUESTION)

    spans = exporter.get_finished_spans()
    (agent,) = [s for s in spans if s.parent is None]
    assert agent.name == "invoke_agent calculator"
    children = sorted((s for s in spans if s.parent is not None), key=lambda s: s.start_time or 0)
    assert [s.name for s in children] == [
        "chat test-model",
        "execute_tool add",
        "execute_tool divide",
        "chat test-model",
    ]
    assert agent.context is not None
    for child in children:
        assert child.parent is not None
        assert child.parent.span_id == agent.context.span_id
        assert child.context is not None and child.context.trace_id == agent.context.trace_id
    assert len(spans) == 5


async def test_the_agent_span_carries_the_turns_totals(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    instrument(tracer_provider=provider, capture_content=False)

    await calculator(two_tool_calls()).execute(QUESTION)

    agent = _by_name(exporter.get_finished_spans())["invoke_agent calculator"][0]
    assert agent.kind == SpanKind.INTERNAL
    assert agent.status.status_code == StatusCode.UNSET
    assert dict(agent.attributes or {}) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "calculator",
        "gen_ai.request.model": "test-model",
        "gen_ai.provider.name": "scripted",
        "gen_ai.system": "scripted",
        "gen_ai.conversation.id": "s-42",
        "gen_ai.usage.input_tokens": 300,
        "gen_ai.usage.output_tokens": 42,
        "neuron.cost.usd": 0.002,
        "neuron.turn.exit_reason": "complete",
        "neuron.turn.model_calls": 2,
    }


async def test_each_chat_span_carries_its_own_call(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    instrument(tracer_provider=provider, capture_content=False)

    await calculator(two_tool_calls()).execute(QUESTION)

    first, second = sorted(
        _by_name(exporter.get_finished_spans())["chat test-model"], key=lambda s: s.start_time or 0
    )
    assert first.kind == SpanKind.CLIENT
    assert dict(first.attributes or {}) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "scripted",
        "gen_ai.system": "scripted",
        "gen_ai.conversation.id": "s-42",
        "gen_ai.request.model": "test-model",
        "gen_ai.request.max_tokens": 256,
        "gen_ai.output.type": "text",
        "gen_ai.response.model": "scripted",
        "gen_ai.response.finish_reasons": ("tool_call",),
        "gen_ai.usage.input_tokens": 120,
        "gen_ai.usage.output_tokens": 30,
        "gen_ai.usage.cache_read.input_tokens": 100,
        "neuron.cost.usd": 0.0012,
    }
    attributes = second.attributes or {}
    assert attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert (attributes["gen_ai.usage.input_tokens"], attributes["neuron.cost.usd"]) == (180, 0.0008)


async def test_each_tool_span_names_its_tool_and_call(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    instrument(tracer_provider=provider, capture_content=False)

    await calculator(two_tool_calls()).execute(QUESTION)

    (add,) = _by_name(exporter.get_finished_spans())["execute_tool add"]
    assert add.kind == SpanKind.INTERNAL
    assert add.status.status_code == StatusCode.UNSET
    assert dict(add.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "add",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": "Add two integers.",
        "gen_ai.provider.name": "scripted",
        "gen_ai.system": "scripted",
        "gen_ai.conversation.id": "s-42",
    }


async def test_spans_made_inside_a_tool_nest_under_its_span(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    from neuron_tool import ToolRegistry, tool
    from neuron_turn import NeuronTurn, ToolUsePart
    from neuron_turn.testing import text_response, tool_call_response

    tracer = provider.get_tracer("app")

    @tool
    async def lookup(key: str) -> str:
        """Look a key up (in a span of the application's own)."""
        with tracer.start_as_current_span("db query"):
            return key.upper()

    model = ScriptedProvider(
        [tool_call_response(ToolUsePart("c1", "lookup", {"key": "k"})), text_response("K")]
    )
    instrument(tracer_provider=provider, capture_content=False)

    await NeuronTurn(model, tools=ToolRegistry([lookup])).execute(QUESTION)

    named = _by_name(exporter.get_finished_spans())
    (query,) = named["db query"]
    (tool_span,) = named["execute_tool lookup"]
    assert query.parent is not None and tool_span.context is not None
    assert query.parent.span_id == tool_span.context.span_id


async def test_after_uninstrument_turns_make_no_spans(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    instrument(tracer_provider=provider, capture_content=False)
    uninstrument()

    await calculator(two_tool_calls()).execute(QUESTION)

    assert exporter.get_finished_spans() == ()


def test_the_provider_name_is_the_plugins_name_or_the_class_name() -> None:
    class AnthropicProvider:
        pass

    AnthropicProvider.__module__ = "neuron_provider_anthropic.provider"
    assert provider_name(AnthropicProvider()) == "anthropic"
    assert provider_name(ScriptedProvider([])) == "scripted"
    assert provider_name(FunctionProvider(lambda request: None)) == "function"  # type: ignore[arg-type, return-value]


async def test_lifecycle_events_are_events_on_the_agent_span(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    from dataclasses import replace

    instrument(tracer_provider=provider, capture_content=False)
    turn = calculator(two_tool_calls())
    turn.config = replace(turn.config, record_costs=True)

    await turn.execute(QUESTION)

    agent = _by_name(exporter.get_finished_spans())["invoke_agent calculator"][0]
    lifecycle = [dict(e.attributes or {}) for e in agent.events if e.name == "neuron.lifecycle"]
    assert [e["neuron.lifecycle.type"] for e in lifecycle] == ["cost_incurred", "cost_incurred"]
    assert '"cost":"0.0012"' in str(lifecycle[0]["neuron.lifecycle.data"]).replace(" ", "")
