"""A `ToolRegistry` with one tool per case the MCP server must carry, and a stdio entry point.

Run it as a script (`python tests/neuron_tool/mcp_servers/registry.py`) to serve it over
stdio.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel

from neuron_tool import ModelRetry, ToolAnnotations, ToolRegistry, tool
from neuron_tool.mcp import serve_stdio


class Forecast(BaseModel):
    city: str
    celsius: float


@tool(annotations=ToolAnnotations(title="Add", read_only_hint=True, idempotent_hint=True))
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def forecast(city: str) -> Forecast:
    """Forecast the weather in a city."""
    return Forecast(city=city, celsius=19.5)


@tool
def greet(name: str) -> str:
    """Greet someone."""
    return f"Hello, {name}!"


@tool
def inventory() -> Any:
    """Count what is in stock; returns an object without declaring a schema."""
    return {"apples": 3, "pears": 0}


@tool
def pick(size: int) -> int:
    """Pick a number; asks the model to retry with a smaller one."""
    raise ModelRetry(f"{size} is too large; try a number below 10")


@tool
def explode() -> None:
    """Fail with an ordinary exception."""
    raise ValueError("the fuse was lit")


def build_registry() -> ToolRegistry:
    return ToolRegistry([add, forecast, greet, inventory, pick, explode])


if __name__ == "__main__":
    asyncio.run(serve_stdio(build_registry(), name="sample"))
