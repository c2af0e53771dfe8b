"""A real AI SDK peer: the `ai` package's own chat (what useChat wraps, installed by
scripts/setup.d/test-ai-sdk-client) drives the server from node over loopback HTTP, reading
every chunk with the SDK's reader, which rejects any chunk its schema does not take."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

from layer0 import Base64Source, UrlSource
from neuron_tool import tool
from neuron_turn import (
    ApprovalPolicy,
    HostedTool,
    HostedToolCall,
    ImageGeneration,
    ImagePart,
    NeuronTurnConfig,
    ProviderResponse,
    TextPart,
    TokenUsage,
    ToolUsePart,
    WebSearch,
)
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from ._server import PICK_COLOUR, serving

ROOT = Path(__file__).resolve().parents[3]
MODULES = ROOT / ".cache" / "npm" / "node_modules"
PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQ"
    "AAAABJRU5ErkJggg=="
)
SCRIPT = Path(__file__).with_name("ai_sdk_client.cjs")


@tool
async def weather(city: str) -> str:
    """Today's weather in a city (pretend)."""
    return f"sunny in {city}"


async def drive(url: str, token: str, scenario: str) -> list[dict[str, Any]]:
    """Run the node client against `url`; return the JSON lines it printed."""
    node = shutil.which("node")
    assert node is not None and (MODULES / "ai" / "package.json").is_file(), (
        "the AI SDK client test needs node and the ai package:"
        " run scripts/setup.d/test-ai-sdk-client"
    )
    process = await asyncio.create_subprocess_exec(
        node,
        str(SCRIPT),
        str(MODULES),
        url,
        token,
        scenario,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    return [json.loads(line) for line in out.decode().splitlines() if line.strip()]


def chunks(lines: list[dict[str, Any]], request: int) -> list[dict[str, Any]]:
    return [line["chunk"] for line in lines if line.get("request") == request]


async def test_the_ai_sdk_chat_reads_every_chunk_of_a_frontend_tool_round_trip() -> None:
    picking = ToolUsePart("c2", "pick_colour", {"choices": ["red", "blue"]})
    model = ScriptedProvider(
        [tool_call_response(picking, text="Let me ask."), text_response("Blue it is.")],
        chunk_size=4,
    )
    async with serving(model, frontend_tools=[PICK_COLOUR]) as served:
        lines = await drive(served.url, served.token, "frontend-tool")

    assert "error" not in lines[-1], lines[-1]
    first, second = chunks(lines, 1), chunks(lines, 2)
    assert first[-1] == {"type": "finish", "finishReason": "tool-calls"}
    assert second[-1] == {"type": "finish", "finishReason": "stop"}
    # The client ran its tool: the model read the output it sent.
    assert "blue" in str(model.requests[-1].messages[-1].content)
    (asked, answered) = lines[-1]["messages"]
    assert asked["role"] == "user" and answered["role"] == "assistant"
    # One assistant message: the second response continued it.
    parts = [p for p in answered["parts"] if p["type"] != "step-start"]
    assert [p["type"] for p in parts] == ["text", "tool-pick_colour", "text"]
    assert parts[1]["state"] == "output-available" and parts[1]["output"] == "blue"
    assert parts[1]["input"] == {"choices": ["red", "blue"]}
    assert parts[0]["text"] == "Let me ask." and parts[2]["text"] == "Blue it is."


async def test_the_ai_sdk_chat_approves_a_held_call_and_reads_its_output() -> None:
    model = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("c1", "weather", {"city": "Oslo"})),
            text_response("Sunny in Oslo."),
        ]
    )
    config = NeuronTurnConfig(model="m", approval=ApprovalPolicy.of(["weather"]))
    async with serving(model, tools=[weather], config=config) as served:
        lines = await drive(served.url, served.token, "approval")

    assert "error" not in lines[-1], lines[-1]
    assert [c["type"] for c in chunks(lines, 1)][-3:] == [
        "tool-approval-request",
        "finish-step",
        "finish",
    ]
    (_, answered) = lines[-1]["messages"]
    (call,) = [p for p in answered["parts"] if p["type"] == "tool-weather"]
    assert call["state"] == "output-available" and call["output"] == "sunny in Oslo"
    assert call["approval"]["approved"] is True
    assert answered["parts"][-1] == {"type": "text", "text": "Sunny in Oslo.", "state": "done"}


async def answered_parts(answer: ProviderResponse, hosted: HostedTool) -> list[dict[str, Any]]:
    """The parts of the chat's one answer, the model answering `answer` with `hosted` granted."""
    model = ScriptedProvider([answer], hosted_tools={hosted.name})
    config = NeuronTurnConfig(model="m", hosted_tools=[hosted])
    async with serving(model, config=config) as served:
        lines = await drive(served.url, served.token, "text")

    assert "error" not in lines[-1], lines[-1]
    (_, answered) = lines[-1]["messages"]
    return [p for p in answered["parts"] if p["type"] != "step-start"]


async def test_the_ai_sdk_chat_keeps_what_the_provider_ran_as_a_data_part() -> None:
    searched = ProviderResponse(
        content=(TextPart("Sunny in Oslo."),),
        stop_reason="end_turn",
        usage=TokenUsage(),
        model="m",
        hosted_calls=(HostedToolCall("web_search", {"query": "Oslo weather"}),),
    )
    assert await answered_parts(searched, WebSearch()) == [
        {"type": "text", "text": "Sunny in Oslo.", "state": "done"},
        {
            "type": "data-hosted-tool-call",
            "data": {"name": "web_search", "input": {"query": "Oslo weather"}},
        },
    ]


async def test_the_ai_sdk_chat_shows_an_image_the_model_made_as_a_file_part() -> None:
    drawn = ProviderResponse(
        content=(
            TextPart("A cat:"),
            ImagePart(Base64Source(data=PIXEL), "image/png"),
            ImagePart(UrlSource(url="https://images.example.com/cat.webp"), "image/webp"),
        ),
        stop_reason="end_turn",
        usage=TokenUsage(),
        model="m",
    )
    assert await answered_parts(drawn, ImageGeneration()) == [
        {"type": "text", "text": "A cat:", "state": "done"},
        {"type": "file", "mediaType": "image/png", "url": f"data:image/png;base64,{PIXEL}"},
        {
            "type": "file",
            "mediaType": "image/webp",
            "url": "https://images.example.com/cat.webp",
        },
    ]


async def test_the_ai_sdk_chat_with_a_wrong_token_fails_and_nothing_runs() -> None:
    model = ScriptedProvider([text_response("never")])
    async with serving(model) as served:
        lines = await drive(served.url, "wrong-token-0123456789abcdefghij", "text")

    assert "missing or wrong bearer token" in lines[-1]["error"]
    assert model.requests == []
