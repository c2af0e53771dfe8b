"""Request and response mapping (`_wire`), without any HTTP."""

from __future__ import annotations

import json
import logging

import pytest

from layer0 import Base64Source, UrlSource
from neuron_provider_openai import _wire
from neuron_provider_openai.preset_providers import GroqProvider
from neuron_tool.schema import ToolSchema
from neuron_turn import NeuronTurn, NeuronTurnConfig
from neuron_turn.loop.output import OutputSchema
from neuron_turn.loop.provider import (
    DocumentPart,
    ImagePart,
    ProviderMessage,
    RawPart,
    TextPart,
    ThinkingPart,
    TokenUsage,
    ToolResultPart,
    ToolUsePart,
)
from neuron_turn.loop.tool_choice import ToolChoice

from ._support import completion, request, tool_call, user

WEATHER = ToolSchema(
    name="get_weather",
    description="Return the current weather in a city.",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
)


def body(req: object, **options: object) -> dict[str, object]:
    options.setdefault("model", "gpt-4o-mini")
    options.setdefault("system_role", "system")
    return _wire.request_body(req, **options)  # type: ignore[arg-type]


# --- system prompt ----------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "role"),
    [
        ("gpt-4o-mini", "system"),
        ("gpt-4.1", "system"),
        ("o1", "developer"),
        ("o1-2024-12-17", "developer"),
        ("o3-mini", "developer"),
        ("o4-mini-high", "developer"),
        ("gpt-5", "developer"),
        ("gpt-5.2-pro", "developer"),
        ("gpt-5-mini", "developer"),
        ("openai/o3", "developer"),
        ("o1-mini", "user"),
        ("o1-preview-2024-09-12", "user"),
        ("gpt-50", "system"),
        ("o10-local", "system"),
        ("llama3.2:3b", "system"),
        ("qwen3:0.6b", "system"),
    ],
)
def test_system_role_is_chosen_by_model_name(model: str, role: str) -> None:
    assert _wire.default_system_role(model) == role


def test_system_prompt_goes_first_under_the_given_role() -> None:
    sent = body(request(user("Hi"), system="Be brief."), system_role="developer")
    assert sent["messages"] == [
        {"role": "developer", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
    ]


def test_no_system_prompt_sends_no_system_message() -> None:
    sent = body(request(user("Hi")))
    assert sent["messages"] == [{"role": "user", "content": "Hi"}]


def test_system_role_message_in_history_uses_the_system_role() -> None:
    history = ProviderMessage("system", [TextPart("Rule one."), ThinkingPart("x")])
    sent = body(request(history, user("Hi")), system_role="developer")
    assert sent["messages"][0] == {"role": "developer", "content": "Rule one."}


# --- user content -------------------------------------------------------------


def test_single_text_part_is_sent_as_a_plain_string() -> None:
    assert body(request(user("Hello")))["messages"] == [{"role": "user", "content": "Hello"}]


def test_base64_image_becomes_a_data_url_and_url_image_is_kept() -> None:
    message = ProviderMessage(
        "user",
        [
            TextPart("What is in these?"),
            ImagePart(Base64Source(data="iVBORw0KGgo="), "image/png"),
            ImagePart(UrlSource(url="https://example.com/cat.jpg"), "image/jpeg"),
        ],
    )
    assert body(request(message))["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in these?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}},
            ],
        }
    ]


def test_each_tool_result_becomes_its_own_tool_message() -> None:
    results = ProviderMessage(
        "user",
        [ToolResultPart("call_1", "18 C"), ToolResultPart("call_2", "22 C")],
    )
    assert body(request(results))["messages"] == [
        {"role": "tool", "tool_call_id": "call_1", "content": "18 C"},
        {"role": "tool", "tool_call_id": "call_2", "content": "22 C"},
    ]


def test_failed_tool_result_is_prefixed_with_error() -> None:
    results = ProviderMessage("user", [ToolResultPart("call_1", "city not found", is_error=True)])
    sent = body(request(results))["messages"]
    assert sent == [{"role": "tool", "tool_call_id": "call_1", "content": "Error: city not found"}]


