"""Our providers beside the vendors' own Python SDKs: CPU per call; one JSON line per scenario.

Run with `python bench/provider_sdks.py [calls] [provider ...]` after
`bash scripts/setup --bench` (the `openai`, `anthropic`, `ollama` and
`google-genai` SDKs are bench-only dependencies, never runtime ones); naming
providers (`google`, `openai_responses`...) runs only their rows. For each HTTP
provider, the same request (a system prompt, a
user message, one tool) goes through our provider and through the vendor's SDK
over the same `httpx.MockTransport`, answered with a text and three tool calls,
as one JSON body (`complete`) and as a stream (`stream`). Each side does what a
caller needs: ours returns a `ProviderResponse` with the tool inputs parsed and
the cost priced; the SDK returns its typed response object (the streaming
helpers `messages.stream` / `chat.completions.stream` accumulate the final
message, as our `stream()` does; Ollama's and Google's streams are iterated to
their end, google-genai having no accumulating helper).

Every scenario runs `REPEATS` times interleaved with the others and the median
CPU µs per call is printed, with `ours_over_sdk` (the target is at most 0.5).
`transport_floor` is a bare POST and `json.loads` of the JSON answer through each
mock client (`httpx` for ours and the Ollama and Google SDKs, `httpx2` for the OpenAI and
Anthropic SDKs), to a URL parsed once as every provider's endpoint is: the part
of every figure no client code can remove. Each row also has its own
`floor_cpu_us`: that provider's answer POSTed through our `httpx` mock and
decoded (`json.loads` of the body, or of each JSON line of the stream) with no
client code at all; `floor_over_sdk` is then the lowest `ours_over_sdk` any
client on `httpx` could reach.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
from collections.abc import Awaitable, Callable
from typing import Any, Final

import anthropic
import httpx
import httpx2
import ollama
import openai
from _timing import time_calls
from google import genai
from google.genai import types as genai_types

from neuron_provider_anthropic import AnthropicProvider
from neuron_provider_google import GoogleProvider
from neuron_provider_ollama import OllamaProvider
from neuron_provider_openai import OpenAIProvider, OpenAIResponsesProvider
from neuron_tool.schema import ToolSchema
from neuron_turn import Provider, ProviderMessage, ProviderRequest, TextPart

DEFAULT_CALLS = 1_000
WARMUP_CALLS = 100
REPEATS = 3
SYSTEM = "You are a helpful assistant."
QUESTION = "What is the weather in Paris, Rome and Oslo?"
CITIES = ("Paris", "Rome", "Oslo")
TEXT = "Checking all three cities."
WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
WEATHER = ToolSchema(
    name="get_weather",
    description="Return the current weather in a city.",
    input_schema=WEATHER_SCHEMA,
)
Call = Callable[[], Awaitable[object]]


def _client(body: bytes, content_type: str) -> httpx.AsyncClient:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body, headers={"content-type": content_type})

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


def _client2(body: bytes, content_type: str) -> httpx2.AsyncClient:
    """The same mock for the SDKs built on `httpx2` (the `openai` and `anthropic` packages)."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=body, headers={"content-type": content_type})

    return httpx2.AsyncClient(transport=httpx2.MockTransport(handler))


