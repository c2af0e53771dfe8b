"""A long answer held back as a possible call streams in linear time."""

from __future__ import annotations

import time

import httpx

from neuron_turn.loop.events import TextDelta
from neuron_turn.loop.provider import TextPart

from ._support import completion
from .test_streaming import calculator_request, sse, stream_with


async def test_a_long_answer_starting_like_a_call_is_held_in_linear_time() -> None:
    # Each held delta joined all the text held before it again: 20 000 took 5 s.
    pieces = ["{", *["abcd"] * 20_000]
    text = "".join(pieces)
    retried = httpx.Response(200, json=completion(text))

    started = time.perf_counter()
    deltas, final, _ = await stream_with([sse(*pieces), retried], calculator_request())
    elapsed = time.perf_counter() - started

    assert elapsed < 2.0
    # Never a call: the text read again after the retry is the answer, told once.
    assert final.content == [TextPart(text)]
    assert deltas == [TextDelta(text)]