def test_text_next_to_tool_results_follows_them_as_a_user_message() -> None:
    mixed = ProviderMessage("user", [TextPart("Now summarise."), ToolResultPart("call_1", "ok")])
    assert body(request(mixed))["messages"] == [
        {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
        {"role": "user", "content": "Now summarise."},
    ]


def test_tool_call_in_a_user_message_is_rejected() -> None:
    bad = ProviderMessage("user", [ToolUsePart("call_1", "f", {})])
    with pytest.raises(_wire.UnsupportedContentError, match="user message cannot hold a tool call"):
        body(request(bad))


# --- files a tool returned ------------------------------------------------------

SHOT = ImagePart(Base64Source(data="iVBORw0KGgo="), "image/png")
REPORT = DocumentPart(Base64Source(data="JVBERi0x"), "application/pdf", "q3.pdf")


def calls(*names: tuple[str, str]) -> ProviderMessage:
    return ProviderMessage("assistant", [ToolUsePart(i, name, {}) for i, name in names])


def test_tool_files_follow_all_the_tool_messages_in_one_user_message_each_introduced() -> None:
    chart = ImagePart(UrlSource(url="https://example.com/chart.png"), "image/png")
    results = ProviderMessage(
        "user",
        [
            ToolResultPart("call_1", "captured", files=(SHOT, chart)),
            ToolResultPart("call_2", "no files"),
            ToolResultPart("call_3", "exported", files=(REPORT,)),
        ],
    )
    sent = body(request(calls(("call_1", "screenshot"), ("call_2", "f")), results))
    assert sent["messages"][1:] == [
        {"role": "tool", "tool_call_id": "call_1", "content": "captured"},
        {"role": "tool", "tool_call_id": "call_2", "content": "no files"},
        {"role": "tool", "tool_call_id": "call_3", "content": "exported"},
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "The tool call screenshot (call call_1) returned these 2 files "
                    "with its result:",
                },
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                {"type": "image_url", "image_url": {"url": "https://example.com/chart.png"}},
                {
                    "type": "text",
                    "text": "The tool call call_3 returned this file with its result:",
                },
                {
                    "type": "file",
                    "file": {
                        "filename": "q3.pdf",
                        "file_data": "data:application/pdf;base64,JVBERi0x",
                    },
                },
            ],
        },
    ]


def test_the_users_own_text_and_images_follow_the_tool_files_in_the_same_message() -> None:
    mixed = ProviderMessage(
        "user",
        [
            ToolResultPart("call_1", "captured", files=(SHOT,)),
            TextPart("Now compare."),
            ImagePart(UrlSource(url="https://example.com/mine.png"), "image/png"),
        ],
    )
    sent = body(request(calls(("call_1", "screenshot")), mixed))["messages"][1:]
    assert [message["role"] for message in sent] == ["tool", "user"]
    assert sent[1]["content"][2:] == [
        {"type": "text", "text": "Now compare."},
        {"type": "image_url", "image_url": {"url": "https://example.com/mine.png"}},
    ]
    assert sent[1]["content"][1]["image_url"]["url"].endswith("iVBORw0KGgo=")


def test_a_tool_document_by_url_is_a_note_in_its_place_not_a_refusal() -> None:
    linked = DocumentPart(UrlSource(url="https://example.com/a.pdf"), "application/pdf", "a.pdf")
    result = ProviderMessage("user", [ToolResultPart("call_1", "fetched", files=(linked,))])
    sent = body(request(calls(("call_1", "fetch")), result))["messages"]
    assert sent[-1] == {
        "role": "user",
        "content": [
            {
                "type": "text",
                "text": "The tool call fetch (call call_1) returned this file with its result:",
            },
            {
                "type": "text",
                "text": "[The tool returned the document a.pdf (application/pdf), which is not "
                "shown: Chat Completions take a document's bytes, not its URL]",
            },
        ],
    }


def test_tool_results_without_files_send_no_user_message() -> None:
    results = ProviderMessage("user", [ToolResultPart("call_1", "18 C")])
    sent = body(request(calls(("call_1", "get_weather")), results))["messages"]
    assert sent[1:] == [{"role": "tool", "tool_call_id": "call_1", "content": "18 C"}]


