"""Any Responses API body or stream, however broken, is a response or a `ProviderError`.

The shared hostile values of `tests/plugins/test_hostile_answers.py` (wrong
types, huge numbers, NaN, lone surrogates, nesting past any limit) break a
well-formed answer (reasoning, text, a function call, usage) field by field.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import example, given, settings

from neuron_provider_openai import OpenAIResponsesProvider
from neuron_turn import ProviderMessage, ProviderRequest, ProviderResponse, TextPart
from neuron_turn.loop.provider_errors import ProviderError
from tests.plugins.test_hostile_answers import _SETTINGS, _broken, _client, _json

from ._responses_support import function_call, message, reasoning, response

_BODY = response(reasoning("Plan."), message("Hi"), function_call("call_1", "add", '{"a": 1}'))
_ADDED = {**message(""), "status": "in_progress", "content": []}
_CALL = function_call("call_1", "add", '{"a": 1}', item_id="fc_1")
_EVENTS: list[Any] = [
    {"type": "response.created", "response": response(status="in_progress", output=[])},
    {"type": "response.output_item.added", "output_index": 0, "item": _ADDED},
    {
        "type": "response.output_text.delta",
        "item_id": "msg_1",
        "output_index": 0,
        "content_index": 0,
        "delta": "Hi",
    },
    {"type": "response.output_item.done", "output_index": 0, "item": message("Hi")},
    {
        "type": "response.output_item.added",
        "output_index": 1,
        "item": {**_CALL, "arguments": "", "status": "in_progress"},
    },
    {
        "type": "response.function_call_arguments.delta",
        "item_id": "fc_1",
        "output_index": 1,
        "delta": '{"a": 1}',
    },
    {"type": "response.output_item.done", "output_index": 1, "item": _CALL},
    {"type": "response.completed", "response": response(message("Hi"), _CALL)},
]
_REQUEST = ProviderRequest(model="", messages=[ProviderMessage("user", [TextPart("Hi")])])


def _provider(content: bytes, content_type: str = "application/json") -> OpenAIResponsesProvider:
    return OpenAIResponsesProvider("gpt-5-mini", client=_client(content, content_type), api_key="k")


async def _answer(body: Any) -> None:
    try:
        answer = await _provider(_json(body).encode("utf-8", "surrogatepass")).complete(_REQUEST)
    except ProviderError as exc:
        assert exc.message, exc  # says what was wrong
        return
    assert isinstance(answer, ProviderResponse)


async def _streamed(events: Any) -> None:
    events = events if isinstance(events, list) else [events]
    body = "".join(f"data: {_json(event)}\n\n" for event in events)
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


@settings(_SETTINGS, max_examples=200)
@example({**_BODY, "status": []})  # was a TypeError: a list is no set member
@example({**_BODY, "status": "in_progress", "id": "resp_1", "background": True, "error": None})
@example({**_BODY, "output": [{"type": ["web_search_call"]}]})
@example({**_BODY, "status": {"in_progress": 1}})
@given(_broken(_BODY))
def test_a_broken_responses_body_is_a_response_or_a_provider_error(body: Any) -> None:
    asyncio.run(_answer(body))


@settings(_SETTINGS, max_examples=200)
@example([{**_EVENTS[0], "type": []}, *_EVENTS[1:]])  # was a TypeError: a list is no set member
@example([*_EVENTS[:-1], {**_EVENTS[-1], "response": {**_EVENTS[-1]["response"], "status": []}}])
@given(_broken(_EVENTS))
def test_a_broken_responses_stream_is_deltas_and_a_response_or_a_provider_error(
    events: Any,
) -> None:
    asyncio.run(_streamed(events))
