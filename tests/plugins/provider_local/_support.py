"""Shared pieces of the local provider tests: the recorded cases, replaying them, rendering.

`RECORDED` holds real exchanges with the embedded server running the default
model (written by `record.py`): for each case, the request bodies the
provider sent and the server's answers, in order. `replay_client` serves them
back through `httpx.MockTransport` and checks every request matches.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import jinja2.sandbox

from neuron_provider_local import tool_calling_template
from neuron_tool import ToolRegistry, ToolSchema
from neuron_tools_basic import calculator, clock
from neuron_turn.loop.provider import (
    ProviderMessage,
    ProviderRequest,
    TextPart,
    ToolResultPart,
    ToolUsePart,
)

RECORDED = Path(__file__).resolve().parents[2] / "cassettes" / "local" / "outputs.json"
"""The recorded exchanges with the real default model."""

BASE_URL = "http://127.0.0.1:8080/v1"
"""Where replayed requests pretend to go."""

_TOOLS = {schema.name: schema for schema in ToolRegistry([calculator, clock]).schemas()}


def tool(name: str) -> ToolSchema:
    """The schema of a `neuron-tools-basic` tool, as the loop sends it."""
    return _TOOLS[name]


def wire(name: str) -> dict[str, Any]:
    """A tool as Chat Completions sends it (`{"type": "function", "function": {…}}`)."""
    schema = tool(name)
    function = {
        "name": schema.name,
        "description": schema.description,
        "parameters": schema.input_schema,
    }
    return {"type": "function", "function": function}


def user(text: str) -> ProviderMessage:
    return ProviderMessage("user", [TextPart(text)])


def called(name: str, arguments: dict[str, Any], call_id: str = "call_1") -> ProviderMessage:
    return ProviderMessage("assistant", [ToolUsePart(call_id, name, arguments)])


def result(content: str, call_id: str = "call_1", *, error: bool = False) -> ProviderMessage:
    return ProviderMessage("user", [ToolResultPart(call_id, content, is_error=error)])


@dataclass(frozen=True)
class Case:
    """One recorded model call: the request the loop makes."""

    name: str
    messages: Sequence[ProviderMessage]
    tools: Sequence[str] = ("calculator",)
    fields: dict[str, Any] = field(default_factory=dict)

    def request(self) -> ProviderRequest:
        return ProviderRequest(
            model="default",
            messages=list(self.messages),
            tools=[tool(name) for name in self.tools],
            **self.fields,
        )


_RAW: dict[str, Any] = {"extra": {"tool_choice": "none"}}

CASES: tuple[Case, ...] = (
    Case("calculator_call", [user("What is 17*23? Use the calculator.")]),
    Case(
        "calculator_answer",
        [
            user("What is 17*23? Use the calculator."),
            called("calculator", {"expression": "17*23"}),
            result("391"),
        ],
    ),
    Case("power_call", [user("How much is 2 to the power of 10?")]),
    Case(
        "power_error_corrected",
        [
            user("How much is 2 to the power of 10?"),
            called("calculator", {"expression": "2^10"}),
            result(
                "tool 'calculator' failed: CalculatorError: '^' is not supported; "
                "write powers with **, e.g. 2**10",
                error=True,
            ),
        ],
    ),
    Case("joke_made_up_tool", [user("Tell me a joke.")]),
    Case("capital_plain_text", [user("What is the capital of France?")]),
    Case("greeting_needless_call", [user("Hi!")]),
    Case("clock_call", [user("What time is it in Tokyo?")], tools=("clock",)),
    Case("no_tools", [user("Say hello in five words.")], tools=()),
    # `tool_choice: none`: the server hands back the model's raw text, which the provider reads.
    Case("calculator_call_raw", [user("What is 17*23? Use the calculator.")], fields=_RAW),
    Case("greeting_raw", [user("Hi!")], fields=_RAW),
    Case("haiku_raw", [user("Write a haiku about autumn.")], fields=_RAW),
    Case(
        "truncated_raw",
        [user("What is 17*23? Use the calculator.")],
        fields={**_RAW, "max_tokens": 8},
    ),
)
"""The calls `record.py` records, in order."""


def recorded() -> dict[str, list[dict[str, Any]]]:
    """The recorded exchanges by case name: `[{"request", "status", "response"}, …]`."""
    data: dict[str, list[dict[str, Any]]] = json.loads(RECORDED.read_text(encoding="utf-8"))
    return data


def case(name: str) -> Case:
    (found,) = [c for c in CASES if c.name == name]
    return found


class Replay:
    """Serves recorded exchanges in order; each request must match the recorded body."""

    def __init__(self, exchanges: Sequence[dict[str, Any]]) -> None:
        self.exchanges = list(exchanges)
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v1/chat/completions"
        body = json.loads(request.content)
        self.bodies.append(body)
        assert self.exchanges, f"an unrecorded request: {body}"
        exchange = self.exchanges.pop(0)
        assert body == exchange["request"]
        return httpx.Response(exchange["status"], json=exchange["response"])

    @property
    def all_played(self) -> bool:
        return not self.exchanges


def replay_client(exchanges: Sequence[dict[str, Any]]) -> tuple[httpx.AsyncClient, Replay]:
    replay = Replay(exchanges)
    return httpx.AsyncClient(transport=httpx.MockTransport(replay)), replay


def scripted_client(
    handler: Callable[[dict[str, Any]], httpx.Response],
) -> tuple[httpx.AsyncClient, list[dict[str, Any]]]:
    """A client whose answers `handler` makes from each request body; the bodies are kept."""
    bodies: list[dict[str, Any]] = []

    def respond(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        bodies.append(body)
        return handler(body)

    return httpx.AsyncClient(transport=httpx.MockTransport(respond)), bodies


def completion(
    content: str | None,
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str = "stop",
    prompt_tokens: int = 100,
    completion_tokens: int = 10,
) -> dict[str, Any]:
    """A chat completion body shaped like the embedded server's."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return {
        "choices": [{"finish_reason": finish_reason, "index": 0, "message": message}],
        "model": "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        "object": "chat.completion",
        "usage": {
            "completion_tokens": completion_tokens,
            "prompt_tokens": prompt_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def server_error() -> dict[str, Any]:
    """The embedded server's answer when it cannot read the model's output."""
    return {
        "error": {
            "code": 500,
            "message": "The model produced output that does not match the expected "
            "peg-native format",
            "type": "server_error",
        }
    }


def render(messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] | None) -> str:
    """Render the tool-calling template as chat templates are rendered (and as llama.cpp does)."""
    environment = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    # llama.cpp's `tojson` is plain JSON (Python's separators, UTF-8 kept), not HTML-safe.
    environment.filters["tojson"] = lambda value: json.dumps(value, ensure_ascii=False)
    template = environment.from_string(tool_calling_template())
    return template.render(messages=messages, tools=tools, add_generation_prompt=True)
