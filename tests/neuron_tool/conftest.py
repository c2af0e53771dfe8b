from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator

import pytest
from pydantic import JsonValue

from neuron_tool import ToolAnnotations

from .changes import Heard, Said

ECHO_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
}


class FakeTool:
    """A hand-written ToolDyn: records its inputs, and answers through `behaviour`."""

    def __init__(
        self,
        name: str = "echo",
        *,
        input_schema: dict[str, JsonValue] | None = None,
        behaviour: Callable[[JsonValue], Awaitable[JsonValue]] | None = None,
    ) -> None:
        self.name = name
        self.description = f"The {name} tool."
        self.input_schema = ECHO_SCHEMA if input_schema is None else input_schema
        self.output_schema: dict[str, JsonValue] | None = None
        self.annotations: ToolAnnotations | None = None
        self.inputs: list[JsonValue] = []
        self._behaviour = behaviour

    async def call(self, input: JsonValue) -> JsonValue:
        self.inputs.append(input)
        if self._behaviour is not None:
            return await self._behaviour(input)
        return input


@pytest.fixture
def make_tool() -> type[FakeTool]:
    """The `FakeTool` class; fixtures keep it importable under any pytest import mode."""
    return FakeTool


@pytest.fixture
def echo() -> FakeTool:
    return FakeTool()


@pytest.fixture
def heard(monkeypatch: pytest.MonkeyPatch) -> Heard:
    """What the MCP clients of a test heard of list changes (`changes.Heard`)."""
    return Heard(monkeypatch)


@pytest.fixture
def said() -> Iterator[Said]:
    """The MCP bridge's log lines, for a test to wait on (`changes.Said`)."""
    handler = Said()
    bridge = logging.getLogger("neuron_tool.mcp")
    level = bridge.level
    bridge.addHandler(handler)
    bridge.setLevel(logging.INFO)
    yield handler
    bridge.removeHandler(handler)
    bridge.setLevel(level)
