from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import pytest

from layer0 import Base64Source, UrlSource
from neuron_provider_anthropic._wire import (
    WireError,
    build_body,
    parse_message,
)
from neuron_tool import ToolSchema
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
from neuron_turn.loop.provider_errors import InvalidRequestError
from neuron_turn.loop.tool_choice import ToolChoice

from ._support import MODEL, assistant, message_json, request, usage_json, user


def body_of(req: Any, **options: Any) -> dict[str, Any]:
    options.setdefault("model", "default-model")
    options.setdefault("max_tokens", 4096)
    return build_body(req, **options)


# --- request ------------------------------------------------------------------


def test_text_message_becomes_a_user_turn_with_a_text_block() -> None:
    body = body_of(request(user("What is 2+2?")))

    assert body == {
        "model": MODEL,
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "What is 2+2?"}]}],
    }


def test_max_tokens_defaults_when_the_request_has_none_and_is_kept_when_it_has_one() -> None:
    assert body_of(request(), max_tokens=1234)["max_tokens"] == 1234
    assert body_of(request(max_tokens=77), max_tokens=1234)["max_tokens"] == 77


def test_model_falls_back_to_the_providers_model_when_the_request_names_none() -> None:
    assert body_of(request(model=""), model="claude-opus-4-6")["model"] == "claude-opus-4-6"


def test_temperature_is_sent_only_when_set() -> None:
    assert "temperature" not in body_of(request())
    assert body_of(request(temperature=0.0))["temperature"] == 0.0


def test_system_prompt_goes_to_the_top_level_system_field() -> None:
    body = body_of(request(user("Hi"), system="Be brief."))

    assert body["system"] == "Be brief."
    assert all(m["role"] != "system" for m in body["messages"])


def test_system_messages_are_appended_to_the_system_prompt() -> None:
    system = ProviderMessage("system", [TextPart("Answer in French.")])
    body = body_of(request(system, user("Hi"), system="Be brief."))

    assert body["system"] == "Be brief.\nAnswer in French."
    assert [m["role"] for m in body["messages"]] == ["user"]


def test_a_system_message_with_an_image_is_rejected() -> None:
    image = ImagePart(UrlSource(url="https://example.com/a.png"), "image/png")
    system = ProviderMessage("system", [image])

    with pytest.raises(InvalidRequestError, match="system message may hold only text"):
        body_of(request(system, user("Hi")))


def test_images_map_to_base64_and_url_sources() -> None:
    inline = ImagePart(Base64Source(data="iVBORw0KGgo="), "image/png")
    linked = ImagePart(UrlSource(url="https://example.com/cat.jpg"), "image/jpeg")

    blocks = body_of(request(user(inline, linked, "What is this?")))["messages"][0]["content"]

    assert blocks == [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
        },
        {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}},
        {"type": "text", "text": "What is this?"},
    ]


def test_tool_use_and_tool_results_with_is_error_map_to_their_blocks() -> None:
    call = ToolUsePart(id="toolu_1", name="lookup", input={"q": "x"})
    ok = ToolResultPart(tool_use_id="toolu_1", content="found")
    failed = ToolResultPart(tool_use_id="toolu_2", content="boom", is_error=True)

    messages = body_of(request(user("go"), assistant(call), user(ok, failed)))["messages"]

    assert messages[1] == {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"q": "x"}}],
    }
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "found", "is_error": False},
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "boom", "is_error": True},
    ]


def test_call_ids_another_provider_made_are_sent_in_the_form_the_api_takes() -> None:
    # Kimi through OpenRouter names calls `functions.edit:0`; the API takes only
    # [a-zA-Z0-9_-], and refuses the whole conversation otherwise.
    ids = ["functions.edit:0", "functions:edit.0", "\ufffd", "toolu_01-ok"]
    calls = [ToolUsePart(id=i, name="edit", input={}) for i in ids]
    results = [ToolResultPart(tool_use_id=i, content="done") for i in ids]

    messages = body_of(request(user("go"), assistant(*calls), user(*results)))["messages"]

    sent = [block["id"] for block in messages[1]["content"]]
    assert sent == [block["tool_use_id"] for block in messages[2]["content"]]
    assert all(re.fullmatch(r"[a-zA-Z0-9_-]+", i) for i in sent)
    assert len(set(sent)) == len(ids)  # ids differing only in what was replaced stay apart
    assert sent[0].startswith("functions_edit_0_") and sent[3] == "toolu_01-ok"


