"""Record the default model's real answers for the unit tests.

    python -m tests.plugins.provider_local.record

Runs every case of `_support.CASES` through a `LocalProvider` on the default
model (temperature 0) and writes each request body and the server's answer,
in order, to `tests/cassettes/local/outputs.json`.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from neuron_provider_local import LocalProvider

from ._support import CASES, RECORDED


class _Recording(httpx.AsyncBaseTransport):
    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.exchanges: list[dict[str, Any]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        content = await response.aread()
        self.exchanges.append(
            {
                "request": json.loads(request.content),
                "status": response.status_code,
                "response": json.loads(content),
            }
        )
        return httpx.Response(response.status_code, headers=response.headers, content=content)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def record() -> dict[str, list[dict[str, Any]]]:
    transport = _Recording()
    recorded: dict[str, list[dict[str, Any]]] = {}
    async with httpx.AsyncClient(transport=transport, timeout=600) as client:
        async with LocalProvider("default", client=client) as provider:
            for case in CASES:
                transport.exchanges = []
                response = await provider.complete(case.request())
                print(f"{case.name}: {response.stop_reason} {response.content}")
                recorded[case.name] = transport.exchanges
    return recorded


def main() -> None:
    recorded = asyncio.run(record())
    RECORDED.parent.mkdir(parents=True, exist_ok=True)
    RECORDED.write_text(json.dumps(recorded, indent=1, ensure_ascii=False) + "\n", "utf-8")
    print(f"wrote {RECORDED}")


if __name__ == "__main__":
    main()
