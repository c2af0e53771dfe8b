"""Any answer body or stream, however broken, is a response or a `ProviderError`, never else.

The model and the server are untrusted input: Hypothesis breaks a well-formed
Gemini answer (text, a signed call, a thought, usage) field by field, with the
shared hostile values of `tests/plugins/test_hostile_answers.py` (wrong types,
huge numbers, NaN, lone surrogates, nesting past any limit).
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from neuron_provider_google import GoogleProvider
from neuron_turn import ProviderMessage, ProviderRequest, ProviderResponse, TextPart
from neuron_turn.loop.provider_errors import ProviderError
from tests.plugins.test_hostile_answers import _SETTINGS, _broken, _client, _json

from ._support import call, response, text

_BODY = response(
    text("Plan.", thought=True),
    text("Hi"),
    call("add", {"a": 1}, thoughtSignature="c2ln"),
)
_CHUNKS = [
    response(text("Plan.", thought=True), finish=None),
    response(text("Hi"), finish=None),
    response(call("add", {"a": 1}, id="c1", thoughtSignature="c2ln"), finish="STOP"),
]
_REQUEST = ProviderRequest(model="", messages=[ProviderMessage("user", [TextPart("Hi")])])


def _provider(content: bytes, content_type: str = "application/json") -> GoogleProvider:
    return GoogleProvider("gemini-2.5-flash", client=_client(content, content_type), api_key="k-x")


async def _answer(body: Any) -> None:
    try:
        answer = await _provider(_json(body).encode("utf-8", "surrogatepass")).complete(_REQUEST)
    except ProviderError as exc:
        assert exc.message, exc  # says what was wrong
        return
    assert isinstance(answer, ProviderResponse)


async def _streamed(chunks: Any) -> None:
    events = chunks if isinstance(chunks, list) else [chunks]
    body = "".join(f"data: {_json(chunk)}\r\n\r\n" for chunk in events)
    provider = _provider(body.encode("utf-8", "surrogatepass"), "text/event-stream")
    final: list[ProviderResponse] = []
    try:
        async for event in provider.stream(_REQUEST):
            if isinstance(event, ProviderResponse):
                final.append(event)
    except ProviderError as exc:
        assert exc.message, exc
        return
    assert len(final) == 1  # a stream that did not fail ends with its one response


@settings(_SETTINGS, max_examples=150)
@example({**_BODY, "candidates": [{"content": {"parts": [{"functionCall": {"args": []}}]}}]})
@example({**_BODY, "usageMetadata": {"promptTokenCount": "many", "thoughtsTokenCount": 1e400}})
@example({**_BODY, "candidates": [{"content": {"parts": "x"}, "finishReason": []}]})
@example({"candidates": [], "promptFeedback": {"blockReason": 7, "blockReasonMessage": []}})
@example({**_BODY, "candidates": [{"content": {"parts": [{"text": "", "thoughtSignature": {}}]}}]})
@given(_broken(_BODY))
def test_a_broken_answer_body_is_a_response_or_a_provider_error(body: Any) -> None:
    asyncio.run(_answer(body))


@settings(_SETTINGS, max_examples=150)
@given(_broken(_CHUNKS))
def test_a_broken_stream_is_deltas_and_a_response_or_a_provider_error(chunks: Any) -> None:
    asyncio.run(_streamed(chunks))


@given(st.just(None))
@settings(_SETTINGS, max_examples=1)
def test_the_good_answer_itself_is_read(_: None) -> None:
    asyncio.run(_answer(_BODY))
    asyncio.run(_streamed(_CHUNKS))