def _sse(events: list[dict[str, Any]], *, named: bool) -> bytes:
    if named:
        return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
    return ("".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n").encode()


def _request(model: str) -> ProviderRequest:
    return ProviderRequest(
        model=model,
        messages=[ProviderMessage("user", [TextPart(QUESTION)])],
        tools=[WEATHER],
        system=SYSTEM,
        max_tokens=1024,
    )


# --- Anthropic -------------------------------------------------------------

ANTHROPIC_MODEL = "claude-haiku-4-5"
ANTHROPIC_USAGE = {"input_tokens": 412, "output_tokens": 68}
ANTHROPIC_BODY = {
    "id": "msg_01BENCH",
    "type": "message",
    "role": "assistant",
    "model": "claude-haiku-4-5-20251001",
    "content": [{"type": "text", "text": TEXT}]
    + [
        {"type": "tool_use", "id": f"toolu_{i:024d}", "name": "get_weather", "input": {"city": c}}
        for i, c in enumerate(CITIES)
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": ANTHROPIC_USAGE,
}


def _anthropic_events() -> list[dict[str, Any]]:
    start = {key: value for key, value in ANTHROPIC_BODY.items() if key != "content"}
    start |= {"content": [], "stop_reason": None}
    start["usage"] = {"input_tokens": 412, "output_tokens": 1}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    events.append(
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    )
    for word in TEXT.split(" "):
        delta = {"type": "text_delta", "text": word + " "}
        events.append({"type": "content_block_delta", "index": 0, "delta": delta})
    events.append({"type": "content_block_stop", "index": 0})
    for index, city in enumerate(CITIES, start=1):
        block = {"type": "tool_use", "id": f"toolu_{index:024d}", "name": "get_weather"}
        events.append(
            {"type": "content_block_start", "index": index, "content_block": block | {"input": {}}}
        )
        for piece in ('{"city": ', json.dumps(city), "}"):
            delta = {"type": "input_json_delta", "partial_json": piece}
            events.append({"type": "content_block_delta", "index": index, "delta": delta})
        events.append({"type": "content_block_stop", "index": index})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 68},
        }
    )
    events.append({"type": "message_stop"})
    return events


def _anthropic_ours(stream: bool) -> Call:
    body = _sse(_anthropic_events(), named=True) if stream else json.dumps(ANTHROPIC_BODY).encode()
    kind = "text/event-stream" if stream else "application/json"
    provider = AnthropicProvider(ANTHROPIC_MODEL, api_key="bench", client=_client(body, kind))
    return _ours(provider, _request(ANTHROPIC_MODEL), stream)


def _anthropic_sdk(stream: bool) -> Call:
    body = _sse(_anthropic_events(), named=True) if stream else json.dumps(ANTHROPIC_BODY).encode()
    kind = "text/event-stream" if stream else "application/json"
    client = anthropic.AsyncAnthropic(
        api_key="bench", http_client=_client2(body, kind), max_retries=0
    )
    tool: Any = {
        "name": WEATHER.name,
        "description": WEATHER.description,
        "input_schema": WEATHER_SCHEMA,
    }
    kwargs: Any = {
        "model": ANTHROPIC_MODEL,
        "max_tokens": 1024,
        "system": SYSTEM,
        "messages": [{"role": "user", "content": QUESTION}],
        "tools": [tool],
    }

    async def complete() -> object:
        return await client.messages.create(**kwargs)

    async def streamed() -> object:
        async with client.messages.stream(**kwargs) as events:
            async for _event in events:
                pass
            return await events.get_final_message()

    return streamed if stream else complete


# --- OpenAI ----------------------------------------------------------------

OPENAI_MODEL = "gpt-4o-mini"
OPENAI_USAGE = {
    "prompt_tokens": 71,
    "completion_tokens": 15,
    "total_tokens": 86,
    "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
    "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
}
OPENAI_CALLS = [
    {
        "id": f"call_{i:024d}",
        "type": "function",
        "function": {"name": "get_weather", "arguments": json.dumps({"city": c})},
    }
    for i, c in enumerate(CITIES)
]
OPENAI_BODY = {
    "id": "chatcmpl-bench",
    "object": "chat.completion",
    "created": 1763802312,
    "model": "gpt-4o-mini-2024-07-18",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": TEXT,
                "tool_calls": OPENAI_CALLS,
                "refusal": None,
            },
            "logprobs": None,
            "finish_reason": "tool_calls",
        }
    ],
    "usage": OPENAI_USAGE,
    "service_tier": "default",
    "system_fingerprint": "fp_560af6e559",
}


def _openai_chunks() -> list[dict[str, Any]]:
    head = {key: OPENAI_BODY[key] for key in ("id", "created", "model", "system_fingerprint")}
    head["object"] = "chat.completion.chunk"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return head | {"choices": [choice]}

    chunks = [chunk({"role": "assistant", "content": "", "refusal": None})]
    chunks += [chunk({"content": word + " "}) for word in TEXT.split(" ")]
    for index, call in enumerate(OPENAI_CALLS):
        first = {"index": index, "id": call["id"], "type": "function"}
        first["function"] = {"name": "get_weather", "arguments": ""}
        chunks.append(chunk({"tool_calls": [first]}))
        arguments = call["function"]["arguments"]
        for piece in (arguments[:9], arguments[9:]):
            more = {"index": index, "function": {"arguments": piece}}
            chunks.append(chunk({"tool_calls": [more]}))
    chunks.append(chunk({}, "tool_calls"))
    chunks.append(head | {"choices": [], "usage": OPENAI_USAGE})
    return chunks


