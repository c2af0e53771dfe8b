"""Cost of large MCP tool results, by size; one JSON line per transport and size.

Run with `python bench/mcp_results.py [repeats]`. A tool answers N MiB of text; each
call is timed `repeats` times (default 3) and the median kept. `ours` is
`MCPClient` over stdio, `sdk` the MCP SDK's own `Client` and stdio transport for comparison,
`http` `MCPClient` against `serve_http` in this process. A cost linear in the
size shows as a flat `ms_per_mib`.

`python bench/mcp_results.py --serve` is the stdio server the scenarios start.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

from neuron_tool import ToolRegistry, tool
from neuron_tool.mcp import MCPClient, serve_http, serve_stdio

MIB = 1024 * 1024
SIZES_MIB = (1, 5, 10, 20)
CAP = 64 * MIB
SERVER = [sys.executable, str(Path(__file__).resolve()), "--serve"]


@tool
def text(size: int) -> str:
    """Answer `size` bytes of text."""
    return "x" * size


async def _median_seconds(call: Callable[[], Awaitable[Any]], repeats: int) -> tuple[float, float]:
    """Median wall and CPU seconds of `repeats` awaited calls, after one warm-up call."""
    await call()
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        await call()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def _line(transport: str, mib: int, wall: float, cpu: float | None) -> str:
    figures: dict[str, Any] = {
        "transport": transport,
        "mib": mib,
        "wall_s": round(wall, 3),
        "ms_per_mib": round(wall * 1000 / mib, 1),
    }
    if cpu is not None:
        figures["client_cpu_s"] = round(cpu, 3)
    return json.dumps(figures)


async def ours(repeats: int) -> None:
    command, *args = SERVER
    async with MCPClient.stdio(command, args, max_response_bytes=CAP, timeout=300) as client:
        for mib in SIZES_MIB:
            wall, cpu = await _median_seconds(
                partial(client.call_tool, "text", {"size": mib * MIB}),
                repeats,
            )
            print(_line("ours", mib, wall, cpu), flush=True)


async def sdk(repeats: int) -> None:
    command, *args = SERVER
    params = StdioServerParameters(command=command, args=args)
    async with Client(params, cache=None) as client:
        for mib in SIZES_MIB:
            wall, cpu = await _median_seconds(
                partial(client.call_tool, "text", {"size": mib * MIB}),
                repeats,
            )
            print(_line("sdk", mib, wall, cpu), flush=True)


async def http(repeats: int) -> None:
    token = secrets.token_urlsafe()
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    registry = ToolRegistry([text])
    server = asyncio.create_task(
        serve_http(registry, port=0, token=token, on_ready=ready.set_result)
    )
    try:
        url = await ready
        async with MCPClient.http(url, token=token, max_response_bytes=CAP, timeout=300) as client:
            for mib in SIZES_MIB:
                wall, _ = await _median_seconds(
                    partial(client.call_tool, "text", {"size": mib * MIB}),
                    repeats,
                )
                print(_line("http", mib, wall, None), flush=True)
    finally:
        server.cancel()
        await asyncio.wait([server])


async def main(repeats: int) -> None:
    for scenario in (ours, sdk, http):
        await scenario(repeats)


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        asyncio.run(serve_stdio(ToolRegistry([text]), name="bench"))
    else:
        asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 3))
