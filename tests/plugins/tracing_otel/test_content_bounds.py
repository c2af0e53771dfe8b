"""Captured content is bounded: a tool's megabytes never become a span attribute whole.

A tool can return megabytes (a file read whole), and with content capture on
every later model call's `gen_ai.input.messages` repeats it; uncut, one turn
put tens of MB on its spans, past what OTLP receivers take in one request
(the batch, other turns' spans with it, is then refused).
"""

from __future__ import annotations

import json

from neuron_tracing_otel import MAX_CONTENT_CHARS, instrument
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from layer0 import TurnInput
from neuron_tool import ToolRegistry, tool
from neuron_turn import NeuronTurn, NeuronTurnConfig, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

_HUGE = 4 * 1024 * 1024


@tool
async def read_log(lines: str) -> str:
    """Read the whole log."""
    return "x" * _HUGE


def _turn() -> NeuronTurn:
    model = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("c1", "read_log", {"lines": "y" * _HUGE})),
            text_response("z" * _HUGE),
        ]
    )
    config = NeuronTurnConfig(model="test-model", agent="reader")
    return NeuronTurn(model, tools=ToolRegistry([read_log]), config=config)


async def test_a_tool_result_of_megabytes_is_cut_on_every_span_and_says_so(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    instrument(tracer_provider=provider, capture_content=True)

    await _turn().execute(TurnInput(message="Read the log.", trigger="user"))

    spans = exporter.get_finished_spans()
    assert len(spans) == 4
    for span in spans:
        for name, value in (span.attributes or {}).items():
            assert len(str(value)) < 4 * MAX_CONTENT_CHARS, (span.name, name)
    tool_span = next(s for s in spans if s.name == "execute_tool read_log")
    result = str((tool_span.attributes or {})["gen_ai.tool.call.result"])
    assert result.startswith("x" * 1000)
    assert result.endswith(f"… [{_HUGE:,} characters in all]")
    arguments = json.loads(str((tool_span.attributes or {})["gen_ai.tool.call.arguments"]))
    assert arguments["lines"].endswith(f"… [{_HUGE:,} characters in all]")
    second = [s for s in spans if s.name == "chat test-model"][1]
    history = json.loads(str((second.attributes or {})["gen_ai.input.messages"]))
    assert history[-1]["parts"][0]["response"].endswith(f"… [{_HUGE:,} characters in all]")


async def test_a_tool_call_id_of_megabytes_is_cut_with_content_capture_off(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    instrument(tracer_provider=provider, capture_content=False)
    model = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("c" * _HUGE, "read_log", {"lines": "1"})),
            text_response("done"),
        ]
    )
    turn = NeuronTurn(model, tools=ToolRegistry([read_log]), config=NeuronTurnConfig(model="m"))

    await turn.execute(TurnInput(message="Read the log.", trigger="user"))

    tool_span = next(s for s in exporter.get_finished_spans() if s.name == "execute_tool read_log")
    call_id = str((tool_span.attributes or {})["gen_ai.tool.call.id"])
    assert call_id.startswith("c" * 1000) and call_id.endswith(f"[{_HUGE:,} characters in all]")
    assert len(call_id) < 2 * MAX_CONTENT_CHARS