def test_empty_text_a_model_answered_is_not_sent_back() -> None:
    call = ToolUsePart(id="toolu_1", name="lookup", input={})
    result = ToolResultPart(tool_use_id="toolu_1", content="found")
    conversation = request(
        user("go"), assistant("", call), user(result), assistant(""), user("", "and now?")
    )

    messages = body_of(conversation)["messages"]

    assert messages == [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": "found",
                    "is_error": False,
                },
                {"type": "text", "text": "and now?"},
            ],
        },
    ]
    # A caller's own empty message is sent as it is: the API's refusal names it.
    assert body_of(request(user("")))["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": ""}]}
    ]


def test_consecutive_messages_of_one_role_are_merged_into_one_message() -> None:
    results = [
        ProviderMessage("user", [ToolResultPart(tool_use_id="a", content="1")]),
        ProviderMessage("user", [ToolResultPart(tool_use_id="b", content="2")]),
    ]

    messages = body_of(request(user("go"), assistant("calling"), *results))["messages"]

    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [b["tool_use_id"] for b in messages[2]["content"]] == ["a", "b"]


def test_tool_schemas_map_to_name_description_and_input_schema() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    tool = ToolSchema(name="weather", description="Get the weather.", input_schema=schema)

    body = body_of(request(tools=[tool]))

    assert body["tools"] == [
        {"name": "weather", "description": "Get the weather.", "input_schema": schema}
    ]


def test_extra_is_passed_through_but_trace_metadata_is_not_sent() -> None:
    thinking = {"type": "enabled", "budget_tokens": 2048}
    extra = {"thinking": thinking, "stop_sequences": ["###"], "metadata": {"trace_id": "t-1"}}

    body = body_of(request(extra=extra))

    assert body["thinking"] == thinking
    assert body["stop_sequences"] == ["###"]
    assert "metadata" not in body


def test_stream_option_sets_the_stream_flag() -> None:
    assert body_of(request(), stream=True)["stream"] is True
    assert "stream" not in body_of(request())


def test_signed_thinking_is_sent_back_unchanged() -> None:
    thinking = ThinkingPart("Let me think.\n\nOK.", signature="EqEECkYICxgCKkAo3UA4+/==")

    blocks = body_of(request(user("q"), assistant(thinking, "answer")))["messages"][1]["content"]

    assert blocks[0] == {
        "type": "thinking",
        "thinking": "Let me think.\n\nOK.",
        "signature": "EqEECkYICxgCKkAo3UA4+/==",
    }


def test_unsigned_thinking_and_other_providers_raw_parts_are_dropped() -> None:
    foreign = RawPart(provider="openai", data={"type": "reasoning", "id": "rs_1"})
    parts = (ThinkingPart("from another model"), foreign, "answer")

    blocks = body_of(request(user("q"), assistant(*parts)))["messages"][1]["content"]

    assert blocks == [{"type": "text", "text": "answer"}]


def test_anthropic_raw_parts_are_sent_as_is() -> None:
    redacted = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}

    blocks = body_of(request(user("q"), assistant(RawPart("anthropic", redacted))))["messages"]

    assert blocks[1]["content"] == [redacted]


def test_a_message_left_empty_after_dropping_parts_is_omitted() -> None:
    only_foreign = assistant(RawPart(provider="ollama", data={"x": 1}))

    messages = body_of(request(user("a"), only_foreign, user("b")))["messages"]

    assert messages == [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    ]


# --- response -----------------------------------------------------------------


