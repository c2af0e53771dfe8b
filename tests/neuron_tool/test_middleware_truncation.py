from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import JsonValue

from neuron_tool import ToolRegistry, truncate_output
from neuron_tool.truncation import truncate

if TYPE_CHECKING:
    # Only for annotations: fixtures hand the class over at run time.
    from conftest import FakeTool

NOTE = re.compile(r"… \[truncated (\d+) of (\d+) bytes\]\Z")


def test_result_within_the_limit_is_unchanged() -> None:
    assert truncate("short", 5) == "short"
    assert truncate({"a": [1, 2]}, 100) == {"a": [1, 2]}


def test_long_string_is_cut_and_the_note_says_how_much() -> None:
    assert truncate("abcdefghij", 4) == "abcd… [truncated 6 of 10 bytes]"


def test_cut_never_splits_a_multibyte_character() -> None:
    # "é" is two bytes: a 2-byte limit would fall inside the second one.
    assert truncate("aéé", 2) == "a… [truncated 4 of 5 bytes]"
    assert truncate("😀x", 3) == "… [truncated 5 of 5 bytes]"


def test_non_string_result_is_json_encoded_before_cutting() -> None:
    result = truncate({"items": list(range(20))}, 10)
    assert result == '{"items":[… [truncated 51 of 61 bytes]'


@given(st.text(), st.integers(min_value=1, max_value=64))
def test_truncated_text_is_a_prefix_within_the_limit_and_counts_add_up(
    text: str, max_bytes: int
) -> None:
    result = truncate(text, max_bytes)
    assert isinstance(result, str)
    match = NOTE.search(result)
    if match is None:
        assert result == text
        assert len(text.encode()) <= max_bytes
        return
    kept = result[: match.start()]
    cut, total = int(match.group(1)), int(match.group(2))
    assert text.startswith(kept)
    assert len(kept.encode()) <= max_bytes
    assert total == len(text.encode())
    assert cut == total - len(kept.encode())
    # The cut is as late as it can be: one more character would not fit.
    assert len(text[: len(kept) + 1].encode()) > max_bytes


@given(st.lists(st.recursive(st.none() | st.integers() | st.text(), st.lists, max_leaves=10)))
def test_truncated_json_is_a_prefix_of_the_compact_encoding(value: JsonValue) -> None:
    encoded = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    result = truncate(value, 8)
    if result is value:
        assert len(encoded.encode()) <= 8
    else:
        assert isinstance(result, str)
        assert encoded.startswith(result[: NOTE.search(result).start()])  # type: ignore[union-attr]


async def test_middleware_truncates_what_the_tool_returns(echo: FakeTool) -> None:
    registry = ToolRegistry([echo], middleware=[truncate_output(5)])
    assert await registry.call("echo", {"text": "hello world"}) == (
        '{"tex… [truncated 17 of 22 bytes]'
    )


@pytest.mark.parametrize("max_bytes", [0, -3])
def test_limit_must_be_positive(max_bytes: int) -> None:
    with pytest.raises(ValueError, match="positive"):
        truncate_output(max_bytes)
