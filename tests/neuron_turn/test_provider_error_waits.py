"""A provider error's `retry_after` is a wait an orchestrator can schedule: finite, 0 to a day.

Before, a server's `Retry-After: 1e300` (or an OpenAI reset of 1e300s) became
`retry_after=1e300`, and Temporal's worker failed converting the error
(OverflowError building its timedelta) instead of scheduling the retry.
"""

from __future__ import annotations

import asyncio
import math

import httpx
import pytest

from neuron_provider_openai import OpenAIProvider
from neuron_turn import ProviderMessage, ProviderRequest, TextPart
from neuron_turn.loop.provider_errors import MAX_RETRY_AFTER, ProviderError, RateLimitError


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        (1e300, MAX_RETRY_AFTER),
        (MAX_RETRY_AFTER + 1, MAX_RETRY_AFTER),
        (math.inf, None),
        (math.nan, None),
        (-5.0, 0.0),
        (2.5, 2.5),
        (None, None),
    ],
)
def test_a_wait_is_kept_within_zero_and_a_day(given: float | None, kept: float | None) -> None:
    assert RateLimitError("slow down", retry_after=given).retry_after == kept
    assert ProviderError("x", retry_after=given).retry_after == kept


def test_a_servers_huge_retry_after_becomes_a_days_wait() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(429, json={}, headers={"retry-after": "1e300"})

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    provider = OpenAIProvider("gpt-4o-mini", client=client, api_key="sk-x")
    request = ProviderRequest(model="", messages=[ProviderMessage("user", [TextPart("Hi")])])
    with pytest.raises(RateLimitError) as raised:
        asyncio.run(provider.complete(request))
    assert raised.value.retry_after == MAX_RETRY_AFTER
