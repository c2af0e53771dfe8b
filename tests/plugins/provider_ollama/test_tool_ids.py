from __future__ import annotations

import re

from neuron_provider_ollama._tool_ids import synthesise_tool_call_id
from neuron_provider_ollama._wire import parse_chat_response
from neuron_turn import ToolUsePart

from ._support import chat_body

WEATHER = {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}


def ids_of(data: dict[str, object], *, salt: str = "n1") -> list[str]:
    response = parse_chat_response(data, requested_model="m", fallback_salt=salt)
    return [part.id for part in response.content if isinstance(part, ToolUsePart)]


def test_id_follows_the_documented_scheme() -> None:
    [call_id] = ids_of(chat_body("", tool_calls=[WEATHER]))
    assert re.fullmatch(r"call_0_[0-9a-f]{16}", call_id)


def test_two_identical_calls_in_one_response_get_different_ids() -> None:
    first, second = ids_of(chat_body("", tool_calls=[WEATHER, WEATHER]))
    assert first != second
    assert first.startswith("call_0_")
    assert second.startswith("call_1_")


def test_the_same_call_in_two_responses_gets_different_ids() -> None:
    [first] = ids_of(chat_body("", tool_calls=[WEATHER], created_at="2026-11-20T10:00:00.1Z"))
    [second] = ids_of(chat_body("", tool_calls=[WEATHER], created_at="2026-11-20T10:00:02.7Z"))
    assert first != second


def test_parsing_the_same_response_twice_gives_the_same_ids() -> None:
    data = chat_body("", tool_calls=[WEATHER, WEATHER])
    assert ids_of(data, salt="n1") == ids_of(data, salt="n2")


def test_without_created_at_the_fallback_salt_keeps_responses_apart() -> None:
    data = chat_body("", tool_calls=[WEATHER])
    del data["created_at"]
    assert ids_of(data, salt="n1") != ids_of(data, salt="n2")


def test_an_id_given_by_the_server_is_kept() -> None:
    call = {"id": "call_x1y2z3", "function": {"index": 0, **WEATHER["function"]}}
    assert ids_of(chat_body("", tool_calls=[call])) == ["call_x1y2z3"]


def test_id_depends_on_name_and_arguments() -> None:
    base = synthesise_tool_call_id(salt="s", position=0, name="f", arguments={"a": 1})
    assert base == synthesise_tool_call_id(salt="s", position=0, name="f", arguments={"a": 1})
    assert base != synthesise_tool_call_id(salt="s", position=0, name="g", arguments={"a": 1})
    assert base != synthesise_tool_call_id(salt="s", position=0, name="f", arguments={"a": 2})