def _openai_ours(stream: bool) -> Call:
    body = _sse(_openai_chunks(), named=False) if stream else json.dumps(OPENAI_BODY).encode()
    kind = "text/event-stream" if stream else "application/json"
    provider = OpenAIProvider(OPENAI_MODEL, api_key="sk-bench", client=_client(body, kind))
    return _ours(provider, _request(OPENAI_MODEL), stream)


def _openai_sdk(stream: bool) -> Call:
    body = _sse(_openai_chunks(), named=False) if stream else json.dumps(OPENAI_BODY).encode()
    kind = "text/event-stream" if stream else "application/json"
    client = openai.AsyncOpenAI(api_key="sk-bench", http_client=_client2(body, kind), max_retries=0)
    tool: Any = {
        "type": "function",
        "function": {
            "name": WEATHER.name,
            "description": WEATHER.description,
            "parameters": WEATHER_SCHEMA,
        },
    }
    messages: Any = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": QUESTION},
    ]
    kwargs: Any = {
        "model": OPENAI_MODEL,
        "messages": messages,
        "tools": [tool],
        "max_completion_tokens": 1024,
    }

    async def complete() -> object:
        return await client.chat.completions.create(**kwargs)

    async def streamed() -> object:
        async with client.chat.completions.stream(
            **kwargs, stream_options={"include_usage": True}
        ) as events:
            async for _event in events:
                pass
            return await events.get_final_completion()

    return streamed if stream else complete


# --- OpenAI Responses API ---------------------------------------------------

RESPONSES_USAGE = {
    "input_tokens": 71,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 15,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 86,
}
RESPONSES_MESSAGE = {
    "id": "msg_bench",
    "type": "message",
    "status": "completed",
    "role": "assistant",
    "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": TEXT}],
}
RESPONSES_CALLS = [
    {
        "id": f"fc_{i:024d}",
        "type": "function_call",
        "status": "completed",
        "call_id": f"call_{i:024d}",
        "name": "get_weather",
        "arguments": json.dumps({"city": c}),
    }
    for i, c in enumerate(CITIES)
]


def _responses_body(status: str, output: list[dict[str, Any]], usage: Any) -> dict[str, Any]:
    return {
        "id": "resp_bench",
        "object": "response",
        "created_at": 1763802312,
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": SYSTEM,
        "max_output_tokens": 1024,
        "model": "gpt-4o-mini-2024-07-18",
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "store": False,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "user": None,
        "metadata": {},
    }


RESPONSES_BODY = _responses_body(
    "completed", [RESPONSES_MESSAGE, *RESPONSES_CALLS], RESPONSES_USAGE
)


def _responses_events() -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": _responses_body("in_progress", [], None)}
    ]
    item = RESPONSES_MESSAGE | {"status": "in_progress", "content": []}
    events.append({"type": "response.output_item.added", "output_index": 0, "item": item})
    part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
    events.append(
        {"type": "response.content_part.added", "item_id": "msg_bench", "output_index": 0}
        | {"content_index": 0, "part": part}
    )
    for word in TEXT.split(" "):
        events.append(
            {"type": "response.output_text.delta", "item_id": "msg_bench", "output_index": 0}
            | {"content_index": 0, "delta": word + " ", "logprobs": []}
        )
    events.append(
        {"type": "response.output_text.done", "item_id": "msg_bench", "output_index": 0}
        | {"content_index": 0, "text": TEXT, "logprobs": []}
    )
    done_part = part | {"text": TEXT}
    events.append(
        {"type": "response.content_part.done", "item_id": "msg_bench", "output_index": 0}
        | {"content_index": 0, "part": done_part}
    )
    events.append(
        {"type": "response.output_item.done", "output_index": 0, "item": RESPONSES_MESSAGE}
    )
    for index, call in enumerate(RESPONSES_CALLS, start=1):
        added = call | {"status": "in_progress", "arguments": ""}
        events.append({"type": "response.output_item.added", "output_index": index, "item": added})
        arguments = call["arguments"]
        for piece in (arguments[:9], arguments[9:]):
            events.append(
                {"type": "response.function_call_arguments.delta", "item_id": call["id"]}
                | {"output_index": index, "delta": piece}
            )
        events.append(
            {"type": "response.function_call_arguments.done", "item_id": call["id"]}
            | {"output_index": index, "arguments": arguments}
        )
        events.append({"type": "response.output_item.done", "output_index": index, "item": call})
    events.append({"type": "response.completed", "response": RESPONSES_BODY})
    return [event | {"sequence_number": number} for number, event in enumerate(events)]


