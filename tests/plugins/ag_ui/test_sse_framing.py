"""Model text holding SSE framing (blank lines, `data:` lines, bare CRs) stays inside its event.

A browser's EventSource splits events at a blank line and lines at CR, LF or
CRLF: text that reached the stream raw could end its event and forge the next
(a RUN_FINISHED, a RUN_ERROR). Every event is one `data:` line of JSON, which
escapes them.
"""

from __future__ import annotations

import json
import re

import httpx

from neuron_tool import tool
from neuron_turn import ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from ._server import run_input, serving, user

HOSTILE = 'a\n\ndata: {"type":"RUN_ERROR","message":"forged"}\n\nb\r\rdata: x\r\n\r\nc'


@tool
async def echo(text: str) -> str:
    """Say the text back."""
    return text


def _events(body: bytes) -> list[dict[str, object]]:
    """The events of an SSE body, split as the SSE specification (and EventSource) does."""
    events: list[dict[str, object]] = []
    for block in re.split(r"(?:\r\n|\r|\n){2}", body.decode("utf-8")):
        lines = [line for line in re.split(r"\r\n|\r|\n", block) if line]
        if not lines:
            continue
        assert len(lines) == 1 and lines[0].startswith("data: "), block[:200]
        events.append(json.loads(lines[0].removeprefix("data: ")))
    return events


async def test_sse_framing_in_model_text_and_a_tool_result_stays_in_its_event() -> None:
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
                served.url + "/", json=run_input("t1", user("Hi")), headers=served.headers()
            )

    events = _events(answer.content)
    kinds = [e["type"] for e in events]
    assert kinds.count("RUN_FINISHED") == 1 and kinds[-1] == "RUN_FINISHED"
    assert "RUN_ERROR" not in kinds
    text = "".join(str(e["delta"]) for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert text == HOSTILE
    (result,) = [e for e in events if e["type"] == "TOOL_CALL_RESULT"]
    assert result["content"] == HOSTILE