def test_text_response_maps_content_stop_reason_usage_and_answered_model() -> None:
    # input_tokens is the total: Anthropic's count plus cache reads and writes.
    usage = usage_json(20, 10, cache_read_input_tokens=5, cache_creation_input_tokens=7)
    parsed = parse_message(message_json(model="claude-3-opus-20240229", usage=usage))

    assert parsed.content == (TextPart("Hello."),)
    assert parsed.stop_reason == "end_turn"
    assert parsed.usage == TokenUsage(32, 10, cache_read_tokens=5, cache_creation_tokens=7)
    assert parsed.model == "claude-3-opus-20240229"
    assert parsed.truncated is False


def test_cache_counts_are_none_when_the_api_does_not_report_them() -> None:
    parsed = parse_message(message_json(usage={"input_tokens": 3, "output_tokens": 4}))

    assert parsed.usage == TokenUsage(3, 4, cache_read_tokens=None, cache_creation_tokens=None)


def test_tool_use_blocks_become_tool_use_parts_in_order() -> None:
    content = [
        {"type": "text", "text": "Looking up."},
        {"type": "tool_use", "id": "toolu_a", "name": "get", "input": {"name": "Alice"}},
        {"type": "tool_use", "id": "toolu_b", "name": "get", "input": {}},
    ]

    parsed = parse_message(message_json(content, stop_reason="tool_use"))

    assert parsed.content == (
        TextPart("Looking up."),
        ToolUsePart(id="toolu_a", name="get", input={"name": "Alice"}),
        ToolUsePart(id="toolu_b", name="get", input={}),
    )
    assert parsed.stop_reason == "tool_use"


def test_thinking_and_redacted_thinking_round_trip_unchanged() -> None:
    thinking = {"type": "thinking", "thinking": "Hmm.", "signature": "sig/+=="}
    redacted = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}
    content = [thinking, redacted, {"type": "text", "text": "Done."}]

    parsed = parse_message(message_json(content))
    sent = body_of(request(user("q"), ProviderMessage("assistant", parsed.content)))

    assert parsed.content[0] == ThinkingPart("Hmm.", signature="sig/+==")
    assert parsed.content[1] == RawPart(provider="anthropic", data=redacted)
    assert sent["messages"][1]["content"] == content


def test_unknown_block_types_are_kept_as_anthropic_raw_parts() -> None:
    block = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}

    parsed = parse_message(message_json([block]))

    assert parsed.content == (RawPart(provider="anthropic", data=block),)


@pytest.mark.parametrize(
    ("raw", "expected", "truncated"),
    [
        ("end_turn", "end_turn", False),
        ("stop_sequence", "end_turn", False),
        ("pause_turn", "end_turn", False),
        ("tool_use", "tool_use", False),
        ("max_tokens", "max_tokens", True),
        ("model_context_window_exceeded", "max_tokens", True),
        ("refusal", "content_filter", False),
        ("something_new", "end_turn", False),
        (None, "end_turn", False),
    ],
)
def test_stop_reasons_map_to_the_loops_stop_reasons(
    raw: str | None, expected: str, truncated: bool
) -> None:
    parsed = parse_message(message_json(stop_reason=raw))

    assert parsed.stop_reason == expected
    assert parsed.truncated is truncated


def test_unknown_stop_reason_with_tool_calls_is_tool_use() -> None:
    content = [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]

    assert parse_message(message_json(content, stop_reason="new_reason")).stop_reason == "tool_use"


@pytest.mark.parametrize(
    ("body", "complaint"),
    [
        ([], "not a JSON object"),
        ({"type": "error"}, "type 'message'"),
        ({**message_json(), "content": "text"}, "'content' is not a list"),
        ({**message_json(), "usage": None}, "usage is not a JSON object"),
        ({**message_json(), "model": 3}, "'model' is not a string"),
        (message_json(usage={"input_tokens": "3", "output_tokens": 1}), "'input_tokens'"),
        (message_json([{"type": "text"}]), "'text' is not a string"),
        (message_json([{"type": "tool_use", "id": "t", "name": "f"}]), "no 'input'"),
        (message_json([{"text": "no type"}]), "no string 'type'"),
    ],
)
def test_malformed_messages_raise_wire_error(body: Any, complaint: str) -> None:
    with pytest.raises(WireError, match=complaint):
        parse_message(body)