# --- assistant content --------------------------------------------------------


def test_assistant_tool_calls_carry_json_string_arguments_and_null_content() -> None:
    turn = ProviderMessage("assistant", [ToolUsePart("call_1", "get_weather", {"city": "Paris"})])
    (sent,) = body(request(turn))["messages"]
    assert sent == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    }
    assert isinstance(sent["tool_calls"][0]["function"]["arguments"], str)


def test_assistant_text_and_tool_call_go_in_one_message() -> None:
    turn = ProviderMessage(
        "assistant", [TextPart("Let me check."), ToolUsePart("call_1", "get_weather", {})]
    )
    (sent,) = body(request(turn))["messages"]
    assert sent["content"] == "Let me check."
    assert sent["tool_calls"][0]["function"]["arguments"] == "{}"


def test_raw_string_input_is_sent_back_unchanged() -> None:
    turn = ProviderMessage("assistant", [ToolUsePart("call_1", "get_weather", '{"city": "Par')])
    (sent,) = body(request(turn))["messages"]
    assert sent["tool_calls"][0]["function"]["arguments"] == '{"city": "Par'


def test_thinking_and_raw_parts_from_other_providers_are_dropped() -> None:
    turn = ProviderMessage(
        "assistant",
        [
            ThinkingPart("pondering", signature="sig"),
            RawPart("anthropic", {"type": "redacted_thinking", "data": "xyz"}),
            TextPart("Paris."),
        ],
    )
    mixed_user = ProviderMessage("user", [RawPart("anthropic", {}), TextPart("Thanks")])
    sent = body(request(turn, mixed_user))["messages"]
    assert sent == [
        {"role": "assistant", "content": "Paris."},
        {"role": "user", "content": "Thanks"},
    ]
    assert "pondering" not in json.dumps(sent)


def test_a_document_becomes_a_file_part_its_bytes_a_data_url() -> None:
    message = ProviderMessage(
        "user",
        [
            TextPart("Sum up."),
            DocumentPart(Base64Source(data="JVBERi0x"), "application/pdf", "report.pdf"),
            DocumentPart(Base64Source(data="bm90ZXM="), "text/plain"),
        ],
    )
    assert body(request(message))["messages"][0]["content"] == [
        {"type": "text", "text": "Sum up."},
        {
            "type": "file",
            "file": {"filename": "report.pdf", "file_data": "data:application/pdf;base64,JVBERi0x"},
        },
        {
            "type": "file",
            "file": {"filename": "document.txt", "file_data": "data:text/plain;base64,bm90ZXM="},
        },
    ]


def test_a_document_by_url_is_refused_since_the_api_takes_its_bytes() -> None:
    linked = DocumentPart(UrlSource(url="https://example.com/a.pdf"), "application/pdf")
    with pytest.raises(_wire.UnsupportedContentError, match="a document by URL"):
        body(request(ProviderMessage("user", [linked])))


def test_an_image_another_model_made_goes_back_as_a_note_the_api_takes() -> None:
    made = ImagePart(UrlSource(url="https://x/y.png"), "image/png")
    turn = ProviderMessage("assistant", [TextPart("Here it is."), made])

    sent = body(request(turn))["messages"][-1]

    assert sent == {
        "role": "assistant",
        "content": "Here it is.\n[Here the assistant made an image (image/png), which is not "
        "shown again]",
    }


# --- body fields ----------------------------------------------------------------


def test_tools_are_function_tools_with_parameters_from_the_input_schema() -> None:
    sent = body(request(tools=[WEATHER]))
    assert sent["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Return the current weather in a city.",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]


def test_no_tools_sends_no_tools_key() -> None:
    assert "tools" not in body(request())


def test_max_tokens_goes_to_max_completion_tokens_by_default() -> None:
    sent = body(request(max_tokens=300))
    assert sent["max_completion_tokens"] == 300
    assert "max_tokens" not in sent


