"""Per-call overhead of the tool and hook machinery; one JSON line per scenario.

Run with `python bench/tools_hooks.py [calls]`. Each scenario awaits the same
call `calls` times inside one event loop and reports wall-clock and process
CPU microseconds per call. The tools never suspend, so the figures are the
cost of the Python code around them, not of event-loop scheduling.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import hooks
from _timing import measure, run
from pydantic import JsonValue

from neuron_tool import Next, ToolAnnotations, ToolCall, ToolRegistry, tool

DEFAULT_CALLS = 20_000
INPUT: JsonValue = {"text": "hello", "count": 3}


class EchoTool:
    """The cheapest possible `ToolDyn`: returns its input, never suspends."""

    name = "echo"
    description = "Return the input unchanged."
    input_schema: dict[str, JsonValue] = {
        "type": "object",
        "properties": {"text": {"type": "string"}, "count": {"type": "integer"}},
        "required": ["text"],
        "additionalProperties": False,
    }
    output_schema: dict[str, JsonValue] | None = None
    annotations: ToolAnnotations | None = None

    async def call(self, input: JsonValue) -> JsonValue:
        return input


@tool
async def echo_function(text: str, count: int = 1) -> dict[str, Any]:
    """Return the arguments unchanged."""
    return {"text": text, "count": count}


async def passthrough(call: ToolCall, next: Next) -> JsonValue:
    return await next(call)


async def tool_direct(calls: int) -> dict[str, Any]:
    """Baseline: await the tool's `call` directly, no registry."""
    echo = EchoTool()
    return await measure("tool_direct", lambda: echo.call(INPUT), calls)


async def registry_no_validation(calls: int) -> dict[str, Any]:
    """`ToolRegistry.call(..., validate=False)`, no middleware."""
    registry = ToolRegistry([EchoTool()])
    return await measure(
        "registry_no_validation", lambda: registry.call("echo", INPUT, validate=False), calls
    )


async def registry_validation(calls: int) -> dict[str, Any]:
    """`ToolRegistry.call` with JSON Schema validation, no middleware."""
    registry = ToolRegistry([EchoTool()])
    return await measure("registry_validation", lambda: registry.call("echo", INPUT), calls)


async def registry_validation_middleware(calls: int) -> dict[str, Any]:
    """`ToolRegistry.call` with validation and one passthrough middleware."""
    registry = ToolRegistry([EchoTool()], middleware=[passthrough])
    return await measure(
        "registry_validation_middleware", lambda: registry.call("echo", INPUT), calls
    )


async def registry_middleware_no_validation(calls: int) -> dict[str, Any]:
    """`ToolRegistry.call(..., validate=False)` with one passthrough middleware."""
    registry = ToolRegistry([EchoTool()], middleware=[passthrough])
    return await measure(
        "registry_middleware_no_validation",
        lambda: registry.call("echo", INPUT, validate=False),
        calls,
    )


async def function_tool_validation(calls: int) -> dict[str, Any]:
    """An `@tool` async function through the registry: adds pydantic binding and encoding."""
    registry = ToolRegistry([echo_function])
    return await measure(
        "function_tool_validation", lambda: registry.call("echo_function", INPUT), calls
    )


SCENARIOS: list[Callable[[int], Awaitable[dict[str, Any]]]] = [
    tool_direct,
    registry_no_validation,
    registry_validation,
    registry_validation_middleware,
    registry_middleware_no_validation,
    function_tool_validation,
]


def main() -> None:
    """Run every tool scenario, then the hook-dispatch ones (bench/hooks.py)."""
    run([*SCENARIOS, *hooks.SCENARIOS], DEFAULT_CALLS)


if __name__ == "__main__":
    main()
