"""The request body: `neuron_turn` messages, tools and options as Gemini `generateContent` JSON."""

from __future__ import annotations

import pytest

from layer0 import Base64Source, UrlSource
from neuron_provider_google._wire import (
    ONE_CALL_AT_A_TIME,
    UNSIGNED_CALL_SIGNATURE,
    UnsupportedContentError,
    request_body,
)
from neuron_tool.schema import ToolSchema
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
from neuron_turn.loop.tool_choice import ToolChoice

from ._support import request, user

WEATHER = ToolSchema(
    name="get_weather",
    description="Return the current weather in a city.",
    input_schema={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
)
PNG = Base64Source(data="iVBORw0KGgo=")


def assistant(*parts: object) -> ProviderMessage:
    return ProviderMessage("assistant", list(parts))  # type: ignore[arg-type]


def test_system_prompt_goes_as_system_instruction_and_messages_as_user_and_model_turns() -> None:
    body = request_body(
        request(user("Hi"), assistant(TextPart("Hello!")), user("Bye"), system="Be brief.")
    )
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "Hi"}]},
        {"role": "model", "parts": [{"text": "Hello!"}]},
        {"role": "user", "parts": [{"text": "Bye"}]},
    ]
    assert "model" not in body  # the model is in the URL


def test_a_system_message_in_the_conversation_joins_the_system_instruction() -> None:
    system = ProviderMessage("system", [TextPart("Answer in French.")])
    body = request_body(request(user("Hi"), system, system="Be brief."))
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief.\nAnswer in French."}]}
    assert [content["role"] for content in body["contents"]] == ["user"]  # type: ignore[index]


def test_tools_are_function_declarations_with_their_json_schema_unchanged() -> None:
    body = request_body(request(tools=[WEATHER]))
    assert body["tools"] == [
        {
            "functionDeclarations": [
                {
                    "name": "get_weather",
                    "description": "Return the current weather in a city.",
                    "parametersJsonSchema": WEATHER.input_schema,
                }
            ]
        }
    ]
    assert "toolConfig" not in body


@pytest.mark.parametrize(
    ("choice", "config"),
    [
        (ToolChoice.AUTO, {"mode": "AUTO"}),
        (ToolChoice.NONE, {"mode": "NONE"}),
        (ToolChoice.REQUIRED, {"mode": "ANY"}),
        (ToolChoice.tool("get_weather"), {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}),
    ],
)
def test_tool_choice_maps_to_function_calling_config_modes(
    choice: ToolChoice, config: dict[str, object]
) -> None:
    body = request_body(request(tools=[WEATHER], tool_choice=choice))
    assert body["toolConfig"] == {"functionCallingConfig": config}


def test_tool_choice_without_tools_is_not_sent() -> None:
    assert "toolConfig" not in request_body(request(tool_choice=ToolChoice.REQUIRED))


def test_parallel_tool_calls_false_asks_for_one_call_in_the_system_instruction() -> None:
    body = request_body(request(tools=[WEATHER], parallel_tool_calls=False, system="Be brief."))
    assert body["systemInstruction"] == {"parts": [{"text": f"Be brief.\n{ONE_CALL_AT_A_TIME}"}]}
    allowed = request_body(request(tools=[WEATHER], parallel_tool_calls=True))
    assert "systemInstruction" not in allowed


def test_max_tokens_temperature_and_thoughts_go_in_generation_config() -> None:
    body = request_body(request(max_tokens=256, temperature=0.2), include_thoughts=True)
    assert body["generationConfig"] == {
        "maxOutputTokens": 256,
        "temperature": 0.2,
        "thinkingConfig": {"includeThoughts": True},
    }
    assert "generationConfig" not in request_body(request())


def test_native_output_sends_the_schema_as_response_json_schema_only_without_tools() -> None:
    schema = {"type": "object", "properties": {"answer": {"type": "integer"}}}
    output = OutputSchema("Answer", schema)
    body = request_body(request(output=output))
    assert body["generationConfig"] == {
        "responseMimeType": "application/json",
        "responseJsonSchema": schema,
    }
    with_tools = request_body(request(output=output, tools=[WEATHER]))
    assert "generationConfig" not in with_tools


def test_extra_merges_generation_config_field_by_field_and_replaces_other_keys() -> None:
    extra = {
        "generationConfig": {"topK": 40, "maxOutputTokens": 99},
        "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}],
        "metadata": {"trace": "t1"},
    }
    body = request_body(request(max_tokens=256, temperature=0.5, extra=extra))
    assert body["generationConfig"] == {"maxOutputTokens": 99, "temperature": 0.5, "topK": 40}
    assert body["safetySettings"] == extra["safetySettings"]
    assert "metadata" not in body