def _responses_answer(stream: bool) -> tuple[bytes, str]:
    if stream:
        return _sse(_responses_events(), named=True), "text/event-stream"
    return json.dumps(RESPONSES_BODY).encode(), "application/json"


def _responses_ours(stream: bool) -> Call:
    body, kind = _responses_answer(stream)
    client = _client(body, kind)
    provider = OpenAIResponsesProvider(OPENAI_MODEL, api_key="sk-bench", client=client)
    return _ours(provider, _request(OPENAI_MODEL), stream)


def _responses_sdk(stream: bool) -> Call:
    body, kind = _responses_answer(stream)
    client = openai.AsyncOpenAI(api_key="sk-bench", http_client=_client2(body, kind), max_retries=0)
    tool: Any = {
        "type": "function",
        "name": WEATHER.name,
        "description": WEATHER.description,
        "parameters": WEATHER_SCHEMA,
        "strict": False,
    }
    question: Any = [{"role": "user", "content": [{"type": "input_text", "text": QUESTION}]}]
    kwargs: Any = {
        "model": OPENAI_MODEL,
        "instructions": SYSTEM,
        "input": question,
        "tools": [tool],
        "max_output_tokens": 1024,
        "store": False,
    }

    async def complete() -> object:
        return await client.responses.create(**kwargs)

    async def streamed() -> object:
        async with client.responses.stream(**kwargs) as events:
            async for _event in events:
                pass
            return await events.get_final_response()

    return streamed if stream else complete


# --- Google Gemini API --------------------------------------------------------

GOOGLE_MODEL = "gemini-2.5-flash"
GOOGLE_HEAD = {"modelVersion": GOOGLE_MODEL, "responseId": "bench-4Y2laP3pB8ue1dkP"}
GOOGLE_USAGE = {
    "promptTokenCount": 71,
    "candidatesTokenCount": 15,
    "totalTokenCount": 86,
    "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 71}],
}
GOOGLE_CALLS = [
    {"functionCall": {"name": "get_weather", "args": {"city": city}}} for city in CITIES
]


def _google_chunk(parts: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "usageMetadata": GOOGLE_USAGE} | GOOGLE_HEAD


GOOGLE_BODY = _google_chunk([{"text": TEXT}, *GOOGLE_CALLS], "STOP")


def _google_answer(stream: bool) -> tuple[bytes, str]:
    if not stream:
        return json.dumps(GOOGLE_BODY).encode(), "application/json"
    chunks = [_google_chunk([{"text": word + " "}]) for word in TEXT.split(" ")]
    chunks.append(_google_chunk(GOOGLE_CALLS, "STOP"))
    body = "".join(f"data: {json.dumps(chunk)}\r\n\r\n" for chunk in chunks)
    return body.encode(), "text/event-stream"


def _google_ours(stream: bool) -> Call:
    body, kind = _google_answer(stream)
    provider = GoogleProvider(GOOGLE_MODEL, api_key="bench", client=_client(body, kind))
    return _ours(provider, _request(GOOGLE_MODEL), stream)


