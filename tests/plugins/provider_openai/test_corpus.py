"""Replay every shared-corpus OpenAI cassette (and the OpenAI-compatible Ollama `/v1` ones).

For each cassette a `ProviderRequest` is rebuilt per interaction so that the
body the provider sends equals the recorded one (compared as JSON, see
`comparable`). Replay matches by URL and order; the recorded response body is
read here, independently of the provider, and compared with what the
provider parsed (content, stop reason, usage, model) or raised.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from neuron_provider_openai import OpenAIProvider
from neuron_tool.schema import ToolSchema
from neuron_turn.loop.events import ProviderDelta, TextDelta, ToolCallDelta, ToolCallStart
from neuron_turn.loop.output import OutputSchema
from neuron_turn.loop.provider import (
    ContentPart,
    ProviderMessage,
    ProviderRequest,
    ProviderResponse,
    TextPart,
    ThinkingPart,
    TokenUsage,
    ToolResultPart,
    ToolUsePart,
)
from neuron_turn.loop.provider_errors import (
    InvalidRequestError,
    ModelNotFoundError,
    ProviderError,
    RateLimitError,
)
from neuron_turn.loop.tool_choice import ToolChoice
from tests.cassettes import SHARED_CORPUS, ParsedBodySerializer, replay

from ._support import user

BY_URL = ("method", "scheme", "host", "port", "path")
Outcome = ProviderResponse | ProviderError
Step = Callable[[list[Outcome]], ProviderRequest]


@dataclass(frozen=True)
class Case:
    """One corpus cassette: provider options and how to rebuild each recorded request."""

    path: str
    steps: Sequence[Step]
    options: dict[str, Any] = field(default_factory=dict)


# --- reading the recordings -------------------------------------------------------


@dataclass(frozen=True)
class Recorded:
    request: dict[str, Any]
    status: int
    body: bytes
    content_type: str


def recorded_interactions(path: Path) -> list[Recorded]:
    text = path.read_text()
    if path.name.startswith("pydantic-ai__"):
        data = ParsedBodySerializer.deserialize(text)
    else:
        data = yaml.safe_load(text)
    return [_recorded(item) for item in data["interactions"]]


def _recorded(item: dict[str, Any]) -> Recorded:
    headers = {k.lower(): v[0] for k, v in item["response"]["headers"].items()}
    body = item["response"]["body"]["string"]
    raw = body.encode() if isinstance(body, str) else body
    if headers.get("content-encoding") == "gzip":
        raw = gzip.decompress(raw)
    return Recorded(
        request=json.loads(item["request"]["body"]),
        status=item["response"]["status"]["code"],
        body=raw,
        content_type=headers.get("content-type", ""),
    )


def comparable(body: dict[str, Any]) -> dict[str, Any]:
    """A request body with the differences that do not change its meaning removed.

    - tool-call `arguments` are compared as JSON (SDKs re-serialise them);
    - an assistant message without `content` equals one with `content: null`;
    - `strict` on a tool definition is pydantic-ai's, not ours (ToolSchema has no such flag).
    """
    body = json.loads(json.dumps(body))
    for message in body.get("messages", []):
        if message["role"] == "assistant":
            message.setdefault("content", None)
            for call in message.get("tool_calls", []):
                call["function"]["arguments"] = json.loads(call["function"]["arguments"])
    for tool in body.get("tools", []):
        tool["function"].pop("strict", None)
    return body


def expected_completion(recorded: Recorded) -> dict[str, Any]:
    """Fold the recorded body (JSON or SSE) into message, finish_reason, usage and model."""
    if recorded.content_type.startswith("text/event-stream"):
        return _fold_sse(recorded.body.decode())
    data = json.loads(recorded.body)
    choice = data["choices"][0]
    return {
        "message": choice["message"],
        "finish_reason": choice["finish_reason"],
        "usage": data["usage"],
        "model": data["model"],
    }


def _fold_sse(text: str) -> dict[str, Any]:
    message: dict[str, Any] = {"content": "", "tool_calls": {}}
    folded: dict[str, Any] = {"message": message, "usage": None}
    for line in text.splitlines():
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        chunk = json.loads(line[len("data: ") :])
        folded["model"] = chunk["model"]
        folded["usage"] = chunk.get("usage") or folded["usage"]
        for choice in chunk["choices"]:
            folded["finish_reason"] = choice["finish_reason"] or folded.get("finish_reason")
            delta = choice["delta"]
            message["content"] += delta.get("content") or ""
            for call in delta.get("tool_calls", []):
                slot = message["tool_calls"].setdefault(call["index"], {"arguments": ""})
                slot.setdefault("id", call.get("id"))
                slot.setdefault("name", call.get("function", {}).get("name"))
                slot["arguments"] += call["function"].get("arguments", "")
    message["tool_calls"] = [
        {"id": c["id"], "function": {"name": c["name"], "arguments": c["arguments"]}}
        for _, c in sorted(message["tool_calls"].items())
    ]
    return folded


def expected_parts(message: dict[str, Any]) -> list[ContentPart]:
    parts: list[ContentPart] = []
    if message.get("reasoning"):
        parts.append(ThinkingPart(message["reasoning"]))
    if message.get("content"):
        parts.append(TextPart(message["content"]))
    for call in message.get("tool_calls") or []:
        arguments = json.loads(call["function"]["arguments"])
        parts.append(ToolUsePart(call["id"], call["function"]["name"], arguments))
    return parts


STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}
ERRORS = {400: InvalidRequestError, 404: ModelNotFoundError, 429: RateLimitError}


def check_outcome(outcome: Outcome, recorded: Recorded) -> None:
    if recorded.status != 200:
        assert type(outcome) is ERRORS[recorded.status], outcome
        assert isinstance(outcome, ProviderError)
        assert outcome.status_code == recorded.status
        error = json.loads(recorded.body)["error"]
        assert error["message"] in outcome.message
        return
    assert isinstance(outcome, ProviderResponse), outcome
    expected = expected_completion(recorded)
    usage = expected["usage"]
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
    assert outcome.content == expected_parts(expected["message"])
    assert outcome.stop_reason == STOP[expected["finish_reason"]]
    assert outcome.usage == TokenUsage(usage["prompt_tokens"], usage["completion_tokens"], cached)
    assert outcome.model == expected["model"]


# --- the cases ------------------------------------------------------------------


def tool(
    name: str, description: str, properties: dict[str, Any], strict: bool = False
) -> ToolSchema:
    schema: dict[str, Any] = {
        "properties": properties,
        "required": list(properties),
        "type": "object",
    }
    if strict:
        schema = {"additionalProperties": False, **schema}
    return ToolSchema(name=name, description=description, input_schema=schema)


def replying(previous: list[Outcome]) -> ProviderMessage:
    """The assistant message holding the previous response's content."""
    last = previous[-1]
    assert isinstance(last, ProviderResponse)
    return ProviderMessage("assistant", last.content)