# --- tool choice and typed answers --------------------------------------------


WEATHER = ToolSchema(
    name="get_weather",
    description="Weather for a city.",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
)


@pytest.mark.parametrize(
    ("choice", "parallel", "expected"),
    [
        (ToolChoice.AUTO, None, {"type": "auto"}),
        (ToolChoice.NONE, None, {"type": "none"}),
        (ToolChoice.REQUIRED, None, {"type": "any"}),
        (ToolChoice.tool("get_weather"), None, {"type": "tool", "name": "get_weather"}),
        (
            ToolChoice.tool("get_weather"),
            False,
            {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": True},
        ),
        (None, False, {"type": "auto", "disable_parallel_tool_use": True}),
        (ToolChoice.NONE, False, {"type": "none"}),
    ],
)
def test_the_tool_choice_is_sent_in_the_messages_api_shape(
    choice: ToolChoice | None, parallel: bool | None, expected: dict[str, Any]
) -> None:
    # Shapes from the Messages API reference (tool_choice: auto, any, tool, none).
    body = body_of(request(tools=[WEATHER], tool_choice=choice, parallel_tool_calls=parallel))
    assert body["tool_choice"] == expected


def test_no_tool_choice_is_sent_without_tools_or_when_unset() -> None:
    assert "tool_choice" not in body_of(request(tool_choice=ToolChoice.REQUIRED))
    assert "tool_choice" not in body_of(request(tools=[WEATHER], parallel_tool_calls=True))


def test_the_final_answer_tool_of_tool_mode_is_forced_by_name() -> None:
    from neuron_turn import OutputSpec

    final = OutputSpec.json_schema(
        {"type": "object", "properties": {"answer": {"type": "integer"}}}
    ).tool_schema()
    body = body_of(request(tools=[WEATHER, final], tool_choice=ToolChoice.tool(final.name)))
    assert body["tools"][-1] == {
        "name": "final_answer",
        "description": "Give the final answer (output); this ends the conversation.",
        "input_schema": {"type": "object", "properties": {"answer": {"type": "integer"}}},
    }
    assert body["tool_choice"] == {"type": "tool", "name": "final_answer"}


def test_a_forced_tool_reply_with_only_a_tool_use_block_parses_as_a_call() -> None:
    # With tool_choice {type: tool} the API answers with the tool_use block alone.
    parsed = parse_message(
        message_json(
            [{"type": "tool_use", "id": "toolu_1", "name": "final_answer", "input": {"a": 1}}],
            stop_reason="tool_use",
        )
    )
    assert parsed.content == (ToolUsePart("toolu_1", "final_answer", {"a": 1}),)
    assert parsed.stop_reason == "tool_use"


@pytest.mark.parametrize(
    "thinking", [{"type": "enabled", "budget_tokens": 1024}, {"type": "adaptive"}]
)
def test_with_thinking_on_a_forced_choice_is_sent_as_auto(thinking: dict[str, Any]) -> None:
    # The API allows only auto and none next to extended thinking.
    for choice in (ToolChoice.REQUIRED, ToolChoice.tool("get_weather")):
        body = body_of(request(tools=[WEATHER], tool_choice=choice, extra={"thinking": thinking}))
        assert body["tool_choice"] == {"type": "auto"}
    off = {"thinking": {"type": "disabled"}}
    body = body_of(request(tools=[WEATHER], tool_choice=ToolChoice.REQUIRED, extra=off))
    assert body["tool_choice"] == {"type": "any"}


def test_documents_map_to_document_blocks_a_pdf_by_bytes_or_url_and_text_as_text() -> None:
    pdf = DocumentPart(Base64Source(data="JVBERi0x"), "application/pdf", "report.pdf")
    linked = DocumentPart(UrlSource(url="https://example.com/a.pdf"), "application/pdf")
    notes = DocumentPart(Base64Source(data="bm90ZXM="), "text/plain", "notes.txt")

    blocks = body_of(request(user(pdf, linked, notes, "Sum up.")))["messages"][0]["content"]

    assert blocks == [
        {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0x"},
            "title": "report.pdf",
        },
        {"type": "document", "source": {"type": "url", "url": "https://example.com/a.pdf"}},
        {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": "notes"},
            "title": "notes.txt",
        },
        {"type": "text", "text": "Sum up."},
    ]


def test_a_document_of_a_type_the_api_takes_none_of_is_refused_naming_it() -> None:
    sheet = DocumentPart(Base64Source(data="UEsDBA=="), "application/vnd.ms-excel")
    with pytest.raises(InvalidRequestError, match=r"not application/vnd\.ms-excel by base64"):
        body_of(request(user(sheet, "Sum up.")))


# --- files a tool returned -------------------------------------------------------

SHOT = ImagePart(Base64Source(data="iVBORw0KGgo="), "image/png")
REPORT = DocumentPart(Base64Source(data="JVBERi0x"), "application/pdf", "q3.pdf")


def tool_results(*results: ToolResultPart) -> list[dict[str, Any]]:
    call = assistant(*(ToolUsePart(r.tool_use_id, "screenshot", {}) for r in results))
    return body_of(request(user("go"), call, user(*results)))["messages"][2]["content"]


def test_a_tool_results_files_go_inside_it_after_its_text_as_user_message_blocks() -> None:
    linked = ImagePart(UrlSource(url="https://example.com/chart.png"), "image/png")
    notes = DocumentPart(Base64Source(data="bm90ZXM="), "text/plain", "notes.txt")
    result = ToolResultPart("toolu_1", "captured", files=(SHOT, linked, REPORT, notes))

    assert tool_results(result) == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": [
                {"type": "text", "text": "captured"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
                },
                {
                    "type": "image",
                    "source": {"type": "url", "url": "https://example.com/chart.png"},
                },
                {
                    "type": "document",
                    "source": {
                        "type": "base64",
                        "media_type": "application/pdf",
                        "data": "JVBERi0x",
                    },
                    "title": "q3.pdf",
                },
                {
                    "type": "document",
                    "source": {"type": "text", "media_type": "text/plain", "data": "notes"},
                    "title": "notes.txt",
                },
            ],
            "is_error": False,
        }
    ]


