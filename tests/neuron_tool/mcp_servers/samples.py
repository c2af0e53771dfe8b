"""An MCP server over stdio whose tool asks the client's model to write something (sampling).

`haiku()` asks for a haiku on rain (a tool the command line's test model
calls with no arguments); `write(case, size)` asks through the SDK's `Sample` resolver, which speaks
whichever protocol the client does (MCP 2026-07-28: "input required", the client
calling again with the answer), and answers with the client's `CreateMessageResult`
as structured content. The cases:

- `poem`: a system prompt, a three-message conversation (the last with an image),
  `maxTokens` 100,000, a temperature, a stop sequence and a model hint;
- `many`: `size` one-word user messages;
- `long`: one user message of `size` characters;
- `audio`: one user message holding audio;
- `tools`: a request offering the model a tool.

Run it as a script: `python tests/neuron_tool/mcp_servers/samples.py`.
"""

from __future__ import annotations

from typing import Annotated, Any

import mcp_types as types
from mcp.server.mcpserver import MCPServer, Resolve, Sample

SYSTEM = "You are a poet of few words."
MAX_TOKENS = 100_000
# The smallest PNG: one transparent pixel.
PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJ"
    "RU5ErkJggg=="
)
HAIKU_OF_RAIN = "An old roof, the rain."


def _user(*content: types.SamplingMessageContentBlock) -> types.SamplingMessage:
    return types.SamplingMessage(role="user", content=list(content))


def _conversation() -> list[types.SamplingMessage]:
    return [
        _user(types.TextContent(text="A haiku on rain, please.")),
        types.SamplingMessage(role="assistant", content=types.TextContent(text=HAIKU_OF_RAIN)),
        _user(
            types.TextContent(text="Now one on this picture."),
            types.ImageContent(data=PIXEL, mime_type="image/png"),
        ),
    ]


def ask(case: str, size: int = 0) -> Sample:
    """The sampling request of `case` (see the module's docstring)."""
    if case == "poem":
        return Sample(
            _conversation(),
            max_tokens=MAX_TOKENS,
            system_prompt=SYSTEM,
            temperature=0.5,
            stop_sequences=["###"],
            model_preferences=types.ModelPreferences(hints=[types.ModelHint(name="haiku")]),
        )
    if case == "many":
        return Sample([_user(types.TextContent(text="more")) for _ in range(size)], max_tokens=10)
    if case == "long":
        return Sample([_user(types.TextContent(text="x" * size))], max_tokens=10)
    if case == "audio":
        audio = types.AudioContent(data="UklGRg==", mime_type="audio/wav")
        return Sample([_user(audio)], max_tokens=10)
    if case == "tools":
        tool = types.Tool(name="look", input_schema={"type": "object"})
        return Sample([_user(types.TextContent(text="look"))], max_tokens=10, tools=[tool])
    raise ValueError(f"no case {case!r}")


app = MCPServer("samples")


def _haiku() -> Sample:
    """A plain request, for a model that calls the first tool it is offered with no arguments."""
    return Sample([_user(types.TextContent(text="A haiku on rain, please."))], max_tokens=50)


@app.tool()
async def haiku(written: Annotated[types.CreateMessageResult, Resolve(_haiku)]) -> str:
    """Ask the client's model for a haiku, and answer with it."""
    content = written.content
    return content.text if isinstance(content, types.TextContent) else repr(content)


@app.tool()
async def write(
    case: str,
    written: Annotated[types.CreateMessageResult, Resolve(ask)],
    size: int = 0,
) -> dict[str, Any]:
    """Ask the client's model to write, and answer with what it wrote."""
    return written.model_dump(mode="json", by_alias=True, exclude_none=True)


if __name__ == "__main__":
    app.run("stdio")