def results(*contents: str) -> Callable[[list[Outcome]], ProviderMessage]:
    """A user message answering the previous response's tool calls in order."""

    def build(previous: list[Outcome]) -> ProviderMessage:
        last = previous[-1]
        assert isinstance(last, ProviderResponse)
        calls = [part for part in last.content if isinstance(part, ToolUsePart)]
        return ProviderMessage(
            "user", [ToolResultPart(c.id, text) for c, text in zip(calls, contents, strict=True)]
        )

    return build


NOT_STREAMED = {"stream": False}

FRANCE = "What is the capital of France?"
ONCE = lambda req: [lambda _: req]  # noqa: E731


def case_instructions() -> Case:
    req = ProviderRequest(
        "gpt-4o",
        [user(FRANCE)],
        system="You are a helpful assistant.",
        extra={"n": 1, **NOT_STREAMED},
    )
    return Case("openai/pydantic-ai__test_openai_instructions.yaml", ONCE(req))


def case_reasoning_model_with_system_role() -> Case:
    # Only a system prompt; pydantic-ai sent it under `system`, so the override is used.
    req = ProviderRequest("o3-mini", [], system="You are a potato.", extra={"n": 1, **NOT_STREAMED})
    return Case(
        "openai/pydantic-ai__test_openai_model_without_system_prompt.yaml",
        ONCE(req),
        {"system_role": "system"},
    )


def case_o1_mini_developer_400() -> Case:
    req = ProviderRequest(
        "o1-mini",
        [user("Hello")],
        system="You are a helpful assistant.",
        extra={"n": 1, **NOT_STREAMED},
    )
    return Case(
        "openai/pydantic-ai__test_openai_o1_mini_system_role_developer_400.yaml",
        ONCE(req),
        {"system_role": "developer"},
    )


def case_model_not_found() -> Case:
    req = ProviderRequest("gpt-5.2-proo", [user("hello")], extra=NOT_STREAMED)
    return Case("openai/pydantic-ai__test_model_name_suggestion_openai_chat_404.yaml", ONCE(req))


def case_openrouter_429() -> Case:
    req = ProviderRequest(
        "google/gemini-2.0-flash-exp:free",
        [user("Tell me a joke.")],
        system="Be helpful.",
        extra=NOT_STREAMED,
    )
    # Three recorded 429s (the SDK retried twice); we never retry, so call three times.
    return Case(
        "openai/pydantic-ai__test_openrouter_errors_raised_429.yaml",
        [lambda _: req] * 3,
        {"base_url": "https://openrouter.ai/api/v1"},
    )


