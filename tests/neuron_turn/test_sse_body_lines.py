"""`body_lines`: a body's lines as event streams and NDJSON break them, however chunked."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from neuron_turn.loop.sse import body_lines, text_lines


async def _chunks(chunks: list[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


def _lines(*chunks: bytes) -> list[str]:
    async def collect() -> list[str]:
        return [line async for line in body_lines(_chunks(list(chunks)))]

    return asyncio.run(collect())


@pytest.mark.parametrize(
    "chunks",
    [
        [b"a\r\nb\rc\nd"],
        [b"a\r", b"\nb\r", b"c\n", b"d"],
        [b"a\r", b"", b"\nb\rc\nd"],
    ],
)
def test_lines_break_at_cr_lf_cr_and_lf_wherever_the_chunks_are_cut(chunks: list[bytes]) -> None:
    assert _lines(*chunks) == ["a", "b", "c", "d"]


def test_blank_lines_are_kept_for_they_end_events() -> None:
    assert _lines(b"data: 1\n\ndata: 2\r\n\r\n") == ["data: 1", "", "data: 2", ""]


def test_unicode_separators_and_control_characters_do_not_break_a_line() -> None:
    text = "a\u2028b\u2029c\x85d\x0be\x0cf\x1cg"
    assert _lines(text.encode() + b"\n") == [text]


def test_a_character_cut_between_chunks_is_decoded_whole() -> None:
    encoded = "é\u2028".encode()
    assert _lines(*(encoded[i : i + 1] for i in range(len(encoded))), b"\n") == ["é\u2028"]


def test_bytes_that_are_no_utf8_become_replacement_characters() -> None:
    assert _lines(b"a\xffb\n\xe2\x80") == ["a\ufffdb", "\ufffd"]


def test_an_empty_body_has_no_lines() -> None:
    assert _lines() == []
    assert _lines(b"") == []


def test_a_body_read_whole_splits_as_one_read_in_chunks() -> None:
    text = "data: a\u2028b\r\n\r\ndata: c\x85\rdata: d\n"
    assert text_lines(text) == ["data: a\u2028b", "", "data: c\x85", "data: d", ""]