def test_a_tool_result_with_files_and_no_text_sends_no_empty_text_block() -> None:
    failed = ToolResultPart("toolu_1", "", is_error=True, files=(SHOT,))

    (block,) = tool_results(failed)

    assert block["content"] == [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
        }
    ]
    assert block["is_error"] is True


def test_a_tool_result_without_files_keeps_its_content_a_plain_string() -> None:
    plain = ToolResultPart("toolu_1", "found")
    empty = ToolResultPart("toolu_2", "")

    assert [block["content"] for block in tool_results(plain, empty)] == ["found", ""]


def test_a_tool_document_the_api_takes_none_of_is_a_note_in_its_place_not_a_refusal() -> None:
    sheet = DocumentPart(Base64Source(data="UEsDBA=="), "application/vnd.ms-excel", "q3.xls")
    linked = DocumentPart(UrlSource(url="https://example.com/notes.txt"), "text/plain")
    result = ToolResultPart("toolu_1", "exported", files=(sheet, linked, SHOT))

    (block,) = tool_results(result)

    assert block["content"][:3] == [
        {"type": "text", "text": "exported"},
        {
            "type": "text",
            "text": "[The tool returned the document q3.xls (application/vnd.ms-excel), which is "
            "not shown: Anthropic reads PDF and plain-text documents, not "
            "application/vnd.ms-excel by base64]",
        },
        {
            "type": "text",
            "text": "[The tool returned a document (text/plain), which is not shown: Anthropic "
            "reads PDF and plain-text documents, not text/plain by url]",
        },
    ]
    assert block["content"][3]["type"] == "image"


