"""The running estimate gives what `estimate_tokens` gives, however the list changes."""

from __future__ import annotations

from layer0 import UrlSource
from neuron_tool import ToolSchema
from neuron_turn import (
    ImagePart,
    ProviderMessage,
    RawPart,
    TextPart,
    ToolResultPart,
    ToolUsePart,
)
from neuron_turn.loop.tokens import (
    IMAGE_TOKENS,
    RunningEstimate,
    TokenMeter,
    estimate_overhead,
    estimate_tokens,
)


def _message(index: int) -> ProviderMessage:
    if index % 2:
        return ProviderMessage("assistant", [ToolUsePart(f"c{index}", "add", {"a": index})])
    return ProviderMessage("user", [TextPart("x" * index), ToolResultPart(f"c{index}", "42")])


def test_running_estimate_matches_estimate_tokens_of_every_slice() -> None:
    running = RunningEstimate()
    messages: list[ProviderMessage] = []
    for index in range(12):
        messages.append(_message(index))
        assert running.tokens(messages) == estimate_tokens(messages)
        for start in range(len(messages)):
            assert running.tokens(messages, start) == estimate_tokens(messages[start:])
            assert running.tokens(messages, 0, start) == estimate_tokens(messages[:start])


def test_images_count_whole_and_the_text_rounds_up_once_across_messages() -> None:
    image = ImagePart(UrlSource(url="https://x/y.png"), "image/png")
    for chars in range(9):
        for images in range(3):
            messages = [
                ProviderMessage("user", [TextPart("x" * chars), *[image] * images]),
                ProviderMessage("assistant", [TextPart("y")]),
            ]
            expected = -(-(chars + 1) // 4) + images * IMAGE_TOKENS
            assert estimate_tokens(messages) == expected
            assert RunningEstimate().tokens(messages) == expected


def test_running_estimate_starts_over_when_the_list_changes_other_than_growing() -> None:
    running = RunningEstimate()
    messages = [_message(index) for index in range(6)]
    assert running.tokens(messages) == estimate_tokens(messages)
    messages.pop()
    messages.append(ProviderMessage("user", [TextPart("a much longer replacement " * 9)]))
    assert running.tokens(messages) == estimate_tokens(messages)
    del messages[2:]
    assert running.tokens(messages) == estimate_tokens(messages)
    other = [_message(index) for index in range(3, 9)]
    assert running.tokens(other) == estimate_tokens(other)


def test_meter_overhead_is_remembered_for_the_same_schemas_and_redone_for_others() -> None:
    meter = TokenMeter()
    add = ToolSchema(name="add", description="Add.", input_schema={"type": "object"})
    tools = [add]
    first = meter.overhead("be brief", tools)
    assert first == estimate_overhead("be brief", tools)
    # An equal but distinct schema object is measured anew, as is another prompt.
    bigger = ToolSchema(name="add", description="Add.", input_schema={"type": "object", "x": 1})
    assert meter.overhead("be brief", [bigger]) == estimate_overhead("be brief", [bigger]) > first
    assert meter.overhead("be much briefer", [bigger]) == estimate_overhead(
        "be much briefer", [bigger]
    )
    assert meter.overhead("be brief", [add, add]) == estimate_overhead("be brief", [add, add])
    assert meter.overhead("be brief", tools) == first


def test_estimate_measures_tool_input_utf8_cannot_hold() -> None:
    # A lone surrogate is valid in a Python str but not in UTF-8: still measured.
    message = ProviderMessage("assistant", [ToolUsePart("c1", "t", {"q": "\ud800"})])
    assert estimate_tokens([message]) > 0


def _kept(data: object) -> list[ProviderMessage]:
    return [ProviderMessage("assistant", [RawPart("google", data)])]  # type: ignore[arg-type]


def test_an_image_inside_a_kept_part_counts_as_an_image_not_as_its_base64() -> None:
    draft = {
        "inlineData": {"mimeType": "image/png", "data": "A" * 1_000_000},
        "thought": True,
        "thoughtSignature": "sig",
    }
    around = {**draft, "inlineData": {"mimeType": "image/png", "data": ""}}

    estimated = estimate_tokens(_kept(draft))

    assert IMAGE_TOKENS <= estimated <= IMAGE_TOKENS + estimate_tokens(_kept(around))
    assert RunningEstimate().tokens(_kept(draft)) == estimated


def test_every_apis_name_for_a_media_type_and_every_image_of_a_kept_part_count() -> None:
    images = [
        {"type": "image", "source": {"media_type": "image/jpeg", "data": "B" * 50_000}},
        {"mime_type": "image/webp", "data": "C" * 50_000},
        {"mimeType": "image/gif", "data": "D" * 50_000},
    ]

    assert 3 * IMAGE_TOKENS <= estimate_tokens(_kept({"parts": images})) < 3 * IMAGE_TOKENS + 100


def test_a_kept_parts_other_long_strings_still_count_by_their_length() -> None:
    for data in (
        {"type": "reasoning", "encrypted_content": "E" * 40_000},
        {"mimeType": "audio/wav", "data": "F" * 40_000},
        {"mimeType": ["image/png"], "data": "G" * 40_000},
        "H" * 40_000,
    ):
        assert estimate_tokens(_kept(data)) >= 10_000


def test_a_kept_part_nested_as_deep_as_a_parsed_answer_can_be_is_sized() -> None:
    # Deeper than pydantic-core writes; a provider's JSON reader stops well before 900.
    data: object = {"mimeType": "image/png", "data": "I" * 100_000}
    for _ in range(900):
        data = [data]

    assert IMAGE_TOKENS <= estimate_tokens(_kept(data)) < IMAGE_TOKENS + 1_000