def test_max_tokens_field_can_be_renamed_for_old_servers() -> None:
    sent = body(request(max_tokens=300), max_tokens_field="max_tokens")
    assert sent["max_tokens"] == 300
    assert "max_completion_tokens" not in sent


def test_temperature_is_sent_only_when_set() -> None:
    assert body(request(temperature=0.2))["temperature"] == 0.2
    assert "temperature" not in body(request())


def test_extra_is_passed_through_but_trace_metadata_is_not() -> None:
    extra = {
        "reasoning_effort": "low",
        "seed": 7,
        "response_format": {"type": "json_object"},
        "metadata": {"trace_id": "t-1"},
    }
    sent = body(request(extra=extra))
    assert sent["reasoning_effort"] == "low"
    assert sent["seed"] == 7
    assert sent["response_format"] == {"type": "json_object"}
    assert "metadata" not in sent


def test_trace_metadata_is_sent_when_asked() -> None:
    sent = body(request(extra={"metadata": {"trace_id": "t-1"}}), send_metadata=True)
    assert sent["metadata"] == {"trace_id": "t-1"}


def test_defaults_are_overridden_by_built_fields_then_by_extra() -> None:
    sent = body(
        request(temperature=0.5, extra={"seed": 2}),
        defaults={"seed": 1, "temperature": 1.0, "user": "u-1"},
    )
    assert (sent["seed"], sent["temperature"], sent["user"]) == (2, 0.5, "u-1")


# --- response -------------------------------------------------------------------


def parse(data: dict[str, object]) -> _wire.Completion:
    return _wire.parse_completion(data, fallback_model="asked-model")


def test_text_reply_is_parsed_with_model_and_usage() -> None:
    parsed = parse(completion("Paris.", model="gpt-4o-mini-2024-07-18"))
    assert parsed.content == [TextPart("Paris.")]
    assert parsed.stop_reason == "end_turn"
    assert parsed.model == "gpt-4o-mini-2024-07-18"
    assert parsed.usage == TokenUsage(input_tokens=24, output_tokens=8, cache_read_tokens=0)


def test_tool_calls_are_parsed_with_decoded_arguments() -> None:
    calls = [
        tool_call("call_1", "delete_file", '{"path": ".env"}'),
        tool_call("call_2", "create_file", '{"path": "test.txt"}'),
    ]
    parsed = parse(completion(None, finish_reason="tool_calls", tool_calls=calls))
    assert parsed.content == [
        ToolUsePart("call_1", "delete_file", {"path": ".env"}),
        ToolUsePart("call_2", "create_file", {"path": "test.txt"}),
    ]
    assert parsed.stop_reason == "tool_use"


def test_malformed_arguments_become_the_raw_string_and_log_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls = [tool_call("call_1", "get_weather", '{"city": "Par')]
    with caplog.at_level(logging.WARNING, logger="neuron_provider_openai"):
        parsed = parse(completion(None, finish_reason="tool_calls", tool_calls=calls))
    assert parsed.content == [ToolUsePart("call_1", "get_weather", '{"city": "Par')]
    assert "not valid JSON" in caplog.text


async def test_malformed_arguments_are_rejected_by_the_tool_registry_with_a_clear_message() -> None:
    from neuron_tool import ToolInputError, ToolRegistry, tool

    @tool
    def get_weather(city: str) -> str:
        """Return the current weather in a city."""
        return "sunny"

    registry = ToolRegistry()
    registry.register(get_weather)
    (part,) = parse(
        completion(None, tool_calls=[tool_call("c", "get_weather", '{"city": "Par')])
    ).content
    assert isinstance(part, ToolUsePart)
    with pytest.raises(ToolInputError, match="is not of type 'object'"):
        await registry.call(part.name, part.input)


def test_empty_arguments_mean_no_arguments() -> None:
    (part,) = parse(completion(None, tool_calls=[tool_call("c", "now", "")])).content
    assert part == ToolUsePart("c", "now", {})


def test_object_arguments_from_compatible_servers_are_accepted() -> None:
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}
    (part,) = parse(completion(None, tool_calls=[call])).content
    assert part == ToolUsePart("c", "f", {"a": 1})


