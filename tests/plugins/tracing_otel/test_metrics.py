"""Each model call records the GenAI client metrics: token usage and operation duration."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping

import pytest
from neuron_tracing_otel import instrument, uninstrument
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import Histogram as HistogramData
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader, Metric
from opentelemetry.sdk.trace import TracerProvider

from layer0 import NonRetryableError, RetryableError, TurnConfig, TurnInput
from neuron_turn import (
    NeuronTurn,
    ProviderAuthenticationError,
    ProviderRequest,
    ProviderResponse,
    RateLimitError,
    TokenUsage,
    ToolUsePart,
    TurnDone,
)
from neuron_turn.testing import (
    FunctionProvider,
    ScriptedProvider,
    text_response,
    tool_call_response,
)

from .scripts import QUESTION, calculator

TOKENS = "gen_ai.client.token.usage"
DURATION = "gen_ai.client.operation.duration"
TOKEN_BOUNDS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216,
                67108864)  # fmt: skip
DURATION_BOUNDS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48,
                   40.96, 81.92)  # fmt: skip
CALL = {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "scripted",
    "gen_ai.request.model": "test-model",
}


def _one_tool_call(chunk_size: int | None = None) -> ScriptedProvider:
    """Two model calls around one tool call, each answered by a model of its own name."""
    return ScriptedProvider(
        chunk_size=chunk_size,
        responses=[
            tool_call_response(
                ToolUsePart("call_1", "add", {"a": 17, "b": 25}),
                usage=TokenUsage(120, 30),
                model="test-model-0409",
            ),
            text_response("17 + 25 = 42", usage=TokenUsage(180, 12), model="test-model-0409"),
        ],
    )


def _metrics(reader: InMemoryMetricReader) -> dict[str, Metric]:
    data = reader.get_metrics_data()
    assert data is not None, "nothing was recorded"
    found = {
        metric.name: metric
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
    }
    return found


def _points(metric: Metric) -> list[HistogramDataPoint]:
    assert isinstance(metric.data, HistogramData)
    return list(metric.data.data_points)


def _by(points: list[HistogramDataPoint], key: str) -> dict[object, HistogramDataPoint]:
    return {dict(p.attributes or {}).get(key): p for p in points}


def _attributes(point: HistogramDataPoint) -> Mapping[str, object]:
    return dict(point.attributes or {})


async def test_two_model_calls_record_their_tokens_and_durations(
    provider: TracerProvider, meters: MeterProvider, metric_reader: InMemoryMetricReader
) -> None:
    instrument(tracer_provider=provider, meter_provider=meters, capture_content=True)

    started = time.perf_counter()
    output = await calculator(_one_tool_call()).execute(QUESTION)
    elapsed = time.perf_counter() - started

    assert output.exit_reason == "complete"
    found = _metrics(metric_reader)
    assert sorted(found) == [DURATION, TOKENS]  # the tool call records none

    assert found[TOKENS].unit == "{token}"
    tokens = _by(_points(found[TOKENS]), "gen_ai.token.type")
    assert sorted(tokens, key=str) == ["input", "output"]
    answered = {**CALL, "gen_ai.response.model": "test-model-0409"}
    assert _attributes(tokens["input"]) == {**answered, "gen_ai.token.type": "input"}
    assert (tokens["input"].count, tokens["input"].sum) == (2, 300)
    assert (tokens["output"].count, tokens["output"].sum) == (2, 42)
    assert tuple(tokens["input"].explicit_bounds) == TOKEN_BOUNDS
    # 120 and 180 input tokens both fall in (64, 256]; 30 in (16, 64], 12 in (4, 16].
    assert tokens["input"].bucket_counts[4] == 2
    assert (tokens["output"].bucket_counts[2], tokens["output"].bucket_counts[3]) == (1, 1)

    assert found[DURATION].unit == "s"
    (duration,) = _points(found[DURATION])
    assert _attributes(duration) == answered  # no content, session or error on a metric
    assert duration.count == 2
    assert 0 < duration.sum <= elapsed
    assert tuple(duration.explicit_bounds) == DURATION_BOUNDS


async def test_a_failing_model_call_records_its_duration_with_the_error_type(
    provider: TracerProvider, meters: MeterProvider, metric_reader: InMemoryMetricReader
) -> None:
    instrument(tracer_provider=provider, meter_provider=meters, capture_content=False)
    model = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("call_1", "add", {"a": 1, "b": 2})),
            RateLimitError("slow down", retry_after=2.0),
        ]
    )

    with pytest.raises(RetryableError):
        await calculator(model).execute(QUESTION)

    found = _metrics(metric_reader)
    durations = _by(_points(found[DURATION]), "error.type")
    assert set(durations) == {None, "RateLimitError"}
    assert _attributes(durations["RateLimitError"]) == {**CALL, "error.type": "RateLimitError"}
    assert durations["RateLimitError"].count == 1
    assert durations[None].count == 1
    # The failed call reported no usage: only the first call's tokens are counted.
    assert [p.count for p in _points(found[TOKENS])] == [1, 1]


async def test_a_refused_call_is_named_by_its_class_and_its_message_stays_out(
    provider: TracerProvider, meters: MeterProvider, metric_reader: InMemoryMetricReader
) -> None:
    instrument(tracer_provider=provider, meter_provider=meters, capture_content=True)
    refused = ProviderAuthenticationError("invalid x-api-key sk-ant-secret")
    model = ScriptedProvider([refused])

    with pytest.raises(NonRetryableError):
        await calculator(model).execute(QUESTION)

    found = _metrics(metric_reader)
    (duration,) = _points(found[DURATION])
    assert _attributes(duration) == {**CALL, "error.type": "ProviderAuthenticationError"}
    assert TOKENS not in found
    assert "sk-ant-secret" not in repr(_attributes(duration))


async def test_a_streamed_turn_records_the_same_metrics(
    provider: TracerProvider, meters: MeterProvider, metric_reader: InMemoryMetricReader
) -> None:
    instrument(tracer_provider=provider, meter_provider=meters)
    turn = calculator(_one_tool_call(chunk_size=3))

    events = [event async for event in turn.stream(QUESTION)]

    assert isinstance(events[-1], TurnDone)
    found = _metrics(metric_reader)
    tokens = _by(_points(found[TOKENS]), "gen_ai.token.type")
    assert (tokens["input"].sum, tokens["output"].sum) == (300, 42)
    assert [p.count for p in _points(found[DURATION])] == [2]


async def test_a_model_call_the_deadline_cut_short_records_cancelled(
    provider: TracerProvider, meters: MeterProvider, metric_reader: InMemoryMetricReader
) -> None:
    async def never(request: ProviderRequest) -> ProviderResponse:
        await asyncio.Event().wait()
        raise AssertionError("unreachable: the deadline cancels the call")

    turn = NeuronTurn(FunctionProvider(never))
    instrument(tracer_provider=provider, meter_provider=meters)

    started = time.perf_counter()
    output = await turn.execute(
        TurnInput(message="wait", trigger="user", config=TurnConfig(max_duration=50))
    )
    elapsed = time.perf_counter() - started

    assert output.exit_reason == "timeout"
    found = _metrics(metric_reader)
    (duration,) = _points(found[DURATION])
    assert _attributes(duration)["error.type"] == "cancelled"
    assert 0 < duration.sum <= elapsed
    assert TOKENS not in found


async def test_turns_after_uninstrument_record_no_metrics(
    provider: TracerProvider, meters: MeterProvider, metric_reader: InMemoryMetricReader
) -> None:
    instrument(tracer_provider=provider, meter_provider=meters)
    uninstrument()

    await calculator(_one_tool_call()).execute(QUESTION)

    assert metric_reader.get_metrics_data() is None
