"""The GenAI client metrics of model calls: token usage and operation duration.

Two histograms, as the conventions name them: `gen_ai.client.token.usage`
(`{token}`, one measurement per call for `gen_ai.token.type` `input` and one
for `output`) and `gen_ai.client.operation.duration` (`s`, one per call, with
`error.type` when it failed), with the bucket boundaries the conventions
advise. Their attributes are a call's operation, provider and models only:
never content, never the session, which would make every conversation a
time series of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from opentelemetry import metrics
from opentelemetry.metrics import MeterProvider
from opentelemetry.util.types import AttributeValue

from neuron_turn import TokenUsage

from . import _semconv as sc

__all__ = ["ClientMetrics"]

_SCOPE: Final = "neuron_tracing_otel"


class ClientMetrics:
    """The two histograms every model call of a traced turn records into."""

    def __init__(self, meter_provider: MeterProvider | None) -> None:
        """Make the instruments with `meter_provider` (None: the global one)."""
        meter = metrics.get_meter(_SCOPE, meter_provider=meter_provider)
        self._tokens = meter.create_histogram(
            sc.TOKEN_USAGE,
            unit=sc.TOKEN_UNIT,
            description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=sc.TOKEN_BUCKETS,
        )
        self._duration = meter.create_histogram(
            sc.OPERATION_DURATION,
            unit=sc.DURATION_UNIT,
            description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=sc.DURATION_BUCKETS,
        )

    def call_done(
        self, attributes: Mapping[str, AttributeValue], seconds: float, usage: TokenUsage
    ) -> None:
        """Record a model call that answered: its duration and its input and output tokens."""
        self._duration.record(seconds, attributes)
        self._tokens.record(usage.input_tokens, {**attributes, sc.TOKEN_TYPE: sc.INPUT})
        self._tokens.record(usage.output_tokens, {**attributes, sc.TOKEN_TYPE: sc.OUTPUT})

    def call_failed(
        self, attributes: Mapping[str, AttributeValue], seconds: float, error_type: str
    ) -> None:
        """Record a model call that raised or was cut short: its duration and `error.type`."""
        self._duration.record(seconds, {**attributes, sc.ERROR_TYPE: error_type})
