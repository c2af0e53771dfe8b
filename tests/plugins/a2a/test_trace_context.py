"""A remote agent's turn joins its caller's trace: W3C trace context across A2A."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from neuron_tracing_otel import instrument, uninstrument
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from layer0 import Content, TurnInput
from neuron_a2a import RemoteAgent
from neuron_turn.testing import ScriptedProvider, text_response

from ._server import TOKEN, serving

pytestmark = pytest.mark.asyncio

REMOTE_TURN = "invoke_agent neuron_turn"
"""The span of the served agent's turn (the only turn here: `RemoteAgent` is not traced)."""


@pytest.fixture
def traced() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    """Turns traced into memory for the test; tracing off again after it."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrument(tracer_provider=provider, capture_content=False)
    yield provider, exporter
    uninstrument()


async def test_the_remote_turn_is_a_child_of_the_span_its_caller_was_in(
    traced: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    provider, exporter = traced
    tracer = provider.get_tracer("caller")
    async with serving(ScriptedProvider([text_response("Paris.")])) as served:
        async with RemoteAgent(served.url, token=TOKEN) as remote:
            with tracer.start_as_current_span("caller") as caller:
                question = TurnInput(message=Content("Capital of France?"), trigger="user")
                await remote.execute(question)

    (remote_turn,) = [s for s in exporter.get_finished_spans() if s.name == REMOTE_TURN]
    context = caller.get_span_context()
    assert remote_turn.context is not None and remote_turn.parent is not None
    assert remote_turn.context.trace_id == context.trace_id
    assert remote_turn.parent.span_id == context.span_id
    assert remote_turn.parent.is_remote  # it came over the wire, not through this task


async def test_a_request_carrying_no_trace_starts_a_trace_of_its_own(
    traced: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    _, exporter = traced
    async with serving(ScriptedProvider([text_response("Paris.")])) as served:
        async with RemoteAgent(served.url, token=TOKEN) as remote:
            await remote.execute(TurnInput(message=Content("Capital?"), trigger="user"))

    (remote_turn,) = [s for s in exporter.get_finished_spans() if s.name == REMOTE_TURN]
    assert remote_turn.parent is None
