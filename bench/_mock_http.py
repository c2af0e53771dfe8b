"""A mock HTTP client for the provider benchmarks, and their `httpx` floor scenario.

Every request to the client gets the same canned 200 JSON answer from an
`httpx.MockTransport`, so a provider benchmark times the provider's own code,
never a network or a model.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
from _timing import Measure, Scenario


def mock_client(body: Any, content_type: str = "application/json") -> httpx.AsyncClient:
    """An `httpx.AsyncClient` answering every request with `body` encoded as JSON."""
    content = json.dumps(body).encode()
    headers = {"content-type": content_type}

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=content, headers=headers)

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


def httpx_floor(
    measure: Measure,
    url: str,
    body: Any,
    payload: bytes,
    *,
    scenario: str = "httpx_floor",
    content_type: str = "application/json",
) -> Scenario:
    """Baseline scenario: POST `payload` to `url` through `mock_client(body)`, plus `json.loads`.

    It is what a provider's `complete` does minus the provider's own code, so what a
    provider scenario costs above it is the provider's request mapping, response
    parsing and pricing.
    """

    async def floor(calls: int) -> dict[str, Any]:
        async with mock_client(body, content_type) as client:

            async def post() -> object:
                response = await client.post(url, content=payload)
                return json.loads(response.content)

            return await measure(scenario, post, calls)

    return floor