def test_defaults_are_overridden_by_the_request() -> None:
    defaults = {"generationConfig": {"temperature": 1.0, "topP": 0.9}, "cachedContent": "c/1"}
    body = request_body(request(temperature=0.1), defaults=defaults)
    assert body["generationConfig"] == {"temperature": 0.1, "topP": 0.9}
    assert body["cachedContent"] == "c/1"


def test_images_and_documents_go_inline_and_urls_as_file_data() -> None:
    message = ProviderMessage(
        "user",
        [
            TextPart("Compare"),
            ImagePart(PNG, "image/png"),
            DocumentPart(Base64Source(data="JVBERi0="), "application/pdf", "q3.pdf"),
            ImagePart(UrlSource(url="https://example.com/cat.jpg"), "image/jpeg"),
            DocumentPart(UrlSource(url="https://example.com/r.pdf"), "application/pdf"),
        ],
    )
    (content,) = request_body(request(message))["contents"]  # type: ignore[misc]
    assert content["parts"] == [  # type: ignore[index]
        {"text": "Compare"},
        {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
        {"inlineData": {"mimeType": "application/pdf", "data": "JVBERi0="}},
        {"fileData": {"mimeType": "image/jpeg", "fileUri": "https://example.com/cat.jpg"}},
        {"fileData": {"mimeType": "application/pdf", "fileUri": "https://example.com/r.pdf"}},
    ]


def tool_loop(*results: ToolResultPart, calls: tuple[ToolUsePart, ...] = ()) -> list[object]:
    calls = calls or (ToolUsePart("call_1", "get_weather", {"city": "Paris"}),)
    messages = [user("Weather?"), assistant(*calls), ProviderMessage("user", list(results))]
    return request_body(request(*messages))["contents"]  # type: ignore[return-value]


def test_a_tool_result_is_a_function_response_naming_the_function_of_its_call() -> None:
    _, model, answer = tool_loop(ToolResultPart("call_1", "Sunny"))
    assert model["parts"] == [  # type: ignore[index]
        {
            "functionCall": {"id": "call_1", "name": "get_weather", "args": {"city": "Paris"}},
            "thoughtSignature": UNSIGNED_CALL_SIGNATURE,
        }
    ]
    assert answer == {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "id": "call_1",
                    "name": "get_weather",
                    "response": {"output": "Sunny"},
                }
            }
        ],
    }


def test_a_failed_tool_result_says_so_under_error() -> None:
    *_, answer = tool_loop(ToolResultPart("call_1", "city not found", is_error=True))
    (part,) = answer["parts"]  # type: ignore[index]
    assert part["functionResponse"]["response"] == {"error": "city not found"}


def test_a_result_whose_call_is_not_in_the_conversation_is_refused_naming_the_call() -> None:
    with pytest.raises(UnsupportedContentError, match=r"'call_9'.*must name the function"):
        tool_loop(ToolResultPart("call_9", "Sunny"))


