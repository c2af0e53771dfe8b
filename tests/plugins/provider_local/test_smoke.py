"""Smoke tests with the real default model (temperature 0, so the answers repeat).

Each starts the embedded server (2 to 3 s on an idle machine; the first run
also joins the model into the user's cache once). Requests get the provider's
generous default timeout: under CPU contention one took 66 s here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import httpx

from layer0 import TurnInput
from neuron_provider_local import LocalProvider
from neuron_turn import NeuronTurn, OutputSpec, TextDelta, output_value

from ._support import render, wire


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_a_turn_calls_the_calculator_and_answers_391() -> None:
    turn = NeuronTurn.from_plugins(model="local:default", tools=["calculator"])
    assert isinstance(turn.provider, LocalProvider)
    try:
        # Streamed, as `neuron-turn run` does: the answer arrives in pieces.
        question = TurnInput(message="What is 17*23? Use the calculator.", trigger="user")
        async with turn.stream(question) as events:
            texts = [e.text async for e in events if isinstance(e, TextDelta)]
        output = events.output
        server = turn.provider.server
        assert server is not None and server.running
    finally:
        await turn.provider.aclose()
    assert output.exit_reason == "complete"
    meta = output.metadata
    assert [(call.name, call.success) for call in meta.tools_called] == [("calculator", True)]
    assert meta.turns_used == 2
    assert meta.tokens_in > 0 and meta.tokens_out > 0
    assert meta.cost.amount == 0 and str(meta.cost.currency) == "USD"
    answer = output.message.as_text() or ""
    assert "391" in answer
    assert len(texts) > 1 and "".join(texts).endswith(answer)
    assert not server.running and gone(server.pid)
    assert turn.provider.server is None


async def test_a_typed_turn_answers_391_as_json_valid_by_the_schema_grammar() -> None:
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "integer"}},
        "required": ["answer"],
    }
    turn = NeuronTurn.from_plugins(
        model="local:default", tools=["calculator"], output_type=OutputSpec.json_schema(schema)
    )
    try:
        output = await turn.execute(
            TurnInput(message="What is 17*23? Use the calculator.", trigger="user")
        )
    finally:
        await turn.provider.aclose()
    assert output.exit_reason == "complete"
    assert output_value(output) == {"answer": 391}
    assert output.message.as_text() == '{"answer":391}'
    # The call, then the answer under the grammar: no correction was needed.
    assert [(c.name, c.success) for c in output.metadata.tools_called] == [("calculator", True)]
    assert output.metadata.turns_used == 2


CONVERSATIONS: list[tuple[list[dict[str, Any]], list[str] | None]] = [
    ([{"role": "user", "content": "Hi"}], None),
    (
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "2 \u00d7 3 ? \u00e9"},
        ],
        ["calculator"],
    ),
    (
        [
            {"role": "user", "content": "What is 17*23?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "calculator", "arguments": '{"expression": "17*23"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "391"},
        ],
        ["calculator", "clock"],
    ),
    (
        [
            {"role": "user", "content": "What is 2^10?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "a",
                        "type": "function",
                        "function": {"name": "calculator", "arguments": '{"expression": "2^10"}'},
                    },
                    {
                        "id": "b",
                        "type": "function",
                        "function": {"name": "clock", "arguments": "{}"},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "a", "content": "Error: '^' is not supported"},
            {"role": "tool", "tool_call_id": "b", "content": json.dumps({"utc": "now"})},
        ],
        ["calculator"],
    ),
]


async def test_the_server_renders_prompts_exactly_as_the_template_tests_expect() -> None:
    async with LocalProvider("default") as provider:
        await provider.start()
        assert provider.server is not None
        key = {"Authorization": f"Bearer {provider.server.api_key}"}
        async with httpx.AsyncClient(
            base_url=provider.server.address, headers=key, timeout=120
        ) as client:
            for messages, tools in CONVERSATIONS:
                wired = [wire(name) for name in tools or ()]
                body: dict[str, Any] = {"messages": messages}
                if wired:
                    body["tools"] = wired
                response = await client.post("/apply-template", json=body)
                assert response.status_code == 200
                assert response.json()["prompt"] == render(messages, wired or None)


def test_a_server_left_running_is_stopped_at_interpreter_exit() -> None:
    code = (
        "import asyncio\n"
        "from neuron_provider_local import LocalProvider\n"
        "provider = LocalProvider('default')\n"
        "asyncio.run(provider.start())\n"
        "print(provider.server.pid, flush=True)\n"
        "# no aclose(): the atexit hook must stop the server\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=600
    )
    pid = int(out.stdout.strip())
    assert gone(pid)


async def test_a_choice_of_types_is_answered_as_one_of_them_under_the_grammar() -> None:
    from ...neuron_turn.test_output_choice import CHOICE, Escalation, Refund, kind_of

    turn = NeuronTurn.from_plugins(model="local:default", output_type=CHOICE)
    try:
        output = await turn.execute(
            TurnInput(message="My parcel never came. Refund me 20 dollars.", trigger="user")
        )
    finally:
        await turn.provider.aclose()
    # The grammar admits only {"result": {"kind": ..., "data": ...}} of one type: no correction.
    assert output.exit_reason == "complete" and output.metadata.turns_used == 1
    value = turn.output_value(output)
    assert isinstance(value, Refund | Escalation)
    stored = json.loads(output.message.as_text() or "")
    assert stored == value.model_dump(mode="json")
    assert kind_of(output) == type(value).__name__
