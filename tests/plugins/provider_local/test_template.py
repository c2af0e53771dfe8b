"""The tool-calling template, rendered with Jinja2 as llama.cpp renders it.

`test_smoke.py` checks that the embedded server renders these same prompts.
"""

from __future__ import annotations

import json
from typing import Any

from neuron_provider_local import tool_calling_template

from ._support import render, wire

CALCULATOR = wire("calculator")
CLOCK = wire("clock")


def call(name: str, arguments: Any, call_id: str = "call_1") -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def asked(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": list(calls)}


def answered(content: str, call_id: str = "call_1") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


QUESTION = {"role": "user", "content": "What is 17*23?"}


def test_without_tools_it_is_plain_chatml_with_a_default_system_prompt() -> None:
    assert render([{"role": "user", "content": "Hi"}], None) == (
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
        "<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\n"
    )


def test_system_messages_are_joined_into_the_one_system_prompt() -> None:
    prompt = render(
        [
            {"role": "system", "content": "Be brief."},
            {"role": "system", "content": [{"type": "text", "text": "Be kind."}]},
            {"role": "user", "content": "Hi"},
        ],
        None,
    )
    assert prompt.startswith("<|im_start|>system\nBe brief.\nBe kind.<|im_end|>\n")
    assert prompt.count("<|im_start|>system") == 1


def test_one_tool_is_listed_as_json_with_the_bare_object_instruction() -> None:
    prompt = render([QUESTION], [CALCULATOR])
    assert prompt == (
        "<|im_start|>system\n"
        "You are a helpful assistant.\n\n"
        "You can use this tool:\n"
        f"{json.dumps(CALCULATOR['function'])}\n\n"
        "To use a tool, reply with only one JSON object and nothing else:\n"
        '{"name": "<tool name>", "arguments": {"<argument name>": <value>}}\n'
        "If you do not need a tool, answer in plain text.<|im_end|>\n"
        "<|im_start|>user\nWhat is 17*23?<|im_end|>\n"
        "<|im_start|>assistant\n"
    )


def test_several_tools_are_listed_one_per_line() -> None:
    prompt = render([QUESTION], [CALCULATOR, CLOCK])
    assert "You can use these tools:\n" in prompt
    assert f"{json.dumps(CALCULATOR['function'])}\n{json.dumps(CLOCK['function'])}\n\n" in prompt


def test_a_call_is_rendered_as_the_bare_json_object_asked_for() -> None:
    prompt = render([QUESTION, asked(call("calculator", '{"expression": "17*23"}'))], None)
    assert (
        '<|im_start|>assistant\n{"name": "calculator", "arguments": {"expression": "17*23"}}'
        "<|im_end|>\n"
    ) in prompt


def test_object_arguments_are_rendered_as_json_too() -> None:
    prompt = render([QUESTION, asked(call("calculator", {"expression": "17*23"}))], None)
    assert '{"name": "calculator", "arguments": {"expression": "17*23"}}<|im_end|>' in prompt


def test_parallel_calls_go_one_per_line() -> None:
    prompt = render(
        [QUESTION, asked(call("calculator", "{}", "a"), call("clock", "{}", "b"))], None
    )
    assert (
        '<|im_start|>assistant\n{"name": "calculator", "arguments": {}}\n'
        '{"name": "clock", "arguments": {}}<|im_end|>'
    ) in prompt


def test_a_result_becomes_a_plain_instruction_and_the_tools_leave_the_prompt() -> None:
    messages = [QUESTION, asked(call("calculator", '{"expression": "17*23"}')), answered("391")]
    prompt = render(messages, [CALCULATOR])
    assert prompt.endswith(
        "<|im_start|>user\n"
        "Tool result: 391. Now answer the user in plain text, in one sentence.<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    # Left in, they make the model call the tool again instead of answering.
    assert prompt.startswith("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n")
    assert "You can use" not in prompt


def test_a_failure_is_reported_and_the_tools_stay_to_correct_the_call() -> None:
    messages = [
        QUESTION,
        asked(call("calculator", '{"expression": "17^23"}')),
        answered("Error: '^' is not supported; write powers with **"),
    ]
    prompt = render(messages, [CALCULATOR])
    assert (
        "<|im_start|>user\nThe tool failed: '^' is not supported; write powers with **. "
        "Fix the arguments and call the tool again, or answer the user in plain text."
        "<|im_end|>\n"
    ) in prompt
    assert "You can use this tool:" in prompt


def test_tools_come_back_once_the_user_speaks_again() -> None:
    messages = [
        QUESTION,
        asked(call("calculator", '{"expression": "17*23"}')),
        answered("391"),
        {"role": "assistant", "content": "17*23 is 391."},
        {"role": "user", "content": "And 2**10?"},
    ]
    prompt = render(messages, [CALCULATOR])
    assert "You can use this tool:" in prompt
    assert "<|im_start|>assistant\n17*23 is 391.<|im_end|>\n" in prompt


def test_content_parts_are_read_as_their_text() -> None:
    prompt = render(
        [
            {
                "role": "user",
                "content": [{"type": "text", "text": "Hi "}, {"type": "text", "text": "there"}],
            }
        ],
        None,
    )
    assert "<|im_start|>user\nHi there<|im_end|>" in prompt


def test_non_ascii_stays_as_it_is() -> None:
    text = "Combien font 2 \u00d7 3 ? \u00e9"
    prompt = render([{"role": "user", "content": text}], None)
    assert text in prompt


def test_the_template_is_the_packaged_file() -> None:
    template = tool_calling_template()
    assert template is tool_calling_template()  # read once
    assert template.startswith("{#- neuron-provider-local's tool-calling chat template")