def case_parallel_tool_calls() -> Case:
    tools = [
        tool("create_file", "", {"path": {"type": "string"}}, strict=True),
        tool("delete_file", "", {"path": {"type": "string"}}, strict=True),
    ]
    question = user("Delete the file `.env` and create `test.txt`")
    extra = NOT_STREAMED
    system = "Just call tools without asking for confirmation."
    auto = ToolChoice.AUTO  # the recorded `tool_choice: auto`

    def second(previous: list[Outcome]) -> ProviderRequest:
        history = [question, replying(previous), results("true", "Success")(previous)]
        return ProviderRequest(
            "gpt-4o", history, tools, system=system, extra=extra, tool_choice=auto
        )

    first = ProviderRequest(
        "gpt-4o", [question], tools, system=system, extra=extra, tool_choice=auto
    )
    return Case(
        "openai/pydantic-ai__test_dbos_agent_with_hitl_tool.yaml", [lambda _: first, second]
    )


def case_chain_of_two_calls() -> Case:
    tools = [
        tool(
            "lookup_population",
            "Returns the current population of the specified fictional country",
            {"country": {"type": "string"}},
        ),
        tool(
            "can_have_dragons",
            "Returns True if the specified population can have dragons, False otherwise",
            {"population": {"type": "integer"}},
        ),
    ]
    history = [user("Can the country of Crumpet have dragons? Answer with only YES or NO")]

    def step(previous: list[Outcome]) -> ProviderRequest:
        if previous:
            history.extend(
                [replying(previous), results(("123124", "true")[len(previous) - 1])(previous)]
            )
        return ProviderRequest("gpt-4o-mini", list(history), tools, extra=NOT_STREAMED)

    return Case("openai/llm__test_tool_use_chain_of_two_calls.yaml", [step] * 3)


def case_streamed_tool_call_llm() -> Case:
    tools = [
        tool(
            "multiply",
            "Multiply two numbers.",
            {"a": {"type": "integer"}, "b": {"type": "integer"}},
        )
    ]
    question = user("What is 1231 * 2331?")

    def second(previous: list[Outcome]) -> ProviderRequest:
        # llm's own history shape: an empty assistant text, then the tool call on its own.
        history = [
            question,
            ProviderMessage("assistant", [TextPart("")]),
            replying(previous),
            results("2869461")(previous),
        ]
        return ProviderRequest("gpt-4o-mini", history, tools)

    first = ProviderRequest("gpt-4o-mini", [question], tools)
    return Case("openai/llm__test_tool_use_basic.yaml", [lambda _: first, second], {"stream": True})


def case_streamed_tool_loop_pydantic_ai() -> Case:
    tools = [tool("get_capital", "", {"country": {"type": "string"}}, strict=True)]
    question = user("What is the capital of the UK? Use the tool, then answer.")
    auto = ToolChoice.AUTO

    def second(previous: list[Outcome]) -> ProviderRequest:
        history = [question, replying(previous), results("London")(previous)]
        return ProviderRequest("gpt-4o-mini", history, tools, tool_choice=auto)

    first = ProviderRequest("gpt-4o-mini", [question], tools, tool_choice=auto)
    return Case(
        "openai/pydantic-ai__test_run_stream_sync_streams_real_model.yaml",
        [lambda _: first, second],
        {"stream": True},
    )


def case_ollama_cloud_reasoning() -> Case:
    tools = [
        tool(
            "final_result",
            "The final response which ends this conversation",
            {"city": {"type": "string"}, "country": {"type": "string"}},
            strict=True,
        )
    ]
    question = user(FRANCE)
    extra = {"tool_choice": "auto", **NOT_STREAMED}
    retry = (
        '1 validation error:\n```json\n[\n  {\n    "type": "json_invalid",\n    "loc": [],\n'
        '    "msg": "Invalid JSON: expected value at line 1 column 1",\n    "input": "Paris."\n'
        "  }\n]\n```\n\nFix the errors and try again."
    )

    def second(previous: list[Outcome]) -> ProviderRequest:
        history = [question, replying(previous), user(retry)]
        return ProviderRequest("gpt-oss:20b", history, tools, extra=extra)

    first = ProviderRequest("gpt-oss:20b", [question], tools, extra=extra)
    return Case(
        "ollama/pydantic-ai__test_ollama_cloud_tool_output.yaml",
        [lambda _: first, second],
        {"base_url": "https://ollama.com/v1", "reasoning_field": "reasoning"},
    )


def case_ollama_local_json_schema() -> Case:
    schema = {
        "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
        "required": ["city", "country"],
        "title": "CityLocation",
        "type": "object",
    }
    # The recorded `response_format: {type: json_schema, json_schema: {name, schema}}` is
    # built from the request's native output schema (not strict: no `strict` key).
    req = ProviderRequest(
        "qwen3:0.6b",
        [user(FRANCE)],
        extra=NOT_STREAMED,
        output=OutputSchema("CityLocation", schema),
    )
    return Case(
        "ollama/pydantic-ai__test_ollama_local_native_output_uses_json_schema.yaml",
        ONCE(req),
        {"base_url": "http://localhost:11434/v1"},
    )