def test_the_cache_mark_goes_on_a_last_tool_result_that_holds_files() -> None:
    cached = request(
        user("Show me the page."),
        assistant(ToolUsePart("t1", "screenshot", {})),
        user(ToolResultPart("t1", "captured", files=(SHOT,))),
        tools=[WEATHER],
    )

    last = body_of(cached, cache=True)["messages"][-1]["content"][-1]

    assert last["type"] == "tool_result" and last["cache_control"] == {"type": "ephemeral"}
    assert [block["type"] for block in last["content"]] == ["text", "image"]
    assert not any("cache_control" in block for block in last["content"])


# --- the prompt cache ------------------------------------------------------------


def test_with_the_cache_on_the_system_the_last_tool_and_the_last_block_are_marked() -> None:
    cached = request(
        user("What is the weather in Paris?"),
        assistant(ToolUsePart("t1", "get_weather", {"city": "Paris"})),
        ProviderMessage("user", [ToolResultPart("t1", "18 C")]),
        system="Be brief.",
        tools=[WEATHER, ToolSchema(name="now", description="The time.", input_schema={})],
    )

    body = body_of(cached, cache=True)

    ephemeral = {"type": "ephemeral"}
    assert body["system"] == [{"type": "text", "text": "Be brief.", "cache_control": ephemeral}]
    assert "cache_control" not in body["tools"][0]
    assert body["tools"][1]["cache_control"] == ephemeral
    last = body["messages"][-1]["content"]
    assert last[-1]["type"] == "tool_result" and last[-1]["cache_control"] == ephemeral
    earlier = [b for m in body["messages"][:-1] for b in m["content"]]
    assert not any("cache_control" in block for block in earlier)


def test_the_cache_mark_skips_a_block_that_cannot_carry_one_and_is_off_by_default() -> None:
    prefilled = assistant(TextPart("The answer"), ThinkingPart("hmm", signature="sig"))
    body = body_of(request(user("Go on"), prefilled), cache=True)
    text, thinking = body["messages"][-1]["content"]
    assert text["cache_control"] == {"type": "ephemeral"} and "cache_control" not in thinking
    thought = ProviderMessage("user", [TextPart("go on")])
    plain = body_of(request(thought, system="Be brief.", tools=[WEATHER]))
    assert plain["system"] == "Be brief." and "cache_control" not in plain["tools"][0]
    assert "cache_control" not in str(plain["messages"])


# --- thinking -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("level", "budget"),
    [("minimal", 1024), ("low", 2048), (True, 10_000), ("medium", 10_000), ("high", 16_384)],
)
def test_a_thinking_setting_is_a_thinking_budget(level: Any, budget: int) -> None:
    body = body_of(replace(request(), thinking=level), max_tokens=20_000)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": budget}


def test_a_budget_is_cut_below_max_tokens_and_thinking_off_is_disabled() -> None:
    assert body_of(replace(request(), thinking="xhigh"), max_tokens=8000)["thinking"] == {
        "type": "enabled",
        "budget_tokens": 7999,
    }
    assert body_of(replace(request(), thinking=False))["thinking"] == {"type": "disabled"}
    assert "thinking" not in body_of(request())


def test_thinking_with_no_room_under_max_tokens_is_refused_before_the_call() -> None:
    with pytest.raises(InvalidRequestError, match="needs max_tokens above 1024"):
        body_of(replace(request(), thinking="low", max_tokens=1000))


def test_the_apis_own_thinking_in_extra_wins_over_the_setting() -> None:
    own = {"type": "enabled", "budget_tokens": 5000}
    body = body_of(replace(request(), thinking="high", extra={"thinking": own}))
    assert body["thinking"] == own


def test_an_image_another_model_made_goes_back_as_a_note_not_an_image_block() -> None:
    made = ImagePart(Base64Source(data="iVBORw0K"), "image/png")
    history = request(user("Draw a cat"), assistant(TextPart("Here:"), made), user("Bluer?"))

    sent = body_of(history)["messages"][1]

    assert sent == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Here:"},
            {
                "type": "text",
                "text": "[Here the assistant made an image (image/png), which is not shown again]",
            },
        ],
    }
    # A user's own image is still sent as one.
    shown = body_of(request(user("Look"), ProviderMessage("user", [made])))["messages"][0]
    assert shown["content"][-1]["type"] == "image"
