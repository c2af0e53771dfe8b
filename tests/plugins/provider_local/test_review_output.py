"""Hostile model text read as a call: whitespace runs cost linear time, not quadratic."""

from __future__ import annotations

import time

import pytest

from neuron_provider_local.output import MalformedCall, ToolCalls, parse_output


@pytest.mark.parametrize("run", [" " * 100_000, " \n" * 50_000])
def test_a_tagged_call_with_a_long_whitespace_run_is_read_in_linear_time(run: str) -> None:
    # 20 000 spaces took 12 s: the tag pattern retried the run at every place in it.
    text = "<tool_call>{" + run + "x"

    started = time.perf_counter()
    output = parse_output(text, tools={"calculator"})

    assert time.perf_counter() - started < 1.0
    assert isinstance(output, MalformedCall)


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name": "calculator", "arguments": {"x": 1}}</tool_call>',
        '<tool_call>\n {"name": "calculator", "arguments": {"x": 1}} \n</tool_call>',
        '<tool_call>{"name": "calculator", "arguments": {"x": 1}}',
    ],
)
def test_a_tagged_call_is_still_read_with_or_without_its_closing_tag(text: str) -> None:
    output = parse_output(text, tools={"calculator"})

    assert isinstance(output, ToolCalls)
    assert [(call.name, call.arguments) for call in output.calls] == [("calculator", {"x": 1})]
