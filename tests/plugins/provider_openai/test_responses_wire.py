"""The Responses API request body built from a `ProviderRequest`."""

from __future__ import annotations

import json

import pytest

from layer0 import Base64Source, UrlSource
from neuron_provider_openai import OpenAIResponsesProvider
from neuron_tool import ToolSchema
from neuron_turn.loop.output import OutputSchema
from neuron_turn.loop.provider import (
    DocumentPart,
    ImagePart,
    ProviderMessage,
    RawPart,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
)
from neuron_turn.loop.provider_errors import InvalidRequestError
from neuron_turn.loop.tool_choice import ToolChoice

from ._support import KEY, request, user

WEATHER = ToolSchema(
    name="get_weather",
    description="Return the weather in a city.",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
)
ENCRYPTED = RawPart(
    "openai-responses",
    {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA-enc"},
)


def body(*messages: ProviderMessage, model: str = "gpt-4o-mini", **fields: object):
    provider = OpenAIResponsesProvider(model, api_key=KEY)
    return provider.request_body(request(*messages, model=model, **fields))


def test_system_prompt_goes_as_instructions_and_store_is_off() -> None:
    sent = body(user("Hi"), system="Be brief.")
    assert sent == {
        "store": False,
        "model": "gpt-4o-mini",
        "instructions": "Be brief.",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "Hi"}]}],
    }


def test_tools_are_flat_functions_with_strict_off_and_choice_by_name() -> None:
    sent = body(
        user("Weather?"),
        tools=[WEATHER],
        tool_choice=ToolChoice.tool("get_weather"),
        parallel_tool_calls=False,
    )
    assert sent["tools"] == [
        {
            "type": "function",
            "name": "get_weather",
            "description": "Return the weather in a city.",
            "parameters": WEATHER.input_schema,
            "strict": False,
        }
    ]
    assert sent["tool_choice"] == {"type": "function", "name": "get_weather"}
    assert sent["parallel_tool_calls"] is False


def test_tool_choice_and_parallel_calls_go_only_with_tools() -> None:
    sent = body(user("Hi"), tool_choice=ToolChoice.REQUIRED, parallel_tool_calls=True)
    assert "tool_choice" not in sent and "parallel_tool_calls" not in sent
    assert body(user("Hi"), tools=[WEATHER], tool_choice=ToolChoice.NONE)["tool_choice"] == "none"


def test_max_tokens_temperature_and_typed_output_map_to_their_fields() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    output = OutputSchema("Answer", schema, "The answer.", strict=True)
    sent = body(user("Hi"), max_tokens=300, temperature=0.2, output=output)
    assert sent["max_output_tokens"] == 300
    assert sent["temperature"] == 0.2
    assert sent["text"] == {
        "format": {
            "type": "json_schema",
            "name": "Answer",
            "description": "The answer.",
            "schema": schema,
            "strict": True,
        }
    }


def test_images_and_documents_become_input_image_and_input_file() -> None:
    parts = [
        TextPart("Look"),
        ImagePart(Base64Source(data="iVBO"), "image/png"),
        ImagePart(UrlSource(url="https://example.com/a.jpg"), "image/jpeg"),
        DocumentPart(Base64Source(data="JVBE"), "application/pdf"),
        DocumentPart(UrlSource(url="https://example.com/r.pdf"), "application/pdf", "r.pdf"),
    ]
    (item,) = body(ProviderMessage("user", parts))["input"]
    assert item["content"] == [
        {"type": "input_text", "text": "Look"},
        {"type": "input_image", "image_url": "data:image/png;base64,iVBO", "detail": "auto"},
        {"type": "input_image", "image_url": "https://example.com/a.jpg", "detail": "auto"},
        {
            "type": "input_file",
            "filename": "document.pdf",
            "file_data": "data:application/pdf;base64,JVBE",
        },
        {"type": "input_file", "file_url": "https://example.com/r.pdf"},
    ]


def test_tool_calls_and_results_are_function_call_items_paired_by_call_id() -> None:
    history = [
        user("Weather in Paris?"),
        ProviderMessage(
            "assistant",
            [TextPart("Checking."), ToolUsePart("call_1", "get_weather", {"city": "Paris"})],
        ),
        ProviderMessage(
            "user",
            [ToolResultPart("call_1", "Sunny"), ToolResultPart("call_2", "boom", is_error=True)],
        ),
    ]
    assert body(*history)["input"][1:] == [
        {"role": "assistant", "content": "Checking."},
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "get_weather",
            "arguments": '{"city": "Paris"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "Sunny"},
        {"type": "function_call_output", "call_id": "call_2", "output": "Error: boom"},
    ]


def test_raw_string_arguments_go_back_unchanged() -> None:
    call = ToolUsePart("call_1", "f", '{"city": "Par')
    (item,) = body(ProviderMessage("assistant", [call]))["input"]
    assert item["arguments"] == '{"city": "Par'


def test_a_tool_results_files_travel_in_its_output_list() -> None:
    image = ImagePart(Base64Source(data="iVBO"), "image/png")
    result = ToolResultPart("call_1", "A chart.", files=(image,))
    (item,) = body(ProviderMessage("user", [result]))["input"]
    assert item["output"] == [
        {"type": "input_text", "text": "A chart."},
        {"type": "input_image", "image_url": "data:image/png;base64,iVBO", "detail": "auto"},
    ]


