"""What a user message may carry: text, images and PDF documents as data URLs, within
`ChatLimits`; anything else is refused naming why, and the model is never called."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from neuron_ui_vercel import ChatLimits

from neuron_turn.testing import ScriptedProvider, text_response

from ._server import chat, post, serving, text_of, user

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
PDF = b"%PDF-1.4\n%%EOF\n"


def file(media_type: str, data: bytes, *, url: str | None = None) -> dict[str, Any]:
    encoded = base64.b64encode(data).decode()
    return {
        "type": "file",
        "mediaType": media_type,
        "url": url or f"data:{media_type};base64,{encoded}",
    }


async def test_an_image_and_a_pdf_reach_the_model_beside_the_text() -> None:
    model = ScriptedProvider([text_response("A picture and a paper.")])
    async with serving(model) as served:
        message = user("Look:", file("image/png", PNG), file("application/pdf", PDF))
        chunks = await post(served, chat("c1", message))

    assert text_of(chunks) == "A picture and a paper."
    kinds = [type(part).__name__ for part in model.requests[0].messages[-1].content]
    assert kinds == ["TextPart", "ImagePart", "DocumentPart"]


@pytest.mark.parametrize(
    ("parts", "said"),
    [
        ([], "EmptyMessageError: "),
        (["   "], "EmptyMessageError: "),
        (["x" * 3000], "MessageTooLargeError: the message's text is longer than 2000"),
        (["a"] * 5, "MessageTooLargeError: the message has 5 parts; at most 4"),
        ([file("image/png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 5000)], "larger than 4096 bytes"),
        (
            [file("image/png", PNG, url="http://169.254.169.254/latest")],
            "UnsupportedPartError: part 0 is a file given by URL",
        ),
        ([file("audio/wav", b"RIFF....")], "UnsupportedPartError: part 0 is a file of type"),
        ([file("image/png", b"\x00" * 12)], "not PNG, JPEG, GIF or WebP"),
        ([file("image/jpeg", PNG)], 'says it is "image/jpeg" but its bytes are image/png'),
        ([file("application/pdf", b"not a pdf")], "its bytes are not a PDF"),
        (
            [{"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,!!!"}],
            "data is not base64",
        ),
        ([{"type": "data-widget", "data": {}}], 'part 0 is "data-widget"'),
    ],
)
async def test_a_message_the_agent_cannot_take_ends_with_an_error_naming_why(
    parts: list[Any], said: str
) -> None:
    model = ScriptedProvider([])
    limits = ChatLimits(max_text_chars=2000, max_parts=4, max_file_bytes=4096)
    async with serving(model, limits=limits) as served:
        chunks = await post(served, chat("c1", user(*parts)))

    assert [c["type"] for c in chunks] == ["start", "error", "finish"]
    assert said in chunks[1]["errorText"]
    assert model.requests == []


async def test_a_frontend_tool_output_past_the_text_limit_is_refused() -> None:
    from neuron_turn import ToolUsePart
    from neuron_turn.testing import tool_call_response

    from ._server import PICK_COLOUR, assistant, tool_part

    call = ToolUsePart("c2", "pick_colour", {"choices": ["red"]})
    model = ScriptedProvider([tool_call_response(call)])
    limits = ChatLimits(max_text_chars=100)
    async with serving(model, limits=limits, frontend_tools=[PICK_COLOUR]) as served:
        await post(served, chat("c1", user("Pick")))
        huge = tool_part("pick_colour", "c2", "output-available", call.input, output="r" * 200)
        chunks = await post(served, chat("c1", assistant({"type": "step-start"}, huge)))

    assert chunks[1]["errorText"].startswith("MessageTooLargeError: the output of tool call")
    assert len(model.requests) == 1
