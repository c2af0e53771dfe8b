"""A tool made by shape, with no base class, carrying whatever attributes a test gives it."""

from __future__ import annotations

from typing import Any

from pydantic import JsonValue


class ShapedTool:
    """A `ToolDyn` by shape named `odd`; `attributes` set (or add) what a test needs."""

    description = "Odd."
    output_schema = None
    annotations = None

    def __init__(self, name: str = "odd", **attributes: Any) -> None:
        self.name = name
        self.input_schema: dict[str, JsonValue] = {"type": "object"}
        for key, value in attributes.items():
            setattr(self, key, value)

    async def call(self, input: JsonValue) -> JsonValue:
        return None
