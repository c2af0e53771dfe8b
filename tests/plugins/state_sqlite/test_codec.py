from __future__ import annotations

import pytest

from layer0 import CustomScope, SessionScope
from neuron_state_sqlite._codec import encode_value, match_expression, scope_key


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", None),
        ("  \t\n ", None),
        ("\x00", None),
        ("word", '"word"'),
        ("two words", '"two" OR "words"'),
        ('say "hi"', '"say" OR """hi"""'),
        ("foo:bar AND (", '"foo:bar" OR "AND" OR "("'),
        ("a\x00b", '"a" OR "b"'),
    ],
)
def test_match_expression_quotes_every_word(query: str, expected: str | None) -> None:
    assert match_expression(query) == expected


def test_scope_keys_are_the_canonical_wire_form() -> None:
    assert scope_key("global") == '"global"'
    assert scope_key(SessionScope(id="a")) == '{"session":"a"}'
    assert scope_key(CustomScope(name="a")) == '{"custom":"a"}'


def test_encoding_keeps_the_strings_of_a_value_for_search() -> None:
    text, body = encode_value(
        {"b": ["one", 2, {"c": "three"}], "a": None}, scope='"global"', key="k"
    )
    assert text == '{"a":null,"b":["one",2,{"c":"three"}]}'
    assert body == "one\nthree"
