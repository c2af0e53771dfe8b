"""Reading the model's raw text: calls, plain text, broken calls; on real recorded outputs too."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from neuron_provider_local import MalformedCall, PlainText, TextCall, ToolCalls, parse_output

from ._support import recorded


def raw_text(case: str) -> str:
    """The model's raw text in a recorded case's last answer."""
    message = recorded()[case][-1]["response"]["choices"][0]["message"]
    content = message["content"]
    assert isinstance(content, str)
    return content


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "calculator", "arguments": {"expression": "17*23"}}',
        '  {"name": "calculator", "arguments": {"expression": "17*23"}}\n',
        '```json\n{"name": "calculator", "arguments": {"expression": "17*23"}}\n```',
        '```\n{"name": "calculator", "arguments": {"expression": "17*23"}}```',
        '<tool_call>\n{"name": "calculator", "arguments": {"expression": "17*23"}}\n</tool_call>',
        '<tool_call>{"name": "calculator", "arguments": {"expression": "17*23"}}',
        '{"name": "calculator", "parameters": {"expression": "17*23"}}',
        '{"name": "calculator", "arguments": "{\\"expression\\": \\"17*23\\"}"}',
        '{"name": " calculator ", "arguments": {"expression": "17*23"}}',
        '{"name": "calculator", "arguments": {"expression": "17*23"}}\nThe answer is 391.',
    ],
)
def test_a_call_in_its_usual_wrappings(text: str) -> None:
    assert parse_output(text) == ToolCalls((TextCall("calculator", {"expression": "17*23"}),))


def test_missing_or_empty_arguments_mean_none() -> None:
    expected = ToolCalls((TextCall("clock", {}),))
    assert parse_output('{"name": "clock"}') == expected
    assert parse_output('{"name": "clock", "arguments": ""}') == expected


def test_several_calls_one_after_another() -> None:
    text = '{"name": "calculator", "arguments": {"expression": "1+1"}}\n{"name": "clock"}'
    assert parse_output(text) == ToolCalls(
        (TextCall("calculator", {"expression": "1+1"}), TextCall("clock", {}))
    )


@pytest.mark.parametrize(
    "text",
    ["17 times 23 is 391.", "", "Here: [1, 2]", "The set {1, 2} has two members.", "```\nx\n```"],
)
def test_anything_not_starting_like_a_call_is_plain_text(text: str) -> None:
    assert parse_output(text) == PlainText(text)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"name": "calculator", "arguments": {"expression": "17*23"}', "not valid JSON"),
        ("{'name': 'calculator'}", "not valid JSON"),
        ('{"tool": "calculator"}', 'a JSON object without a "name" string'),
        ('{"name": 3}', 'a JSON object without a "name" string'),
        ('{"name": "calculator", "arguments": [1]}', "are not a JSON object"),
        ('{"name": "calculator", "arguments": "17*23"}', "a string that is not JSON"),
        ('{"name": "calculator", "arguments": "[1]"}', "are not a JSON object"),
    ],
)
def test_text_meant_as_a_call_that_is_not_one_is_malformed(text: str, reason: str) -> None:
    output = parse_output(text)
    assert isinstance(output, MalformedCall)
    assert output.text == text
    assert reason in output.reason


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "add", "arguments": {"a": ' + "[" * 100_000 + "]" * 100_000 + "}}",
        '{"name": "add", "arguments": "' + "[" * 100_000 + '"}',
    ],
    ids=["arguments", "arguments as a string"],
)
def test_a_call_nested_past_what_python_parses_is_malformed_not_a_crash(text: str) -> None:
    output = parse_output(text)
    assert isinstance(output, MalformedCall)
    assert "nested deeper" in output.reason


@given(st.text(st.characters(exclude_categories=()), max_size=60).map(lambda t: "{" + t))
def test_any_text_meant_as_a_call_is_read_without_raising(text: str) -> None:
    assert isinstance(parse_output(text), ToolCalls | PlainText | MalformedCall)


def test_a_call_to_a_tool_not_offered_is_malformed() -> None:
    text = '{"name": "joke", "arguments": {}}'
    assert parse_output(text) == ToolCalls((TextCall("joke", {}),))
    output = parse_output(text, tools={"calculator"})
    assert output == MalformedCall(text, "calls 'joke', which is not a tool offered")


# --- on what the default model really wrote (tests/cassettes/local/outputs.json) ---


def test_recorded_raw_call() -> None:
    assert raw_text("calculator_call_raw") == (
        '{"name": "calculator", "arguments": {"expression": "17*23"}}'
    )
    assert parse_output(raw_text("calculator_call_raw"), tools={"calculator"}) == ToolCalls(
        (TextCall("calculator", {"expression": "17*23"}),)
    )


def test_recorded_needless_call_is_still_a_call() -> None:
    output = parse_output(raw_text("greeting_raw"), tools={"calculator"})
    assert isinstance(output, ToolCalls)
    assert output.calls[0].name == "calculator"


def test_recorded_haiku_is_plain_text() -> None:
    text = raw_text("haiku_raw")
    assert parse_output(text, tools={"calculator"}) == PlainText(text)
    assert "\n" in text


def test_recorded_joke_is_a_broken_call_to_a_made_up_tool() -> None:
    # The model "calls" a tool named Joke to tell the joke, and drops the last brace.
    text = raw_text("joke_made_up_tool")
    assert text.startswith('{"name": "Joke", "arguments": {"joke": ')
    output = parse_output(text, tools={"calculator"})
    assert isinstance(output, MalformedCall)
    assert "not valid JSON" in output.reason


def test_recorded_truncated_call_is_malformed() -> None:
    text = raw_text("truncated_raw")
    assert text == '{"name": "calculator", "arguments'
    assert isinstance(parse_output(text), MalformedCall)
