"""Message content: never on the spans unless asked for, in the conventions' shapes when it is."""

from __future__ import annotations

import base64
import json
from dataclasses import replace

import pytest
from neuron_tracing_otel import instrument
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from layer0 import Base64Source, Content, ImageBlock, TextBlock, TurnInput
from neuron_tool import ToolRegistry, ToolReturn, image_block, tool
from neuron_turn import (
    HostedToolCall,
    NeuronTurn,
    NeuronTurnConfig,
    ToolUsePart,
    WebSearch,
    document_block,
)
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from .scripts import QUESTION, calculator, two_tool_calls

_CONTENT = {
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.tool.definitions",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
}


async def test_no_content_is_recorded_by_default(
    provider: TracerProvider, exporter: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NEURON_OTEL_CAPTURE_CONTENT", raising=False)
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    instrument(tracer_provider=provider)

    await calculator(two_tool_calls(), system="You are a calculator.").execute(QUESTION)

    spans = exporter.get_finished_spans()
    assert len(spans) == 5
    for span in spans:
        assert not _CONTENT & set(span.attributes or {}), span.name
        for value in (span.attributes or {}).values():
            assert "17" not in str(value) and "calculator." not in str(value)


async def test_the_environment_can_opt_in_to_content(
    provider: TracerProvider, exporter: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEURON_OTEL_CAPTURE_CONTENT", "1")
    instrument(tracer_provider=provider)

    await calculator(two_tool_calls()).execute(QUESTION)

    tool = next(s for s in exporter.get_finished_spans() if s.name == "execute_tool add")
    assert json.loads(str((tool.attributes or {})["gen_ai.tool.call.arguments"])) == {
        "a": 17,
        "b": 23,
    }


async def test_captured_content_follows_the_conventions_shapes(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    instrument(tracer_provider=provider, capture_content=True)

    await calculator(two_tool_calls(), system="You are a calculator.").execute(QUESTION)

    spans = sorted(exporter.get_finished_spans(), key=lambda s: s.start_time or 0)
    agent, first, add, divide, second = spans
    assert _json(agent, "gen_ai.input.messages") == [
        {"role": "user", "parts": [{"type": "text", "content": "What are 17+23 and 8/0?"}]}
    ]
    assert _json(agent, "gen_ai.output.messages") == [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": "17 + 23 = 40 and 8 / 2 = 4."}],
            "finish_reason": "stop",
        }
    ]
    assert _json(first, "gen_ai.system_instructions") == [
        {"type": "text", "content": "You are a calculator."}
    ]
    tools = [t["name"] for t in _json(first, "gen_ai.tool.definitions")]
    assert tools == ["add", "divide", "write_memory", "delete_memory"]
    assert _json(first, "gen_ai.output.messages") == [
        {
            "role": "assistant",
            "parts": [
                {
                    "type": "tool_call",
                    "id": "call_1",
                    "name": "add",
                    "arguments": {"a": 17, "b": 23},
                },
                {
                    "type": "tool_call",
                    "id": "call_2",
                    "name": "divide",
                    "arguments": {"a": 8, "b": 2},
                },
            ],
            "finish_reason": "tool_call",
        }
    ]
    assert (add.attributes or {})["gen_ai.tool.call.result"] == "40"
    assert (divide.attributes or {})["gen_ai.tool.call.result"] == "4.0"
    history = _json(second, "gen_ai.input.messages")
    assert [m["role"] for m in history] == ["user", "assistant", "tool"]
    assert history[2]["parts"] == [
        {"type": "tool_call_response", "id": "call_1", "response": "40"},
        {"type": "tool_call_response", "id": "call_2", "response": "4.0"},
    ]


async def test_documents_and_images_are_named_by_media_type_never_copied(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    instrument(tracer_provider=provider, capture_content=True)
    secret = base64.b64encode(b"%PDF-1.7 the secret plan").decode()
    message = Content(
        [
            TextBlock(text="Read these."),
            document_block(base64.b64decode(secret), name="plan.pdf"),
            ImageBlock(source=Base64Source(data="iVBORw0KGgo="), media_type="image/png"),
        ]
    )
    question = TurnInput(message=message, trigger="user")

    await calculator(ScriptedProvider([text_response("Read.")])).execute(question)

    chat = next(s for s in exporter.get_finished_spans() if s.name.startswith("chat"))
    assert _json(chat, "gen_ai.input.messages")[0]["parts"] == [
        {"type": "text", "content": "Read these."},
        {"type": "document", "mime_type": "application/pdf", "name": "plan.pdf"},
        {"type": "image", "mime_type": "image/png"},
    ]
    for span in exporter.get_finished_spans():
        assert secret not in json.dumps(dict(span.attributes or {}))


SECRET_PDF = b"%PDF-1.7 the secret plan"


@tool
async def snapshot() -> ToolReturn:
    """Return a screenshot and the plan."""
    files = [image_block(b"\x89PNG the screen"), document_block(SECRET_PDF, name="q3.pdf")]
    return ToolReturn("took them", files=files)


def _snapshot_turn() -> NeuronTurn:
    """A turn whose model calls `snapshot` once, then answers."""
    provider = ScriptedProvider(
        [tool_call_response(ToolUsePart("call_1", "snapshot", {})), text_response("Seen.")]
    )
    config = NeuronTurnConfig(model="test-model", agent="viewer", max_tokens=256)
    return NeuronTurn(provider, tools=ToolRegistry([snapshot]), config=config)


async def test_a_tools_files_are_named_on_its_span_and_in_the_history_never_copied(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    instrument(tracer_provider=provider, capture_content=True)

    await _snapshot_turn().execute(TurnInput(message="Look.", trigger="user"))

    spans = sorted(exporter.get_finished_spans(), key=lambda s: s.start_time or 0)
    tool_span = next(s for s in spans if s.name == "execute_tool snapshot")
    assert (tool_span.attributes or {})["neuron.tool.call.result.files"] == (
        "an image (image/png)",
        "the document q3.pdf (application/pdf)",
    )
    second_chat = [s for s in spans if s.name.startswith("chat")][1]
    assert _json(second_chat, "gen_ai.input.messages")[2]["parts"] == [
        {
            "type": "tool_call_response",
            "id": "call_1",
            "response": "took them",
            "files": [
                {"type": "image", "mime_type": "image/png"},
                {"type": "document", "mime_type": "application/pdf", "name": "q3.pdf"},
            ],
        }
    ]
    encoded = base64.b64encode(SECRET_PDF).decode()
    for span in spans:
        assert encoded not in json.dumps(dict(span.attributes or {}), default=list)


async def test_a_tools_files_are_not_named_without_content_capture(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    instrument(tracer_provider=provider, capture_content=False)

    await _snapshot_turn().execute(TurnInput(message="Look.", trigger="user"))

    for span in exporter.get_finished_spans():
        assert "neuron.tool.call.result.files" not in (span.attributes or {}), span.name


def _json(span: object, key: str) -> list[dict[str, object]]:
    attributes = getattr(span, "attributes", None) or {}
    value = json.loads(str(attributes[key]))
    assert isinstance(value, list)
    return value


def _call(call_id: str, name: str, arguments: dict[str, int]) -> dict[str, object]:
    return {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}


@pytest.mark.parametrize("capture", [False, True])
async def test_a_hosted_tool_call_is_an_event_of_its_chat_span(
    provider: TracerProvider, exporter: InMemorySpanExporter, capture: bool
) -> None:
    instrument(tracer_provider=provider, capture_content=capture)
    searched = replace(
        text_response("found"),
        hosted_calls=(HostedToolCall("web_search", {"query": "layer0 wire"}),),
    )
    model = ScriptedProvider([searched], hosted_tools=["web_search"])
    config = NeuronTurnConfig(model="m", hosted_tools=[WebSearch()])

    await NeuronTurn(model, config=config).execute(QUESTION)

    chat = next(s for s in exporter.get_finished_spans() if s.name.startswith("chat"))
    (event,) = chat.events
    assert event.name == "neuron.hosted_tool_call"
    attributes = dict(event.attributes or {})
    assert attributes.pop("gen_ai.tool.name") == "web_search"
    if capture:
        assert json.loads(str(attributes.pop("gen_ai.tool.call.arguments"))) == {
            "query": "layer0 wire"
        }
    assert attributes == {}
