"""An answer nested deeper than Python writes JSON: a provider error or a call, never a crash."""

from __future__ import annotations

import pytest
from pydantic import JsonValue

from neuron_provider_ollama._wire import parse_chat_response
from neuron_turn import ToolUsePart
from neuron_turn.loop.provider_errors import ProviderResponseError

from ._support import chat_body


def nested(depth: int) -> JsonValue:
    value: JsonValue = []
    for _ in range(depth):
        value = [value]
    return value


def test_a_malformed_body_nested_too_deep_to_quote_is_a_response_error() -> None:
    # json.loads reads a body a little shallower than the error's json.dumps, deeper
    # in the stack, can write: the bare RecursionError escaped the provider.
    data = {"message": "not an object", "x": nested(100_000)}

    with pytest.raises(ProviderResponseError, match="no 'message' object"):
        parse_chat_response(data, requested_model="m", fallback_salt="s")


def test_a_call_with_arguments_nested_too_deep_to_hash_still_gets_an_id() -> None:
    call = {"function": {"name": "f", "arguments": {"a": nested(100_000)}}}

    response = parse_chat_response(
        chat_body("", tool_calls=[call, call]), requested_model="m", fallback_salt="s"
    )

    first, second = [part for part in response.content if isinstance(part, ToolUsePart)]
    assert first.id.startswith("call_0_") and second.id.startswith("call_1_")