def _google_sdk(stream: bool) -> Call:
    body, kind = _google_answer(stream)
    options = genai_types.HttpOptions(httpx_async_client=_client(body, kind))
    client = genai.Client(api_key="bench", http_options=options)
    declaration = genai_types.FunctionDeclaration(
        name=WEATHER.name,
        description=WEATHER.description,
        parameters_json_schema=WEATHER_SCHEMA,
    )
    config = genai_types.GenerateContentConfig(
        system_instruction=SYSTEM,
        tools=[genai_types.Tool(function_declarations=[declaration])],
        max_output_tokens=1024,
        # The SDK would otherwise look for Python callables to run the calls itself.
        automatic_function_calling=genai_types.AutomaticFunctionCallingConfig(disable=True),
    )

    async def complete() -> object:
        return await client.aio.models.generate_content(
            model=GOOGLE_MODEL, contents=QUESTION, config=config
        )

    async def streamed() -> object:
        chunks = await client.aio.models.generate_content_stream(
            model=GOOGLE_MODEL, contents=QUESTION, config=config
        )
        last: object = None
        async for chunk in chunks:
            last = chunk
        return last

    return streamed if stream else complete


# --- Ollama ----------------------------------------------------------------

OLLAMA_MODEL = "llama3.2"
OLLAMA_BASE = "http://localhost:11434"
OLLAMA_HEAD = {"model": OLLAMA_MODEL, "created_at": "2025-11-22T10:00:00.000000Z"}
OLLAMA_CALLS = [
    {"function": {"name": "get_weather", "arguments": {"city": city}}} for city in CITIES
]
OLLAMA_DONE = {
    "done": True,
    "done_reason": "stop",
    "total_duration": 812345678,
    "load_duration": 12345678,
    "prompt_eval_count": 71,
    "prompt_eval_duration": 123456789,
    "eval_count": 15,
    "eval_duration": 234567890,
}
OLLAMA_BODY = OLLAMA_HEAD | {
    "message": {"role": "assistant", "content": TEXT, "tool_calls": OLLAMA_CALLS},
    **OLLAMA_DONE,
}


def _ollama_lines() -> bytes:
    lines = [
        OLLAMA_HEAD | {"message": {"role": "assistant", "content": word + " "}, "done": False}
        for word in TEXT.split(" ")
    ]
    calls = {"role": "assistant", "content": "", "tool_calls": OLLAMA_CALLS}
    lines.append(OLLAMA_HEAD | {"message": calls, "done": False})
    lines.append(OLLAMA_HEAD | {"message": {"role": "assistant", "content": ""}, **OLLAMA_DONE})
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def _ollama_ours(stream: bool) -> Call:
    body = _ollama_lines() if stream else json.dumps(OLLAMA_BODY).encode()
    kind = "application/x-ndjson" if stream else "application/json"
    provider = OllamaProvider(OLLAMA_MODEL, base_url=OLLAMA_BASE, client=_client(body, kind))
    return _ours(provider, _request(OLLAMA_MODEL), stream)


def _ollama_sdk(stream: bool) -> Call:
    body = _ollama_lines() if stream else json.dumps(OLLAMA_BODY).encode()
    kind = "application/x-ndjson" if stream else "application/json"

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body, headers={"content-type": kind})

    client = ollama.AsyncClient(host=OLLAMA_BASE, transport=httpx.MockTransport(handler))
    tool: Any = {
        "type": "function",
        "function": {
            "name": WEATHER.name,
            "description": WEATHER.description,
            "parameters": WEATHER_SCHEMA,
        },
    }
    messages: Any = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": QUESTION},
    ]

    async def complete() -> object:
        return await client.chat(OLLAMA_MODEL, messages=messages, tools=[tool])

    async def streamed() -> object:
        parts = await client.chat(OLLAMA_MODEL, messages=messages, tools=[tool], stream=True)
        last: object = None
        async for part in parts:
            last = part
        return last

    return streamed if stream else complete


# --- running ---------------------------------------------------------------


def _ours(provider: Provider, request: ProviderRequest, stream: bool) -> Call:
    async def complete() -> object:
        response = await provider.complete(request)
        assert len(response.content) == 4, response.content
        return response

    async def streamed() -> object:
        events = 0
        async for _event in provider.stream(request):  # type: ignore[attr-defined]
            events += 1
        return events

    return streamed if stream else complete


BODIES: dict[str, Callable[[bool], tuple[bytes, str]]] = {
    "anthropic": lambda stream: (
        (_sse(_anthropic_events(), named=True), "text/event-stream")
        if stream
        else (json.dumps(ANTHROPIC_BODY).encode(), "application/json")
    ),
    "openai": lambda stream: (
        (_sse(_openai_chunks(), named=False), "text/event-stream")
        if stream
        else (json.dumps(OPENAI_BODY).encode(), "application/json")
    ),
    "openai_responses": _responses_answer,
    "google": _google_answer,
    "ollama": lambda stream: (
        (_ollama_lines(), "application/x-ndjson")
        if stream
        else (json.dumps(OLLAMA_BODY).encode(), "application/json")
    ),
}
"""Each provider's mock answer and its content type, as one body or as a stream."""