def test_missing_tool_call_id_gets_a_generated_one() -> None:
    call = {"type": "function", "function": {"name": "f", "arguments": "{}"}}
    (part,) = parse(completion(None, tool_calls=[call])).content
    assert isinstance(part, ToolUsePart)
    assert part.id.startswith("call_")
    assert len(part.id) > len("call_")


@pytest.mark.parametrize(
    ("finish_reason", "expected"),
    [
        ("stop", "end_turn"),
        ("length", "max_tokens"),
        ("content_filter", "content_filter"),
        ("tool_calls", "tool_use"),
        ("function_call", "tool_use"),
        (None, "end_turn"),
        ("eos", "end_turn"),
    ],
)
def test_finish_reasons_map_to_stop_reasons(finish_reason: str | None, expected: str) -> None:
    assert parse(completion("x", finish_reason=finish_reason)).stop_reason == expected


def test_tool_calls_under_finish_reason_stop_still_mean_tool_use() -> None:
    calls = [tool_call("c", "f", "{}")]
    assert parse(completion(None, finish_reason="stop", tool_calls=calls)).stop_reason == "tool_use"


def test_legacy_function_call_is_read_as_a_tool_call() -> None:
    legacy = {"name": "f", "arguments": '{"x": 1}'}
    parsed = parse(completion(None, finish_reason="function_call", function_call=legacy))
    (part,) = parsed.content
    assert isinstance(part, ToolUsePart)
    assert (part.name, part.input, parsed.stop_reason) == ("f", {"x": 1}, "tool_use")


def test_cached_tokens_are_reported_as_cache_reads_within_input_tokens() -> None:
    usage = {
        "prompt_tokens": 2006,
        "completion_tokens": 300,
        "prompt_tokens_details": {"cached_tokens": 1920},
    }
    assert parse(completion(usage=usage)).usage == TokenUsage(
        input_tokens=2006, output_tokens=300, cache_read_tokens=1920, cache_creation_tokens=None
    )


def test_usage_without_details_has_unknown_cache_reads() -> None:
    usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    assert parse(completion(usage=usage)).usage == TokenUsage(10, 2, None, None)


def test_missing_usage_is_zero() -> None:
    data = completion()
    del data["usage"]
    assert parse(data).usage == TokenUsage()


def test_missing_model_falls_back_to_the_requested_one() -> None:
    data = completion()
    del data["model"]
    assert parse(data).model == "asked-model"


def test_refusal_is_kept_as_text() -> None:
    parsed = parse(completion(None, refusal="I can't help with that."))
    assert parsed.content == [TextPart("I can't help with that.")]


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_fields_of_compatible_servers_become_thinking(field: str) -> None:
    parsed = parse(completion("Paris.", **{field: "The user asks about France."}))
    assert parsed.content == [ThinkingPart("The user asks about France."), TextPart("Paris.")]


def test_null_content_without_tool_calls_is_an_empty_reply() -> None:
    assert parse(completion(None)).content == []


@pytest.mark.parametrize(
    "data",
    [[], {"choices": []}, {"choices": [1]}, {"choices": [{"message": "x"}]}, {"id": "x"}],
)
def test_bodies_that_are_not_completions_are_rejected(data: object) -> None:
    with pytest.raises(_wire.MalformedCompletionError):
        _wire.parse_completion(data, fallback_model="m")


def test_thinking_is_sent_back_in_the_reasoning_field_when_asked() -> None:
    turn = ProviderMessage("assistant", [ThinkingPart("The user asks."), TextPart("Paris.")])
    (sent,) = body(request(turn), reasoning_field="reasoning")["messages"]
    assert sent == {"role": "assistant", "content": "Paris.", "reasoning": "The user asks."}


def test_cache_write_tokens_are_reported_as_cache_creation() -> None:
    usage = {
        "prompt_tokens": 5000,
        "completion_tokens": 10,
        "prompt_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 4096},
    }
    assert parse(completion(usage=usage)).usage == TokenUsage(5000, 10, 0, 4096)


