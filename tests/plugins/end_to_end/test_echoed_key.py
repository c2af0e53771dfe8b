"""A 200 answer that echoes the caller's API key: no provider lets it through.

Not into the turn's output, not into the SQLite state file, and not into the
error (or anything chained to it) when the echoing body is malformed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from layer0 import TurnInput
from neuron_orch_local import LocalOrchestrator
from neuron_provider_anthropic import AnthropicProvider
from neuron_provider_ollama import OllamaProvider
from neuron_provider_openai import OpenAIProvider
from neuron_state_sqlite import SqliteStore
from neuron_tool import ToolRegistry, tool
from neuron_turn import (
    NeuronTurn,
    NeuronTurnConfig,
    Provider,
    ProviderError,
    ProviderMessage,
    ProviderRequest,
    TextPart,
)

KEY = "sk-proj-ECHOED-0123456789abcdefghijklmnopqrstuv"
ESCAPED = "".join(f"\\u{ord(c):04x}" for c in KEY)
"""The key as a JSON string body may spell it, one escape per character."""


@tool
async def lookup(query: str) -> str:
    """Look something up."""
    return f"no result for {query}"


def _anthropic_body(text: str, call_arg: str | None = None) -> str:
    content = f'{{"type":"text","text":"{text}"}}'
    if call_arg is not None:
        call = f'"type":"tool_use","id":"toolu_1","name":"lookup","input":{{"query":"{call_arg}"}}'
        content += f",{{{call}}}"
    stop = "tool_use" if call_arg is not None else "end_turn"
    return (
        '{"id":"msg_1","type":"message","role":"assistant","model":"claude-haiku-4-5",'
        f'"content":[{content}],"stop_reason":"{stop}","stop_sequence":null,'
        '"usage":{"input_tokens":10,"output_tokens":5}}'
    )


def _openai_body(text: str, call_arg: str | None = None) -> str:
    calls = ""
    if call_arg is not None:
        arguments = json.dumps(json.dumps({"query": "PLACEHOLDER"})).replace(
            "PLACEHOLDER", call_arg
        )
        calls = (
            ',"tool_calls":[{"id":"call_1","type":"function","function":'
            f'{{"name":"lookup","arguments":{arguments}}}}}]'
        )
    finish = "tool_calls" if call_arg is not None else "stop"
    return (
        '{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o-mini",'
        f'"choices":[{{"index":0,"message":{{"role":"assistant","content":"{text}"{calls}}},'
        f'"finish_reason":"{finish}"}}],'
        '"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}'
    )


def _ollama_body(text: str, call_arg: str | None = None) -> str:
    calls = ""
    if call_arg is not None:
        function = f'{{"name":"lookup","arguments":{{"query":"{call_arg}"}}}}'
        calls = f',"tool_calls":[{{"function":{function}}}]'
    return (
        '{"model":"llama3.2","created_at":"2026-11-20T10:00:00Z",'
        f'"message":{{"role":"assistant","content":"{text}"{calls}}},'
        '"done":true,"done_reason":"stop","prompt_eval_count":10,"eval_count":5}'
    )


def _anthropic(client: httpx.AsyncClient) -> Provider:
    return AnthropicProvider("claude-haiku-4-5", api_key=KEY, client=client)


def _openai(client: httpx.AsyncClient) -> Provider:
    return OpenAIProvider("gpt-4o-mini", api_key=KEY, client=client)


def _ollama(client: httpx.AsyncClient) -> Provider:
    return OllamaProvider("llama3.2", base_url="http://localhost:11434", api_key=KEY, client=client)


PROVIDERS: dict[str, tuple[Callable[[httpx.AsyncClient], Provider], Callable[..., str]]] = {
    "anthropic": (_anthropic, _anthropic_body),
    "openai": (_openai, _openai_body),
    "ollama": (_ollama, _ollama_body),
}


def _replying(*bodies: str) -> httpx.AsyncClient:
    queue = list(bodies)

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, content=queue.pop(0), headers={"content-type": "application/json"}
        )

    return httpx.AsyncClient(transport=httpx.MockTransport(answer))


def _files(folder: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(folder.iterdir()))


@pytest.mark.parametrize("spelling", [KEY, ESCAPED], ids=["plain", "json-escaped"])
@pytest.mark.parametrize("name", sorted(PROVIDERS))
async def test_an_echoed_key_reaches_neither_the_output_nor_the_state_file(
    name: str, spelling: str, tmp_path: Path
) -> None:
    make, body = PROVIDERS[name]
    client = _replying(
        body(f"your key is {spelling}", call_arg=f"find {spelling}"),
        body(f"again: {spelling}"),
    )
    turn = NeuronTurn(
        make(client), tools=ToolRegistry([lookup]), config=NeuronTurnConfig(model="m")
    )
    async with SqliteStore(tmp_path / "state.db") as store:
        orchestrator = LocalOrchestrator({"main": turn}, store)
        output = await orchestrator.dispatch(
            "main", TurnInput(message="hi", trigger="user", session="s1")
        )
        history = await store.read({"session": "s1"}, "messages")
    assert output.exit_reason == "complete"
    assert "[REDACTED]" in output.message.as_text()
    dumped = output.model_dump_json()
    assert KEY not in dumped and KEY not in json.dumps(history)
    assert "find [REDACTED]" in json.dumps(history)  # the tool's argument, too
    assert KEY.encode() not in _files(tmp_path)


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    pending: list[BaseException | None] = [exc]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        pending += [current.__cause__, current.__context__]


def _everything_in(exc: BaseException) -> str:
    texts = [repr(exc), str(exc), repr(exc.args)]
    for value in vars(exc).values():
        if isinstance(value, httpx.Response):
            texts += [value.text, repr(dict(value.headers))]
        elif isinstance(value, httpx.Request):
            texts += [value.content.decode(errors="replace")]
        elif isinstance(value, bytes):
            texts.append(value.decode(errors="replace"))
        else:
            texts.append(repr(value))
    return "\n".join(texts)


@pytest.mark.parametrize("name", sorted(PROVIDERS))
async def test_a_malformed_body_echoing_the_key_leaves_it_nowhere_in_the_error_chain(
    name: str,
) -> None:
    make, _ = PROVIDERS[name]
    client = _replying('{"echo": "' + KEY + '", "truncated": ')  # not JSON, key inside
    turn = NeuronTurn(make(client), config=NeuronTurnConfig(model="m"))
    with pytest.raises(Exception) as raised:
        await turn.execute(TurnInput(message="hi", trigger="user"))
    chain = list(_chain(raised.value))
    assert any(isinstance(error, ProviderError) for error in chain)
    for error in chain:
        assert KEY not in _everything_in(error), type(error)


def test_the_escaped_spelling_is_the_key() -> None:
    assert json.loads(f'"{ESCAPED}"') == KEY


ERROR_BODIES = [
    {"error": {"message": f"invalid key Bearer {KEY}", "type": "auth"}},  # OpenAI, Anthropic
    {"error": f"invalid key Bearer {KEY}"},  # Ollama
]


@pytest.mark.parametrize("error", ERROR_BODIES, ids=["object", "string"])
@pytest.mark.parametrize("status", [401, 500])
@pytest.mark.parametrize("name", sorted(PROVIDERS))
async def test_an_error_body_echoing_the_key_leaves_it_nowhere_in_the_error_chain(
    name: str, status: int, error: dict[str, Any]
) -> None:
    make, _ = PROVIDERS[name]
    body = json.dumps(error)

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=body, headers={"content-type": "application/json"})

    provider = make(httpx.AsyncClient(transport=httpx.MockTransport(answer)))
    turn = NeuronTurn(provider, config=NeuronTurnConfig(model="m"))
    with pytest.raises(Exception) as raised:
        await turn.execute(TurnInput(message="hi", trigger="user"))
    for error in _chain(raised.value):
        assert KEY not in _everything_in(error), type(error)


STREAMED = {
    "openai": (
        'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":'
        '[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\n'
        'data: {"broken": "' + KEY + "\n\ndata: [DONE]\n\n",
        "text/event-stream",
    ),
    "ollama": (
        '{"model":"m","message":{"role":"assistant","content":"hi"},"done":false}\n'
        '{"broken":"' + KEY + "\n",
        "application/x-ndjson",
    ),
    "anthropic": (
        'event: message_start\ndata: {"type":"message_start","message":{"id":"m",'
        '"type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,'
        '"usage":{"input_tokens":1,"output_tokens":1}}}\n\n'
        'event: content_block_delta\ndata: {"broken":"' + KEY + "\n\n",
        "text/event-stream",
    ),
}


@pytest.mark.parametrize("name", sorted(PROVIDERS))
async def test_a_broken_stream_echoing_the_key_leaves_it_nowhere_in_the_error_chain(
    name: str,
) -> None:
    make, _ = PROVIDERS[name]
    body, content_type = STREAMED[name]

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body, headers={"content-type": content_type})

    provider = make(httpx.AsyncClient(transport=httpx.MockTransport(answer)))
    request = ProviderRequest(
        model="m", messages=[ProviderMessage("user", [TextPart("hi")])], extra={"stream": True}
    )
    with pytest.raises(ProviderError) as raised:
        await provider.complete(request)
    for error in _chain(raised.value):
        assert KEY not in _everything_in(error), type(error)