CASES = [
    case_instructions(),
    case_reasoning_model_with_system_role(),
    case_o1_mini_developer_400(),
    case_model_not_found(),
    case_openrouter_429(),
    case_parallel_tool_calls(),
    case_chain_of_two_calls(),
    case_streamed_tool_call_llm(),
    case_streamed_tool_loop_pydantic_ai(),
    case_ollama_cloud_reasoning(),
    case_ollama_local_json_schema(),
]


def corpus_or_skip() -> Path:
    if not SHARED_CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {SHARED_CORPUS} (a lone clone has none)")
    return SHARED_CORPUS


# --- the tests ------------------------------------------------------------------


def test_every_openai_corpus_cassette_has_a_case() -> None:
    corpus = corpus_or_skip()
    on_disk = {f"openai/{p.name}" for p in (corpus / "openai").glob("*.yaml")}
    assert on_disk
    assert on_disk <= {case.path for case in CASES}


@pytest.mark.parametrize("case", CASES, ids=lambda case: Path(case.path).stem)
async def test_corpus_cassette_replays_with_the_recorded_requests_and_results(
    case: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = corpus_or_skip() / case.path
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-corpus")
    recorded = recorded_interactions(path)
    assert len(recorded) == len(case.steps)
    sent: list[dict[str, Any]] = []

    async def capture(request: httpx.Request) -> None:
        sent.append(json.loads(request.content))

    outcomes: list[Outcome] = []
    async with httpx.AsyncClient(event_hooks={"request": [capture]}) as client:
        provider = OpenAIProvider(client=client, **case.options)
        with replay(path, match_on=BY_URL):
            for step in case.steps:
                try:
                    outcomes.append(await provider.complete(step(outcomes)))
                except ProviderError as exc:
                    outcomes.append(exc)
    for mine, theirs, outcome in zip(sent, recorded, outcomes, strict=True):
        assert comparable(mine) == comparable(theirs.request)
        check_outcome(outcome, theirs)


def test_o1_mini_gets_its_prompt_as_a_user_message_by_default() -> None:
    """The fix for the recorded 400: o1-mini takes neither `developer` nor `system`."""
    req = ProviderRequest("o1-mini", [user("Hello")], system="You are a helpful assistant.")
    body = OpenAIProvider("o1-mini").request_body(req)
    assert body["messages"] == [
        {"role": "user", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Hello"},
    ]


STREAMED = [case for case in CASES if case.options.get("stream") is True]


async def _streamed(
    provider: OpenAIProvider, request: ProviderRequest, deltas: list[ProviderDelta]
) -> ProviderResponse:
    final = None
    async for event in provider.stream(request):
        if isinstance(event, ProviderResponse):
            final = event
        else:
            deltas.append(event)
    assert final is not None
    return final


@pytest.mark.parametrize("case", STREAMED, ids=lambda case: Path(case.path).stem)
async def test_streamed_corpus_cassette_replays_through_the_stream_to_the_same_answer(
    case: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = corpus_or_skip() / case.path
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-corpus")
    recorded = recorded_interactions(path)
    sent: list[dict[str, Any]] = []

    async def capture(request: httpx.Request) -> None:
        sent.append(json.loads(request.content))

    outcomes: list[Outcome] = []
    deltas: list[ProviderDelta] = []
    options = {key: value for key, value in case.options.items() if key != "stream"}
    async with httpx.AsyncClient(event_hooks={"request": [capture]}) as client:
        provider = OpenAIProvider(client=client, **options)
        with replay(path, match_on=BY_URL):
            for step in case.steps:
                outcomes.append(await _streamed(provider, step(outcomes), deltas))

    for mine, theirs, outcome in zip(sent, recorded, outcomes, strict=True):
        assert comparable(mine) == comparable(theirs.request)
        check_outcome(outcome, theirs)
    parts = [
        part
        for outcome in outcomes
        if isinstance(outcome, ProviderResponse)
        for part in outcome.content
    ]
    texts = "".join(p.text for p in parts if isinstance(p, TextPart))
    assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == texts
    calls = [p for p in parts if isinstance(p, ToolUsePart)]
    assert [(d.id, d.name) for d in deltas if isinstance(d, ToolCallStart)] == [
        (c.id, c.name) for c in calls
    ]
    for call in calls:
        arguments = "".join(
            d.arguments for d in deltas if isinstance(d, ToolCallDelta) and d.id == call.id
        )
        assert json.loads(arguments) == call.input
