"""The server a provider calls, as `server.address` and `server.port` on chat spans and metrics."""

from __future__ import annotations

import httpx
from neuron_tracing_otel import instrument, server_attributes
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from layer0 import TurnInput
from neuron_provider_anthropic import AnthropicProvider
from neuron_provider_openai import OpenAIProvider
from neuron_turn import NeuronTurn, NeuronTurnConfig
from neuron_turn.testing import ScriptedProvider

_COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "local-model",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}
    ],
    "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
}


class _Named:
    def __init__(self, base_url: object) -> None:
        self.base_url = base_url


def test_the_server_is_the_host_and_port_of_the_providers_base_url() -> None:
    assert server_attributes(AnthropicProvider("claude-sonnet-4-5", api_key="sk-test")) == {
        "server.address": "api.anthropic.com",
        "server.port": 443,
    }
    local = OpenAIProvider(base_url="http://localhost:11434/v1")
    assert server_attributes(local) == {"server.address": "localhost", "server.port": 11434}
    assert server_attributes(_Named("http://[::1]/v1")) == {
        "server.address": "::1",
        "server.port": 80,
    }


def test_credentials_in_the_url_stay_out_and_a_url_without_a_server_gives_nothing() -> None:
    with_key = _Named("https://user:sk-secret@gateway.example:8443/v1")
    assert server_attributes(with_key) == {
        "server.address": "gateway.example",
        "server.port": 8443,
    }
    assert server_attributes(_Named("https://gateway.example:port/v1")) == {}
    assert server_attributes(_Named("/relative/path")) == {}
    assert server_attributes(_Named(None)) == {}
    assert server_attributes(ScriptedProvider([])) == {}
    # An unknown scheme has no default port: the address alone.
    assert server_attributes(_Named("unix+http://socket.local/v1")) == {
        "server.address": "socket.local"
    }


async def test_a_chat_span_and_its_metrics_name_the_server_called(
    provider: TracerProvider,
    exporter: InMemorySpanExporter,
    meters: MeterProvider,
    metric_reader: InMemoryMetricReader,
) -> None:
    instrument(tracer_provider=provider, meter_provider=meters)
    answer = httpx.MockTransport(lambda request: httpx.Response(200, json=_COMPLETION))
    async with httpx.AsyncClient(transport=answer) as client:
        model = OpenAIProvider(base_url="http://127.0.0.1:8765/v1", client=client)
        turn = NeuronTurn(model, config=NeuronTurnConfig(model="local-model"))
        output = await turn.execute(TurnInput(message="hello", trigger="user"))

    assert output.message.as_text() == "hi"
    server = {"server.address": "127.0.0.1", "server.port": 8765}
    spans = {span.name: dict(span.attributes or {}) for span in exporter.get_finished_spans()}
    assert spans["chat local-model"].items() >= server.items()
    [agent] = [attributes for name, attributes in spans.items() if name.startswith("invoke_agent")]
    assert "server.address" not in agent  # the agent itself runs here
    data = metric_reader.get_metrics_data()
    assert data is not None
    points = [
        dict(point.attributes or {})
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        for point in metric.data.data_points
    ]
    assert points and all(point.items() >= server.items() for point in points)