def test_text_after_tool_results_follows_them_as_a_user_message() -> None:
    parts = [ToolResultPart("call_1", "ok"), TextPart("Now summarise.")]
    items = body(ProviderMessage("user", parts))["input"]
    assert [item.get("type", item.get("role")) for item in items] == [
        "function_call_output",
        "user",
    ]


def test_reasoning_items_go_back_in_place_before_the_call_they_led_to() -> None:
    answer = [
        ThinkingPart("Need the weather."),
        ENCRYPTED,
        ToolUsePart("call_1", "get_weather", {"city": "Paris"}),
    ]
    items = body(user("Weather?"), ProviderMessage("assistant", answer), model="gpt-5-mini")[
        "input"
    ]
    assert items[1] == ENCRYPTED.data
    assert items[2]["type"] == "function_call"
    assert len(items) == 3  # the ThinkingPart is not sent a second time


def test_reasoning_models_ask_for_encrypted_reasoning_others_do_not() -> None:
    assert body(user("Hi"), model="gpt-5-mini")["include"] == ["reasoning.encrypted_content"]
    assert body(user("Hi"), model="o4-mini")["include"] == ["reasoning.encrypted_content"]
    assert "include" not in body(user("Hi"), model="gpt-4o-mini")
    forced = OpenAIResponsesProvider("gpt-4.1", api_key=KEY, encrypted_reasoning=True)
    assert forced.request_body(request(model="gpt-4.1"))["include"] == [
        "reasoning.encrypted_content"
    ]


def test_stored_calls_neither_ask_for_encrypted_reasoning_nor_drop_unencrypted_items() -> None:
    provider = OpenAIResponsesProvider("gpt-5-mini", api_key=KEY, body_defaults={"store": True})
    plain = RawPart("openai-responses", {"type": "reasoning", "id": "rs_9", "summary": []})
    sent = provider.request_body(
        request(user("Hi"), ProviderMessage("assistant", [plain, TextPart("Hello")]))
    )
    assert sent["store"] is True and "include" not in sent
    assert sent["input"][1] == plain.data


def test_unencrypted_and_foreign_reasoning_is_dropped_on_a_stateless_call() -> None:
    plain = RawPart("openai-responses", {"type": "reasoning", "id": "rs_9", "summary": []})
    foreign = RawPart("anthropic", {"type": "redacted_thinking", "data": "x"})
    signed = ThinkingPart("hmm", signature="anthropic-signature")
    answer = ProviderMessage("assistant", [plain, foreign, signed, TextPart("Hello")])
    assert body(user("Hi"), answer, model="gpt-5-mini")["input"][1:] == [
        {"role": "assistant", "content": "Hello"}
    ]


def test_a_system_message_in_the_history_goes_as_developer() -> None:
    sent = body(user("Hi"), ProviderMessage("system", [TextPart("Be formal now.")]))
    assert sent["input"][1] == {"role": "developer", "content": "Be formal now."}


def test_extra_overrides_and_metadata_is_sent_only_when_asked() -> None:
    extra = {"reasoning": {"effort": "low"}, "store": True, "metadata": {"trace": "t1"}}
    sent = body(user("Hi"), extra=extra)
    assert sent["reasoning"] == {"effort": "low"} and sent["store"] is True
    assert "metadata" not in sent
    provider = OpenAIResponsesProvider("gpt-4o-mini", api_key=KEY, send_metadata=True)
    assert provider.request_body(request(extra=extra))["metadata"] == {"trace": "t1"}


@pytest.mark.parametrize(
    ("message", "match"),
    [
        (ProviderMessage("user", [ToolUsePart("c", "f", {})]), "user message cannot hold a tool"),
        (
            ProviderMessage("assistant", [ToolResultPart("c", "r")]),
            "assistant message cannot hold a tool result",
        ),
    ],
)
def test_content_the_api_cannot_take_is_an_invalid_request(
    message: ProviderMessage, match: str
) -> None:
    with pytest.raises(InvalidRequestError, match=match):
        body(message)


def test_an_image_another_model_made_goes_back_as_a_note_the_api_takes() -> None:
    made = ImagePart(Base64Source(data="x"), "image/png")

    sent = body(ProviderMessage("assistant", [made, TextPart("A blue cat.")]))["input"][-1]

    assert sent == {
        "role": "assistant",
        "content": "[Here the assistant made an image (image/png), which is not shown again]"
        "\nA blue cat.",
    }


def test_the_body_is_plain_json() -> None:
    sent = body(user("Hi"), tools=[WEATHER], system="S", max_tokens=5, model="gpt-5-mini")
    assert json.loads(json.dumps(sent)) == sent


def test_a_thinking_setting_is_reasoning_effort_with_a_summary() -> None:
    assert body(thinking="low")["reasoning"] == {"effort": "low", "summary": "auto"}
    assert body(thinking=True)["reasoning"] == {"effort": "medium", "summary": "auto"}
    assert body(thinking=False)["reasoning"] == {"effort": "none", "summary": "auto"}
    own = {"effort": "high"}
    assert body(thinking="low", extra={"reasoning": own})["reasoning"] == own
    assert "reasoning" not in body()
