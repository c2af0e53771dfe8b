"""What tool sources cost a step and a gateway request; one JSON line per scenario.

Run with `python bench/tool_sources.py [steps]`. Forty MCP-like tools (object
schemas of three to six described properties, enums, a nested object) are
registered anew on every step of a run (`for_step`) and on every request a
gateway serves (`for_run`), which is where each tool's input-schema validator
used to be compiled again:

- `step_same_tools`: a per-step source giving the same 40 tool objects each step;
- `step_fresh_tools`: one giving 40 new objects with new, equal schema dicts each
  step, as an `MCPClient` with `cache_lists=False` (or any JSON decoding) does;
- `step_prefixed_tools`: the same tools through `prefixed_tools` (new wrappers each step);
- `gateway_for_run`: the registry a gateway asks on every request (fresh tools);
- `gateway_tools_list` and `gateway_tools_call`: `tools/list` and `tools/call`
  through `serve_http` on loopback, from an `MCPClient` that never caches.

`ms_per_step` (and `ms_per_request`) is wall time; `cpu_ms` is the process's CPU.
"""

from __future__ import annotations

import asyncio
import copy
import gc
import itertools
import json
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

from pydantic import JsonValue

from neuron_tool import RunContext, ToolAnnotations, ToolDyn, ToolRegistry, tool_source
from neuron_tool.mcp import MCPClient, serve_http
from neuron_tool.tool_views import prefixed_tools

TOOLS: Final = 40
DEFAULT_STEPS: Final = 300
REQUESTS: Final = 200
WARMUP: Final = 20
TOKEN: Final = "bench-token-0123456789abcdef"


def _schema(index: int) -> dict[str, JsonValue]:
    """An MCP server's kind of input schema: described properties, an enum, a nested object."""
    properties: dict[str, JsonValue] = {
        "query": {"type": "string", "description": f"What tool {index} looks for.", "minLength": 1},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
        "order": {"type": "string", "enum": ["asc", "desc", "relevance"]},
    }
    for extra in range(index % 4):
        properties[f"filter_{extra}"] = {
            "type": "object",
            "properties": {"field": {"type": "string"}, "value": {"type": ["string", "number"]}},
            "required": ["field"],
            "additionalProperties": False,
        }
    return {"type": "object", "properties": properties, "required": ["query"]}


SCHEMAS: Final = [_schema(index) for index in range(TOOLS)]
ARGUMENTS: Final[dict[str, JsonValue]] = {"query": "neuron", "limit": 3, "order": "asc"}


class McpLikeTool:
    """A tool as an MCP bridge makes one: a name, a description, a schema dict, `call`."""

    __slots__ = ("description", "input_schema", "name")

    output_schema: dict[str, JsonValue] | None = None
    annotations: ToolAnnotations | None = None

    def __init__(self, index: int, schema: dict[str, JsonValue]) -> None:
        self.name = f"tool_{index}"
        self.description = f"Search the records of kind {index}."
        self.input_schema = schema

    async def call(self, input: JsonValue) -> JsonValue:
        return "ok"


SAME: Final = [McpLikeTool(index, schema) for index, schema in enumerate(SCHEMAS)]


def fresh_tools() -> list[ToolDyn]:
    """New tool objects with new, equal schema dicts: what a listing not cached gives."""
    return [McpLikeTool(index, copy.deepcopy(schema)) for index, schema in enumerate(SCHEMAS)]


def fresh_pool(size: int) -> Callable[[], Sequence[ToolDyn]]:
    """`fresh_tools()` made `size` times ahead, given in turn: their making is not timed."""
    made = itertools.cycle([fresh_tools() for _ in range(size)])
    # Out of the collector's sight: walking the pool's objects is no cost a real source has.
    gc.collect()
    gc.freeze()
    return lambda: next(made)


async def _timed(
    scenario: str, unit: str, times: int, once: Callable[[], Awaitable[object]]
) -> dict[str, Any]:
    for _ in range(WARMUP):
        await once()
    wall, cpu = time.perf_counter_ns(), time.process_time_ns()
    for _ in range(times):
        await once()
    wall, cpu = time.perf_counter_ns() - wall, time.process_time_ns() - cpu
    return {
        "scenario": scenario,
        f"ms_per_{unit}": round(wall / times / 1e6, 4),
        "cpu_ms": round(cpu / times / 1e6, 4),
        unit + "s": times,
    }


async def _steps(scenario: str, steps: int, give: Callable[[], Sequence[ToolDyn]]) -> Any:
    source = tool_source(per_step=True)(lambda ctx: give())
    run = await ToolRegistry([source]).for_run(RunContext(deps=None))
    context = RunContext(deps=None)
    return await _timed(scenario, "step", steps, lambda: run.for_step(context))


async def step_same_tools(steps: int) -> dict[str, Any]:
    """A per-step source giving the same tool objects each step."""
    return await _steps("step_same_tools", steps, lambda: SAME)


async def step_fresh_tools(steps: int) -> dict[str, Any]:
    """A per-step source giving new tool objects with equal schemas each step."""
    return await _steps("step_fresh_tools", steps, fresh_pool(steps + WARMUP))


async def step_prefixed_tools(steps: int) -> dict[str, Any]:
    """A per-step source's tools through a prefixing view."""
    source = prefixed_tools(tool_source(per_step=True)(lambda ctx: SAME), "up_")
    run = await ToolRegistry([source]).for_run(RunContext(deps=None))
    context = RunContext(deps=None)
    return await _timed("step_prefixed_tools", "step", steps, lambda: run.for_step(context))


def _gateway(size: int) -> ToolRegistry:
    give = fresh_pool(size)
    return ToolRegistry([tool_source(lambda ctx: give())])


async def gateway_for_run(steps: int) -> dict[str, Any]:
    """What a gateway builds for each request: the registry with its sources' tools."""
    registry = _gateway(steps + WARMUP)
    context = RunContext(deps=None)
    return await _timed("gateway_for_run", "request", steps, lambda: registry.for_run(context))


async def gateway_requests(requests: int) -> list[dict[str, Any]]:
    """`tools/list` and `tools/call` through the gateway served on loopback."""
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    gateway = _gateway(2 * (requests + WARMUP))
    server = asyncio.create_task(
        serve_http(gateway, port=0, token=TOKEN, on_ready=ready.set_result)
    )
    try:
        url = await ready
        async with MCPClient.http(url, token=TOKEN, cache_lists=False) as client:
            listing = await _timed("gateway_tools_list", "request", requests, client.list_tools)
            call = await _timed(
                "gateway_tools_call",
                "request",
                requests,
                lambda: client.call_tool("tool_3", ARGUMENTS),
            )
    finally:
        server.cancel()
        await asyncio.wait([server])
    return [listing, call]


async def main(steps: int) -> None:
    """Print each scenario's line."""
    for scenario in (step_same_tools, step_fresh_tools, step_prefixed_tools, gateway_for_run):
        print(json.dumps(await scenario(steps)), flush=True)
    for line in await gateway_requests(REQUESTS):
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_STEPS))