def test_arguments_that_decode_to_a_string_stay_raw_text() -> None:
    (part,) = parse(completion(None, tool_calls=[tool_call("c", "f", '"Paris"')])).content
    assert part == ToolUsePart("c", "f", '"Paris"')


# --- tool choice and native output --------------------------------------------


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        (ToolChoice.AUTO, "auto"),
        (ToolChoice.NONE, "none"),
        (ToolChoice.REQUIRED, "required"),
        (
            ToolChoice.tool("get_weather"),
            {"type": "function", "function": {"name": "get_weather"}},
        ),
    ],
)
def test_the_tool_choice_is_sent_in_the_chat_completions_shape(
    choice: ToolChoice, expected: object
) -> None:
    # Shapes from the Chat Completions reference (tool_choice: string or named function).
    sent = body(request(tools=[WEATHER], tool_choice=choice, parallel_tool_calls=False))
    assert sent["tool_choice"] == expected
    assert sent["parallel_tool_calls"] is False


def test_tool_choice_and_parallel_calls_are_not_sent_without_tools() -> None:
    sent = body(request(tool_choice=ToolChoice.REQUIRED, parallel_tool_calls=True))
    assert "tool_choice" not in sent and "parallel_tool_calls" not in sent


def test_native_output_is_a_strict_json_schema_response_format() -> None:
    from neuron_turn import OutputSpec

    spec = OutputSpec.json_schema(
        {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]},
        name="Answer",
        description="The answer.",
    )
    sent = body(request(output=spec.provider_schema()))
    assert sent["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "Answer",
            "description": "The answer.",
            "schema": {
                "type": "object",
                "properties": {"answer": {"type": "integer"}},
                "required": ["answer"],
                "additionalProperties": False,
            },
            "strict": True,
        },
    }


def test_a_schema_strict_mode_cannot_take_is_sent_without_strict() -> None:
    output = OutputSchema("Loose", {"type": "object", "properties": {"a": {"type": "string"}}})
    sent = body(request(output=output))
    assert sent["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "Loose", "schema": output.schema},
    }


def test_a_forced_function_reply_with_stop_and_no_text_is_a_tool_call() -> None:
    # With a named tool_choice the API says finish_reason "stop" and sends no content.
    call = tool_call("call_1", "get_weather", '{"city":"Paris"}')
    reply = completion(None, finish_reason="stop", tool_calls=[call])
    done = _wire.parse_completion(reply, fallback_model="gpt-4o-mini")
    assert done.stop_reason == "tool_use"
    assert [type(p).__name__ for p in done.content] == ["ToolUsePart"]


# --- thinking ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("level", "effort"),
    [
        (True, "medium"),
        (False, "none"),
        ("minimal", "minimal"),
        ("high", "high"),
        ("xhigh", "xhigh"),
    ],
)
def test_a_thinking_setting_is_reasoning_effort(level: object, effort: str) -> None:
    assert body(request(thinking=level))["reasoning_effort"] == effort


def test_reasoning_effort_of_the_providers_defaults_or_of_extra_wins_over_the_setting() -> None:
    assert (
        body(request(thinking="high"), defaults={"reasoning_effort": "low"})["reasoning_effort"]
        == "low"
    )
    assert (
        body(request(thinking="high", extra={"reasoning_effort": "minimal"}))["reasoning_effort"]
        == "minimal"
    )
    assert "reasoning_effort" not in body(request())


def test_a_vendor_preset_takes_a_thinking_setting_when_the_turn_is_made() -> None:
    turn = NeuronTurn(GroqProvider("m", api_key="k"), config=NeuronTurnConfig(thinking=True))
    assert turn.provider.takes_thinking is True


def test_mistral_thinking_chunks_become_thinking() -> None:
    content = [
        {"type": "thinking", "thinking": [{"type": "text", "text": "John is the brother."}]},
        {"type": "text", "text": "John is 20."},
    ]
    parsed = parse(completion(content))  # type: ignore[arg-type]
    assert parsed.content == [ThinkingPart("John is the brother."), TextPart("John is 20.")]
