"""Replays every recording in ../shared/corpus/cassettes/ollama through a provider.

Native `/api/chat` recordings go through `OllamaProvider` (the NDJSON one with
`stream=True`); the OpenAI-compatible `/v1/chat/completions` ones through the
OpenAI plugin, which is the right client for that endpoint. Expected content,
stop reason and usage are read from the recorded response bodies.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from neuron_provider_ollama import OllamaProvider
from neuron_tool.schema import ToolSchema
from neuron_turn import (
    Provider,
    ProviderMessage,
    ProviderRequest,
    ProviderResponse,
    StopReason,
    TextDelta,
    TextPart,
    ToolResultPart,
    ToolUsePart,
)
from tests.cassettes import SHARED_CORPUS, ParsedBodySerializer, replay

CORPUS = SHARED_CORPUS / "ollama"
NO_BODY = ("method", "scheme", "host", "port", "path")
NATIVE_HOST = "http://127.0.0.1:11434"


def corpus_file(name: str) -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not present at {CORPUS} (a lone clone has no ../shared)")
    return CORPUS / name


def recorded(path: Path) -> list[dict[str, Any]]:
    text = path.read_text()
    if path.name.startswith("pydantic-ai__"):
        return list(ParsedBodySerializer.deserialize(text)["interactions"])
    return list(yaml.safe_load(text)["interactions"])


def response_json(interaction: dict[str, Any]) -> Any:
    return json.loads(interaction["response"]["body"]["string"])


class Capture:
    """An httpx request hook keeping the JSON body of every request sent."""

    def __init__(self) -> None:
        self.bodies: list[Any] = []

    async def __call__(self, request: httpx.Request) -> None:
        self.bodies.append(json.loads(request.content))

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(event_hooks={"request": [self]})


def assert_sent_what_was_recorded(sent: dict[str, Any], recorded: dict[str, Any]) -> None:
    """Our body matches the recorded one on model, stream and every recorded message field."""
    assert sent["model"] == recorded["model"]
    assert sent["stream"] == recorded["stream"]
    assert len(sent["messages"]) == len(recorded["messages"])
    for ours, theirs in zip(sent["messages"], recorded["messages"], strict=True):
        assert {key: ours.get(key) for key in theirs} == theirs


def user(text: str) -> ProviderMessage:
    return ProviderMessage("user", [TextPart(text)])


# --- native /api/chat -------------------------------------------------------


def ollama_expected(body: dict[str, Any]) -> tuple[str, StopReason, int, int]:
    stop: StopReason = "max_tokens" if body.get("done_reason") == "length" else "end_turn"
    return body["message"]["content"], stop, body["prompt_eval_count"], body["eval_count"]


def assert_ollama_response(response: ProviderResponse, body: dict[str, Any]) -> None:
    text, stop, input_tokens, output_tokens = ollama_expected(body)
    assert list(response.content) == [TextPart(text)]
    assert response.stop_reason == stop
    assert (response.usage.input_tokens, response.usage.output_tokens) == (
        input_tokens,
        output_tokens,
    )
    assert response.model == body["model"]


async def test_native_chat_reply_replays() -> None:
    path = corpus_file("openllmetry__test_ollama_chat_legacy.yaml")
    [interaction] = recorded(path)
    capture = Capture()
    with replay(path, match_on=NO_BODY):
        async with OllamaProvider(base_url=NATIVE_HOST, client=capture.client()) as provider:
            response = await provider.complete(
                ProviderRequest(
                    model="llama3", messages=[user("Tell me a joke about OpenTelemetry")]
                )
            )
    assert_sent_what_was_recorded(capture.bodies[0], json.loads(interaction["request"]["body"]))
    assert_ollama_response(response, response_json(interaction))


async def test_native_ndjson_stream_replays_folded_into_one_response() -> None:
    path = corpus_file("openllmetry__test_ollama_streaming_chat_legacy.yaml")
    [interaction] = recorded(path)
    lines = [
        json.loads(line) for line in interaction["response"]["body"]["string"].splitlines() if line
    ]
    final = {
        **lines[-1],
        "message": {"content": "".join(line["message"]["content"] for line in lines)},
    }
    capture = Capture()
    with replay(path, match_on=NO_BODY):
        client = capture.client()
        async with OllamaProvider(base_url=NATIVE_HOST, client=client, stream=True) as provider:
            response = await provider.complete(
                ProviderRequest(
                    model="llama3", messages=[user("Tell me a joke about OpenTelemetry")]
                )
            )
    assert len(lines) == 50
    assert_sent_what_was_recorded(capture.bodies[0], json.loads(interaction["request"]["body"]))
    assert_ollama_response(response, final)


async def test_native_ndjson_stream_replays_through_stream_line_by_line() -> None:
    path = corpus_file("openllmetry__test_ollama_streaming_chat_legacy.yaml")
    [interaction] = recorded(path)
    lines = [
        json.loads(line) for line in interaction["response"]["body"]["string"].splitlines() if line
    ]
    pieces = [line["message"]["content"] for line in lines if line["message"]["content"]]
    final = {**lines[-1], "message": {"content": "".join(pieces)}}
    request = ProviderRequest(model="llama3", messages=[user("Tell me a joke about OpenTelemetry")])
    events = []
    with replay(path, match_on=NO_BODY):
        async with OllamaProvider(base_url=NATIVE_HOST, client=httpx.AsyncClient()) as provider:
            events = [event async for event in provider.stream(request)]
    *deltas, response = events
    assert deltas == [TextDelta(piece) for piece in pieces]
    assert isinstance(response, ProviderResponse)
    assert_ollama_response(response, final)


async def test_native_tool_call_history_replays_with_tool_names() -> None:
    path = corpus_file("openllmetry__test_ollama_chat_tool_calls_legacy.yaml")
    [interaction] = recorded(path)
    call = ToolUsePart(id="call_1", name="get_current_weather", input={"location": "San Francisco"})
    result = ToolResultPart("call_1", "The weather in San Francisco is 70 degrees and sunny.")
    capture = Capture()
    with replay(path, match_on=NO_BODY):
        async with OllamaProvider(base_url=NATIVE_HOST, client=capture.client()) as provider:
            response = await provider.complete(
                ProviderRequest(
                    model="llama3.1",
                    messages=[
                        ProviderMessage("assistant", [call]),
                        ProviderMessage("user", [result]),
                    ],
                )
            )
    sent = capture.bodies[0]
    assert_sent_what_was_recorded(sent, json.loads(interaction["request"]["body"]))
    assert sent["messages"][1]["tool_name"] == "get_current_weather"  # the recording predates it
    assert_ollama_response(response, response_json(interaction))


# --- OpenAI-compatible /v1/chat/completions ---------------------------------


def openai_provider(base_url: str) -> Provider:
    # The OpenAI plugin is developed alongside this one; import it only here.
    from neuron_provider_openai import OpenAIProvider

    return OpenAIProvider(base_url=base_url)


def assert_openai_response(response: ProviderResponse, body: dict[str, Any]) -> None:
    choice = body["choices"][0]
    message = choice["message"]
    texts = [part.text for part in response.content if isinstance(part, TextPart)]
    assert "".join(texts) == (message.get("content") or "")
    calls = [(p.id, p.name, p.input) for p in response.content if isinstance(p, ToolUsePart)]
    assert calls == [
        (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in message.get("tool_calls") or []
    ]
    expected_stop = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}
    assert response.stop_reason == expected_stop[choice["finish_reason"]]
    usage = body["usage"]
    assert (response.usage.input_tokens, response.usage.output_tokens) == (
        usage["prompt_tokens"],
        usage["completion_tokens"],
    )
    assert response.model == body["model"]


FINAL_RESULT = ToolSchema(
    name="final_result",
    description="The final response which ends this conversation",
    input_schema={
        "type": "object",
        "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
        "required": ["city", "country"],
        "additionalProperties": False,
    },
)


async def test_ollama_cloud_openai_compatible_tool_output_replays() -> None:
    path = corpus_file("pydantic-ai__test_ollama_cloud_tool_output.yaml")
    interactions = recorded(path)
    retry = json.loads(interactions[1]["request"]["body"])["messages"][2]["content"]
    question = user("What is the capital of France?")
    with replay(path, match_on=NO_BODY):
        provider = openai_provider("https://ollama.com/v1")
        first = await provider.complete(
            ProviderRequest(model="gpt-oss:20b", messages=[question], tools=[FINAL_RESULT])
        )
        second = await provider.complete(
            ProviderRequest(
                model="gpt-oss:20b",
                messages=[question, ProviderMessage("assistant", first.content), user(retry)],
                tools=[FINAL_RESULT],
            )
        )
    assert_openai_response(first, response_json(interactions[0]))
    assert_openai_response(second, response_json(interactions[1]))


async def test_local_openai_compatible_structured_output_replays() -> None:
    path = corpus_file("pydantic-ai__test_ollama_local_native_output_uses_json_schema.yaml")
    [interaction] = recorded(path)
    response_format = json.loads(interaction["request"]["body"])["response_format"]
    with replay(path, match_on=NO_BODY):
        provider = openai_provider("http://localhost:11434/v1")
        response = await provider.complete(
            ProviderRequest(
                model="qwen3:0.6b",
                messages=[user("What is the capital of France?")],
                extra={"response_format": response_format},
            )
        )
    assert_openai_response(response, response_json(interaction))


# --- coverage of the corpus folder ------------------------------------------

REPLAYED: dict[str, Callable[[], Awaitable[None]]] = {
    "openllmetry__test_ollama_chat_legacy.yaml": test_native_chat_reply_replays,
    "openllmetry__test_ollama_streaming_chat_legacy.yaml": (
        test_native_ndjson_stream_replays_folded_into_one_response
    ),
    "openllmetry__test_ollama_chat_tool_calls_legacy.yaml": (
        test_native_tool_call_history_replays_with_tool_names
    ),
    "pydantic-ai__test_ollama_cloud_tool_output.yaml": (
        test_ollama_cloud_openai_compatible_tool_output_replays
    ),
    "pydantic-ai__test_ollama_local_native_output_uses_json_schema.yaml": (
        test_local_openai_compatible_structured_output_replays
    ),
}


def test_every_corpus_cassette_has_a_replay_test() -> None:
    corpus_file("")
    assert sorted(path.name for path in CORPUS.glob("*.yaml")) == sorted(REPLAYED)
