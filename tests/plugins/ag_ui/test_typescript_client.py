"""A real AG-UI peer: the official TypeScript client (`@ag-ui/client`'s `HttpAgent`, installed
by scripts/setup.d/test-ag-ui-client) drives the server from node, over loopback HTTP."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

from layer0 import usd
from neuron_tool import tool
from neuron_turn import ProviderResponse, TextPart, ThinkingPart, TokenUsage, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from ._server import serving

ROOT = Path(__file__).resolve().parents[3]
MODULES = ROOT / ".cache" / "npm" / "node_modules"
SCRIPT = Path(__file__).with_name("ag_ui_client.cjs")


@tool
async def weather(city: str) -> str:
    """Today's weather in a city (pretend)."""
    return f"sunny in {city}"


async def drive(url: str, token: str, scenario: str) -> list[dict[str, Any]]:
    """Run the node client against `url`; return the JSON lines it printed."""
    node = shutil.which("node")
    assert node is not None and (MODULES / "@ag-ui" / "client").is_dir(), (
        "the AG-UI client test needs node and @ag-ui/client: run scripts/setup.d/test-ag-ui-client"
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


def events(lines: list[dict[str, Any]], run: int) -> list[dict[str, Any]]:
    return [line["event"] for line in lines if line.get("run") == run]


def snapshot(run: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages of the run's one MESSAGES_SNAPSHOT, as the client received them."""
    (event,) = [e for e in run if e["type"] == "MESSAGES_SNAPSHOT"]
    return list(event["messages"])


async def test_the_typescript_client_runs_a_frontend_tool_round_trip_over_two_runs() -> None:
    picking = ToolUsePart("c2", "pick_colour", {"choices": ["red", "blue"]})
    model = ScriptedProvider(
        [tool_call_response(picking, text="Let me ask."), text_response("Blue it is.")]
    )
    async with serving(model) as served:
        lines = await drive(served.url, served.token, "frontend-tool")

    assert "error" not in lines[-1], lines[-1]
    first, second = events(lines, 1), events(lines, 2)
    assert [e["type"] for e in first] == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "MESSAGES_SNAPSHOT",
        "RUN_FINISHED",
    ]
    assert first[-1]["outcome"] == {"type": "success", "pendingToolCallIds": ["c2"]}
    assert second[0]["type"] == "RUN_STARTED"
    assert second[-1]["type"] == "RUN_FINISHED"
    said = "".join(e["delta"] for e in second if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert said == "Blue it is."
    # The client ran its tool: the model read the answer it sent.
    assert "blue" in str(model.requests[-1].messages[-1].content)
    messages = lines[-1]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[1]["toolCalls"][0]["id"] == "c2" and messages[-1]["content"] == "Blue it is."
    # The client took each run's snapshot: it holds what the last one says, ids and all.
    assert messages == snapshot(second)


async def test_the_typescript_client_with_a_wrong_token_is_refused_and_nothing_runs() -> None:
    model = ScriptedProvider([text_response("never")])
    async with serving(model) as served:
        lines = await drive(served.url, "wrong-token-0123456789abcdefghij", "text")

    assert "401" in lines[-1]["error"]
    assert model.requests == []


async def test_the_typescript_client_keeps_the_reasoning_and_the_next_run_takes_it_back() -> None:
    thinking = ProviderResponse(
        content=(ThinkingPart("Two and two make four.", signature="sig"), TextPart("Four.")),
        stop_reason="end_turn",
        usage=TokenUsage(),
        model="scripted",
        cost=usd(),
    )
    model = ScriptedProvider([thinking, text_response("Six.")], chunk_size=6)
    async with serving(model) as served:
        lines = await drive(served.url, served.token, "two-questions")

    assert "error" not in lines[-1], lines[-1]
    first, second = events(lines, 1), events(lines, 2)
    assert [e["type"] for e in first] == [
        "RUN_STARTED",
        "REASONING_START",
        "REASONING_MESSAGE_START",
        *["REASONING_MESSAGE_CONTENT"] * 4,
        "REASONING_MESSAGE_END",
        "REASONING_END",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "MESSAGES_SNAPSHOT",
        "RUN_FINISHED",
    ]
    assert second[-1]["type"] == "RUN_FINISHED"
    messages = lines[-1]["messages"]
    assert [m["role"] for m in messages] == ["user", "reasoning", "assistant", "user", "assistant"]
    assert messages[1]["content"] == "Two and two make four."
    assert messages[-1]["content"] == "Six."
    assert messages == snapshot(second)
    (reasoning,) = [e["messageId"] for e in first if e["type"] == "REASONING_MESSAGE_START"]
    assert messages[1]["id"] == reasoning


async def test_the_typescript_client_takes_the_snapshot_merging_parallel_calls_in_one_message() -> (
    None
):
    model = ScriptedProvider(
        [
            tool_call_response(
                ToolUsePart("c2", "weather", {"city": "Rome"}),
                ToolUsePart("c3", "weather", {"city": "Nice"}),
            ),
            text_response("Sunny in both."),
        ]
    )
    async with serving(model, tools=[weather]) as served:
        lines = await drive(served.url, served.token, "parallel-calls")

    assert "error" not in lines[-1], lines[-1]
    run = events(lines, 1)
    assert [e["type"] for e in run][-2:] == ["MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    messages = lines[-1]["messages"]
    assert messages == snapshot(run)
    # Streamed without text, each call made an assistant message of its own id in the
    # client; the snapshot holds them as the agent does, in one, under the first's id.
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "assistant"]
    assert messages[1]["id"] == "c2"
    assert [c["id"] for c in messages[1]["toolCalls"]] == ["c2", "c3"]
    results = {e["toolCallId"]: e["messageId"] for e in run if e["type"] == "TOOL_CALL_RESULT"}
    assert [(m["id"], m["toolCallId"]) for m in messages[2:4]] == [
        (results["c2"], "c2"),
        (results["c3"], "c3"),
    ]
    (text,) = [e["messageId"] for e in run if e["type"] == "TEXT_MESSAGE_START"]
    assert messages[-1] == {"id": text, "role": "assistant", "content": "Sunny in both."}
