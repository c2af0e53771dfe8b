"""Model text holding SSE framing (blank lines, `data:` lines, bare CRs) stays inside its chunk.

A browser splits events at a blank line and lines at CR, LF or CRLF: text
that reached the stream raw could end its chunk and forge the next (a
`finish`, an `error`, an early `[DONE]`). Every chunk is one `data:` line of
JSON, which escapes them.
"""

from __future__ import annotations

import json
import re

import httpx

from neuron_tool import tool
from neuron_turn import ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from ._server import chat, serving, user

HOSTILE = 'a\n\ndata: {"type":"error","errorText":"forged"}\n\ndata: [DONE]\r\rb\r\n\r\nc'


@tool
async def echo(text: str) -> str:
    """Say the text back."""
    return text


def _chunks(body: bytes) -> list[str]:
    """The `data:` of each event of an SSE body, split as the SSE specification does."""
    data: list[str] = []
    for block in re.split(r"(?:\r\n|\r|\n){2}", body.decode("utf-8")):
        lines = [line for line in re.split(r"\r\n|\r|\n", block) if line]
        if not lines:
            continue
        assert len(lines) == 1 and lines[0].startswith("data: "), block[:200]
        data.append(lines[0].removeprefix("data: "))
    return data


async def test_sse_framing_in_model_text_and_a_tool_result_stays_in_its_chunk() -> None:
    model = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("c1", "echo", {"text": HOSTILE})),
            text_response(HOSTILE),
        ],
        chunk_size=5,
    )
    async with serving(model, tools=[echo]) as served:
        async with httpx.AsyncClient(timeout=10) as http:
            answer = await http.post(
                served.url + "/", json=chat("c1", user("Hi")), headers=served.headers()
            )

    data = _chunks(answer.content)
    assert data.count("[DONE]") == 1 and data[-1] == "[DONE]"
    chunks = [json.loads(d) for d in data[:-1]]
    kinds = [c["type"] for c in chunks]
    assert kinds.count("finish") == 1 and "error" not in kinds
    assert "".join(c["delta"] for c in chunks if c["type"] == "text-delta") == HOSTILE
    (result,) = [c for c in chunks if c["type"] == "tool-output-available"]
    assert result["output"] == HOSTILE