PROVIDERS: dict[str, tuple[Callable[[bool], Call], Callable[[bool], Call]]] = {
    "anthropic": (_anthropic_ours, _anthropic_sdk),
    "openai": (_openai_ours, _openai_sdk),
    "openai_responses": (_responses_ours, _responses_sdk),
    "google": (_google_ours, _google_sdk),
    "ollama": (_ollama_ours, _ollama_sdk),
}


_FLOOR_URL: Final = "http://localhost/v1"


def _floor(client: Any, url: Any) -> Call:
    """A POST of `{}` to `url` (parsed once, as every provider's endpoint is) and `json.loads`."""

    async def post() -> object:
        response = await client.post(url, content=b"{}")
        return json.loads(response.content)

    return post


def _stream_floor(client: httpx.AsyncClient) -> Call:
    """A streamed POST whose lines are read and each JSON line decoded: no client work at all."""
    url = httpx.URL(_FLOOR_URL)

    async def post() -> object:
        async with client.stream("POST", url, content=b"{}") as response:
            return [
                json.loads(line.removeprefix("data: "))
                async for line in response.aiter_lines()
                if line.startswith(("{", "data: {"))
            ]

    return post


def _provider_floor(name: str, stream: bool) -> Call:
    """What any client on our `httpx` transport pays for this provider's answer: the row's floor."""
    body, kind = BODIES[name](stream)
    client = _client(body, kind)
    return _stream_floor(client) if stream else _floor(client, httpx.URL(_FLOOR_URL))


async def _main(calls: int, names: list[str]) -> None:
    unknown = sorted(set(names) - set(PROVIDERS))
    if unknown:
        raise SystemExit(f"unknown provider(s) {unknown}; choose from {sorted(PROVIDERS)}")
    chosen = [name for name in PROVIDERS if name in names] if names else list(PROVIDERS)
    body = json.dumps(OPENAI_BODY).encode()
    cases: dict[tuple[str, str, str], Call] = {
        ("httpx", "floor", "ours"): _floor(
            _client(body, "application/json"), httpx.URL(_FLOOR_URL)
        ),
        ("httpx2", "floor", "sdk"): _floor(
            _client2(body, "application/json"), httpx2.URL(_FLOOR_URL)
        ),
    }
    for name in chosen:
        ours, sdk = PROVIDERS[name]
        for mode in ("complete", "stream"):
            cases[(name, mode, "ours")] = ours(mode == "stream")
            cases[(name, mode, "sdk")] = sdk(mode == "stream")
            cases[(name, mode, "floor")] = _provider_floor(name, mode == "stream")
    samples: dict[tuple[str, str, str], list[float]] = {case: [] for case in cases}
    for _ in range(REPEATS):
        for case, call in cases.items():
            _wall, cpu = await time_calls(call, calls, WARMUP_CALLS)
            samples[case].append(cpu / calls / 1000)
    floors = {key[0]: round(statistics.median(samples[key]), 1) for key in list(samples)[:2]}
    print(json.dumps({"scenario": "transport_floor", "calls": calls} | floors), flush=True)
    for name in chosen:
        for mode in ("complete", "stream"):
            ours_us, sdk_us, floor_us = (
                statistics.median(samples[(name, mode, side)]) for side in ("ours", "sdk", "floor")
            )
            row = {"scenario": f"{name}_{mode}", "calls": calls, "repeats": REPEATS}
            row |= {"ours_cpu_us": round(ours_us, 1), "sdk_cpu_us": round(sdk_us, 1)}
            row |= {"floor_cpu_us": round(floor_us, 1), "ours_over_sdk": round(ours_us / sdk_us, 2)}
            print(json.dumps(row | {"floor_over_sdk": round(floor_us / sdk_us, 2)}), flush=True)


if __name__ == "__main__":
    asyncio.run(_main(int(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_CALLS, sys.argv[2:]))
