"""A `ToolRegistry` with one tool per case the MCP server must carry, and a stdio entry point.

Run it as a script (`python tests/neuron_tool/mcp_servers/registry.py`) to serve it over
stdio.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel

from neuron_tool import (
    FileBlock,
    ModelRetry,
    ToolAnnotations,
    ToolRegistry,
    ToolReturn,
    document_block,
    image_block,
    tool,
)
from neuron_tool.mcp import serve_stdio

PNG = b"\x89PNG\r\n\x1a\n a chart"
PDF = b"%PDF-1.7 a report"


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


@tool
def chart(title: str) -> ToolReturn:
    """Draw a chart (an image) and write its report (a PDF)."""
    files: list[FileBlock] = [image_block(PNG), document_block(PDF, name=f"{title} report.pdf")]
    return ToolReturn(f"Chart: {title}", files=files)


@tool
def links() -> ToolReturn:
    """Point at an image, a named document and an unnamed one, all on the web."""
    files: list[FileBlock] = [
        image_block(url="https://example.com/img/a.png"),
        document_block(url="https://example.com/docs/r.pdf?v=2", name="Report"),
        document_block(url="https://example.com/", media_type="text/plain"),
    ]
    return ToolReturn({"count": 3}, files=files)


@tool
def unnamed() -> ToolReturn:
    """A document without a name."""
    return ToolReturn("notes", files=[document_block(b"plain words", media_type="text/plain")])


WAV = b"RIFF$\x00\x00\x00WAVEfmt a voice"
MP4 = b"\x00\x00\x00\x18ftypisom a clip"


@tool
def recording() -> ToolReturn:
    """A voice message and a clip."""
    files = [
        document_block(WAV, media_type="audio/wav", name="voice.wav"),
        document_block(MP4, media_type="video/mp4", name="clip.mp4"),
    ]
    return ToolReturn("recorded", files=files)


def build_registry() -> ToolRegistry:
    return ToolRegistry(
        [add, forecast, greet, inventory, pick, explode, chart, links, unnamed, recording]
    )


if __name__ == "__main__":
    asyncio.run(serve_stdio(build_registry(), name="sample"))
