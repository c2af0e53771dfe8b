"""A provider given any answer body returns a response or raises a `ProviderError`, never else.

Hypothesis takes a well-formed answer of each HTTP provider (text, a tool
call, usage) and breaks it: a field gone, a value of the wrong type, a huge
or negative number, NaN, text with lone surrogates, nesting past any limit.
Whatever the server (or a model writing into it) sends, the turn must see
either a usable `ProviderResponse` or a provider error that says what was
wrong: a `KeyError` or `TypeError` would crash the turn with no such word.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable
from typing import Any

import httpx
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from neuron_provider_anthropic import AnthropicProvider
from neuron_provider_ollama import OllamaProvider
from neuron_provider_openai import OpenAIProvider
from neuron_turn import ProviderMessage, ProviderRequest, ProviderResponse, TextPart
from neuron_turn.loop.provider_errors import ProviderError

from .provider_anthropic._support import message_json
from .provider_ollama._support import chat_body
from .provider_openai._support import completion, tool_call


class _Deep:
    """Stands for 3,000 nested arrays, written into the body's JSON text as such."""


_DEEP_TEXT = "[" * 3000 + "1" + "]" * 3000
_MARK = "\u0000deep\u0000"

_HOSTILE = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(st.characters(exclude_categories=()), max_size=8)
    | st.sampled_from(["", "\ud800", [], {}, [None], {"": None}, "x" * 5000])
    | st.builds(_Deep)
)

_BODIES: dict[str, dict[str, Any]] = {
    "openai": completion(
        "Hi", finish_reason="tool_calls", tool_calls=[tool_call("call_1", "add", '{"a": 1}')]
    ),
    "anthropic": message_json(
        [
            {"type": "text", "text": "Hi"},
            {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 1}},
        ],
        stop_reason="tool_use",
    ),
    "ollama": chat_body("Hi", tool_calls=[{"function": {"name": "add", "arguments": {"a": 1}}}]),
}


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    paths = [prefix]
    if len(prefix) > 8:
        return paths
    if isinstance(value, dict):
        for key, item in value.items():
            paths.extend(_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            paths.extend(_paths(item, (*prefix, index)))
    return paths


@st.composite
def _broken(draw: st.DrawFn, good: Any) -> Any:
    """`good` with one to three fields replaced or removed."""
    body: Any = copy.deepcopy(good)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        path = draw(st.sampled_from(_paths(body)))
        hostile = copy.deepcopy(draw(_HOSTILE))  # drawn constants are shared between examples
        if not path:
            body = hostile
            continue
        parent: Any = body
        for step in path[:-1]:
            parent = parent[step]
        if draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = hostile
        if not isinstance(body, dict | list):
            break
    return body


def _json(value: Any) -> str:
    text = json.dumps(value, default=lambda _: _MARK)
    return text.replace(json.dumps(_MARK), _DEEP_TEXT)


def _client(content: bytes, content_type: str = "application/json") -> httpx.AsyncClient:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=content, headers={"content-type": content_type})

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


_PROVIDERS: dict[str, Callable[[httpx.AsyncClient], Any]] = {
    "openai": lambda client: OpenAIProvider("gpt-4o-mini", client=client, api_key="sk-x"),
    "anthropic": lambda client: AnthropicProvider(
        "claude-haiku-4-5", client=client, api_key="sk-ant-x"
    ),
    "ollama": lambda client: OllamaProvider(
        "llama3.2", client=client, base_url="http://localhost:11434"
    ),
}

_REQUEST = ProviderRequest(model="", messages=[ProviderMessage("user", [TextPart("Hi")])])


async def _answer(name: str, body: Any) -> None:
    provider = _PROVIDERS[name](_client(_json(body).encode()))
    try:
        response = await provider.complete(_REQUEST)
    except ProviderError as exc:
        assert exc.message, exc  # says what was wrong
        return
    assert isinstance(response, ProviderResponse)


# The same examples on every run, so a landing is never decided by chance; raise
# max_examples (thousands pass) to look further.
_SETTINGS = settings(
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@settings(_SETTINGS, max_examples=150)
@example(("anthropic", {**_BODIES["anthropic"], "stop_reason": []}))  # was a TypeError
@given(
    st.sampled_from(sorted(_BODIES)).flatmap(
        lambda name: st.tuples(st.just(name), _broken(_BODIES[name]))
    )
)
def test_a_broken_answer_body_is_a_response_or_a_provider_error(case: tuple[str, Any]) -> None:
    name, body = case
    asyncio.run(_answer(name, body))


_START = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-haiku-4-5"}
_CHUNK = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-mini"}
_STREAMS: dict[str, list[Any]] = {
    "anthropic": [
        {
            "type": "message_start",
            "message": {
                **_START,
                "content": [],
                "stop_reason": None,
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": '{"a": 1}'},
        },
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 5},
        },
        {"type": "message_stop"},
    ],
    "openai": [
        {
            **_CHUNK,
            "choices": [
                {"index": 0, "delta": {"role": "assistant", "content": "Hi"}, "finish_reason": None}
            ],
        },
        {
            **_CHUNK,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": None,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "add", "arguments": ""},
                            }
                        ]
                    },
                }
            ],
        },
        {
            **_CHUNK,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": None,
                    "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '{"a": 1}'}}]},
                }
            ],
        },
        {**_CHUNK, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {
            **_CHUNK,
            "choices": [],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        },
    ],
    "ollama": [
        {"model": "llama3.2", "message": {"role": "assistant", "content": "Hi"}, "done": False},
        {
            "model": "llama3.2",
            "done": False,
            "message": {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"function": {"name": "add", "arguments": {"a": 1}}}],
            },
        },
        {
            "model": "llama3.2",
            "message": {"role": "assistant", "content": ""},
            "done": True,
            "done_reason": "stop",
            "prompt_eval_count": 10,
            "eval_count": 5,
        },
    ],
}


def _stream_body(name: str, events: Any) -> tuple[bytes, str]:
    """The events as the provider's wire sends them: SSE, or one JSON object a line."""
    if not isinstance(events, list):
        events = [events]
    if name == "ollama":
        return "".join(_json(event) + "\n" for event in events).encode(), "application/x-ndjson"
    if name == "anthropic":
        lines = [
            f"event: {event.get('type') if isinstance(event, dict) else 'x'}\n"
            f"data: {_json(event)}\n\n"
            for event in events
        ]
    else:
        lines = [f"data: {_json(event)}\n\n" for event in events] + ["data: [DONE]\n\n"]
    # An event name is raw text: a lone surrogate in one goes out as the bytes it would be.
    return "".join(lines).encode("utf-8", "surrogatepass"), "text/event-stream"


async def _streamed(name: str, events: Any) -> None:
    provider = _PROVIDERS[name](_client(*_stream_body(name, events)))
    final: list[ProviderResponse] = []
    try:
        async for event in provider.stream(_REQUEST):
            if isinstance(event, ProviderResponse):
                final.append(event)
    except ProviderError as exc:
        assert exc.message, exc
        return
    assert len(final) == 1  # a stream that did not fail ends with its one response


@settings(_SETTINGS, max_examples=150)
@given(
    st.sampled_from(sorted(_STREAMS)).flatmap(
        lambda name: st.tuples(st.just(name), _broken(_STREAMS[name]))
    )
)
def test_a_broken_stream_is_deltas_and_a_response_or_a_provider_error(
    case: tuple[str, Any],
) -> None:
    name, events = case
    asyncio.run(_streamed(name, events))
