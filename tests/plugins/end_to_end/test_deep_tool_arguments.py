"""Each HTTP provider, a turn, and tool-call arguments nested hundreds of levels deep.

The bodies are what a hostile or broken model server could send; the turn must
answer the call with a tool error the model can read and finish normally.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from layer0 import ModelError, TurnInput, TurnOutput
from layer0.testing import InMemoryStore
from neuron_provider_anthropic import AnthropicProvider
from neuron_provider_ollama import OllamaProvider
from neuron_provider_openai import OpenAIProvider
from neuron_tool import ToolRegistry, tool
from neuron_turn import NeuronTurn, NeuronTurnConfig, Provider

DEPTHS = [255, 300, 900]
BEYOND_PYTHON = 100_000
"""Deeper than Python's JSON parser goes: the body (or OpenAI's arguments string) cannot be
decoded at all."""


@tool
async def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


def nested_text(depth: int) -> str:
    """JSON of `{"text": ...}` holding `depth` levels of objects and arrays (no recursion)."""
    return '{"text":' + '{"a":[' * (depth // 2) + '"x"' + "]}" * (depth // 2) + "}"


def anthropic_body(arguments: str) -> str:
    return (
        '{"id":"msg_1","type":"message","role":"assistant","model":"claude-haiku-4-5",'
        '"content":[{"type":"tool_use","id":"toolu_1","name":"echo","input":'
        + arguments
        + '}],"stop_reason":"tool_use","stop_sequence":null,'
        '"usage":{"input_tokens":10,"output_tokens":5}}'
    )


def anthropic_text() -> str:
    return json.dumps(
        {
            "id": "msg_2",
            "type": "message",
            "role": "assistant",
            "model": "claude-haiku-4-5",
            "content": [{"type": "text", "text": "done"}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
    )


def _openai_message(message: dict[str, Any], finish: str) -> str:
    return json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
    )


def openai_body(arguments: str) -> str:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "echo", "arguments": arguments},
    }
    return _openai_message(
        {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
    )


def openai_text() -> str:
    return _openai_message({"role": "assistant", "content": "done"}, "stop")


def ollama_body(arguments: str) -> str:
    return (
        '{"model":"llama3.2","created_at":"2026-11-20T10:00:00Z","message":{"role":"assistant",'
        '"content":"","tool_calls":[{"function":{"name":"echo","arguments":'
        + arguments
        + '}}]},"done":true,"done_reason":"stop","prompt_eval_count":10,"eval_count":5}'
    )


def ollama_text() -> str:
    return json.dumps(
        {
            "model": "llama3.2",
            "created_at": "2026-11-20T10:00:01Z",
            "message": {"role": "assistant", "content": "done"},
            "done": True,
            "done_reason": "stop",
            "prompt_eval_count": 10,
            "eval_count": 5,
        }
    )


def _anthropic(client: httpx.AsyncClient) -> Provider:
    return AnthropicProvider("claude-haiku-4-5", api_key="sk-ant-test", client=client)


def _openai(client: httpx.AsyncClient) -> Provider:
    return OpenAIProvider("gpt-4o-mini", api_key="sk-test", client=client)


def _ollama(client: httpx.AsyncClient) -> Provider:
    return OllamaProvider("llama3.2", base_url="http://localhost:11434", client=client)


PROVIDERS: dict[str, tuple[Callable[[httpx.AsyncClient], Provider], Any, Any]] = {
    "anthropic": (_anthropic, anthropic_body, anthropic_text),
    "openai": (_openai, openai_body, openai_text),
    "ollama": (_ollama, ollama_body, ollama_text),
}


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("name", sorted(PROVIDERS))
async def test_deep_tool_arguments_from_the_wire_become_a_tool_error(name: str, depth: int) -> None:
    make, tool_body, text_body = PROVIDERS[name]
    bodies = [tool_body(nested_text(depth)), text_body()]
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        body = bodies.pop(0)
        return httpx.Response(200, content=body, headers={"content-type": "application/json"})

    output = await _turn(make, answer).execute(
        TurnInput(message="go", trigger="user", session="s1")
    )
    assert output.exit_reason == "complete"
    assert output.message.as_text() == "done"
    assert [record.success for record in output.metadata.tools_called] == [False]
    second = sent[1].content.decode()
    assert "nest deeper than 64 levels" in second  # the model was told why
    assert TurnOutput.model_validate_json(output.model_dump_json()) == output


def _turn(make: Callable[[httpx.AsyncClient], Provider], answer: Any) -> NeuronTurn:
    provider = make(httpx.AsyncClient(transport=httpx.MockTransport(answer)))
    return NeuronTurn(
        provider,
        tools=ToolRegistry([echo]),
        config=NeuronTurnConfig(model="m"),
        state=InMemoryStore(),
    )


def _replies(*bodies: str) -> Any:
    queue = list(bodies)

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, content=queue.pop(0), headers={"content-type": "application/json"}
        )

    return answer


@pytest.mark.parametrize("name", ["anthropic", "ollama"])
async def test_a_body_nested_past_what_python_parses_is_a_model_error_not_a_crash(
    name: str,
) -> None:
    make, tool_body, _ = PROVIDERS[name]
    turn = _turn(make, _replies(tool_body(nested_text(BEYOND_PYTHON))))
    with pytest.raises(ModelError) as raised:
        await turn.execute(TurnInput(message="go", trigger="user"))
    assert "RecursionError" not in str(raised.value)
    assert "JSON" in str(raised.value) or "unexpected response" in str(raised.value)


async def test_openai_arguments_nested_past_what_python_parses_are_a_tool_error() -> None:
    make, tool_body, text_body = PROVIDERS["openai"]
    turn = _turn(make, _replies(tool_body(nested_text(BEYOND_PYTHON)), text_body()))
    output = await turn.execute(TurnInput(message="go", trigger="user"))
    assert output.exit_reason == "complete"
    assert [record.success for record in output.metadata.tools_called] == [False]


async def test_an_anthropic_block_of_another_type_nested_deep_is_a_model_error() -> None:
    block = '{"type":"server_tool_use","id":"s1","input":' + nested_text(300) + "}"
    body = anthropic_body("{}").replace(
        '{"type":"tool_use","id":"toolu_1","name":"echo","input":{}}', block
    )
    turn = _turn(PROVIDERS["anthropic"][0], _replies(body))
    with pytest.raises(ModelError, match="block nested deeper than 64 levels"):
        await turn.execute(TurnInput(message="go", trigger="user", session="s1"))