def test_a_result_s_files_follow_the_responses_introduced_then_the_user_s_own_text() -> None:
    result = ToolResultPart("call_1", "Chart attached", files=(ImagePart(PNG, "image/png"),))
    *_, answer = tool_loop(result, TextPart("Explain it"))  # type: ignore[arg-type]
    parts = answer["parts"]  # type: ignore[index]
    assert "functionResponse" in parts[0]
    assert parts[1] == {
        "text": "The tool call get_weather (call call_1) returned this file with its result:"
    }
    assert parts[2] == {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
    assert parts[3] == {"text": "Explain it"}


def test_only_the_first_unsigned_call_of_a_model_turn_gets_the_stand_in_signature() -> None:
    calls = (
        ToolUsePart("call_1", "get_weather", {"city": "Paris"}),
        ToolUsePart("call_2", "get_weather", {"city": "Rome"}),
    )
    _, model, _ = tool_loop(
        ToolResultPart("call_1", "Sunny"), ToolResultPart("call_2", "Rain"), calls=calls
    )
    first, second = model["parts"]  # type: ignore[index]
    assert first["thoughtSignature"] == UNSIGNED_CALL_SIGNATURE
    assert "thoughtSignature" not in second


def test_a_signature_goes_back_on_the_part_it_came_on_byte_for_byte() -> None:
    signature = "CiQB0e2Kb+/=sig=="
    calls = (
        RawPart("google", {"thoughtSignature": signature}),
        ToolUsePart("call_1", "get_weather", {"city": "Paris"}),
    )
    _, model, _ = tool_loop(ToolResultPart("call_1", "Sunny"), calls=calls)
    assert model["parts"] == [  # type: ignore[index]
        {
            "functionCall": {"id": "call_1", "name": "get_weather", "args": {"city": "Paris"}},
            "thoughtSignature": signature,
        }
    ]


def test_a_signed_thought_goes_back_as_a_thought_and_an_unsigned_one_is_dropped() -> None:
    message = assistant(
        ThinkingPart("unsigned musing"),
        RawPart("google", {"thoughtSignature": "s1"}),
        ThinkingPart("signed plan"),
        TextPart("Answer"),
    )
    _, model = request_body(request(user("Q"), message))["contents"]  # type: ignore[misc]
    assert model["parts"] == [  # type: ignore[index]
        {"text": "signed plan", "thought": True, "thoughtSignature": "s1"},
        {"text": "Answer"},
    ]


def test_a_whole_signed_part_is_sent_in_its_place_and_other_providers_raw_parts_dropped() -> None:
    message = assistant(
        TextPart("Done."),
        RawPart("openai-responses", {"type": "reasoning", "id": "rs_1"}),
        RawPart("google", {"text": "", "thoughtSignature": "s2"}),
        ThinkingPart("anthropic thinking", signature="anthropic-sig"),
    )
    _, model = request_body(request(user("Q"), message))["contents"]  # type: ignore[misc]
    assert model["parts"] == [{"text": "Done."}, {"text": "", "thoughtSignature": "s2"}]  # type: ignore[index]


def test_a_marker_whose_part_is_gone_keeps_its_place_on_an_empty_text() -> None:
    message = assistant(TextPart("A"), RawPart("google", {"thoughtSignature": "s3"}))
    _, model = request_body(request(user("Q"), message))["contents"]  # type: ignore[misc]
    assert model["parts"] == [{"text": "A"}, {"text": "", "thoughtSignature": "s3"}]  # type: ignore[index]


def test_a_call_whose_input_is_not_an_object_is_wrapped_as_arguments() -> None:
    calls = (ToolUsePart("call_1", "get_weather", '{"city": "Par'),)
    _, model, _ = tool_loop(ToolResultPart("call_1", "bad"), calls=calls)
    assert model["parts"][0]["functionCall"]["args"] == {"arguments": '{"city": "Par'}  # type: ignore[index]


def test_a_message_left_without_parts_is_not_sent() -> None:
    only_raw = assistant(RawPart("openai-responses", {"type": "reasoning"}))
    contents = request_body(request(user("Q"), only_raw, user("Again")))["contents"]
    assert [content["role"] for content in contents] == ["user", "user"]  # type: ignore[index, union-attr]


@pytest.mark.parametrize(
    ("message", "match"),
    [
        (assistant(ToolResultPart("c", "done")), "an assistant message cannot hold a tool result"),
        (ProviderMessage("user", [ToolUsePart("c", "f", {})]), "a user message cannot hold"),
        (ProviderMessage("system", [ImagePart(PNG, "image/png")]), "only text, not an image"),
    ],
)
def test_parts_the_api_cannot_take_there_are_refused_naming_them(
    message: ProviderMessage, match: str
) -> None:
    with pytest.raises(UnsupportedContentError, match=match):
        request_body(request(user("Q"), message))


# --- thinking -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "level", "config"),
    [
        ("gemini-2.5-flash", True, {"includeThoughts": True}),
        ("gemini-2.5-flash", False, {"thinkingBudget": 0}),
        ("gemini-2.5-flash", "low", {"includeThoughts": True, "thinkingBudget": 1024}),
        ("gemini-2.5-flash", "xhigh", {"includeThoughts": True, "thinkingBudget": 24_576}),
        ("gemini-2.5-pro", "xhigh", {"includeThoughts": True, "thinkingBudget": 32_768}),
        (
            "models/gemini-3-pro-preview",
            "minimal",
            {"includeThoughts": True, "thinkingLevel": "low"},
        ),
        ("gemini-3-flash", "medium", {"includeThoughts": True, "thinkingLevel": "high"}),
    ],
)
def test_a_thinking_setting_is_a_thinking_config_as_the_model_takes_it(
    model: str, level: object, config: dict[str, object]
) -> None:
    body = request_body(request(user("Hi"), thinking=level), model=model)
    assert body["generationConfig"]["thinkingConfig"] == config


def test_the_providers_own_thinking_config_wins_over_the_setting() -> None:
    own = {"generationConfig": {"thinkingConfig": {"thinkingBudget": 0}}}
    body = request_body(
        request(user("Hi"), thinking="high"), defaults=own, model="gemini-2.5-flash"
    )
    assert body["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 0}
    extra = {"generationConfig": {"thinkingConfig": {"thinkingBudget": 99}}}
    body = request_body(request(user("Hi"), thinking="high", extra=extra), model="gemini-2.5-flash")
    assert body["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 99}
    assert "thinkingConfig" not in request_body(request(user("Hi"))).get("generationConfig", {})
