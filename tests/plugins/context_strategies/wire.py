"""Each provider's wire rules for a conversation, checked on the body its plugin builds."""

from __future__ import annotations

from typing import Any

from neuron_provider_anthropic._wire import build_body
from neuron_provider_openai._wire import request_body
from neuron_turn import ProviderRequest


def anthropic_problems(request: ProviderRequest) -> list[str]:
    """What the Messages API would refuse: the first turn not the user's, two turns of one
    role in a row, a tool_use not answered in the next turn, a tool_result whose tool_use
    is not in the turn before, tool_result blocks after other blocks."""
    body: Any = build_body(request, model="m", max_tokens=100)
    messages = body["messages"]
    problems: list[str] = []
    if not messages or messages[0]["role"] != "user":
        problems.append("the first message is not the user's")
    for i, message in enumerate(messages):
        if i and messages[i - 1]["role"] == message["role"]:
            problems.append(f"messages {i - 1} and {i} are both {message['role']}")
        blocks = message["content"]
        if message["role"] == "assistant":
            asked = {b["id"] for b in blocks if b["type"] == "tool_use"}
            answered = set()
            if i + 1 < len(messages):
                answered = {
                    b["tool_use_id"]
                    for b in messages[i + 1]["content"]
                    if b["type"] == "tool_result"
                }
            if asked - answered:
                problems.append(f"tool_use {sorted(asked - answered)} not answered next")
        else:
            other_first = False
            for block in blocks:
                if block["type"] != "tool_result":
                    other_first = True
                elif other_first:
                    problems.append(f"message {i}: a tool_result after another block")
                    break
            results = {b["tool_use_id"] for b in blocks if b["type"] == "tool_result"}
            before = set()
            if i and messages[i - 1]["role"] == "assistant":
                before = {b["id"] for b in messages[i - 1]["content"] if b["type"] == "tool_use"}
            if results - before:
                problems.append(f"tool_result {sorted(results - before)} has no tool_use before")
    return problems


def openai_problems(request: ProviderRequest) -> list[str]:
    """What Chat Completions would refuse: a tool_call not answered by the tool messages
    right after it, or a tool message answering no pending call."""
    body: Any = request_body(request, model="m", system_role="system")
    problems: list[str] = []
    pending: set[str] = set()
    for i, message in enumerate(body["messages"]):
        if message["role"] == "tool":
            if message["tool_call_id"] not in pending:
                problems.append(f"message {i}: tool message answers no pending call")
            pending.discard(message["tool_call_id"])
            continue
        if pending:
            problems.append(f"message {i}: calls {sorted(pending)} not answered")
            pending = set()
        if message["role"] == "assistant":
            pending = {call["id"] for call in message.get("tool_calls") or []}
    if pending:
        problems.append(f"calls {sorted(pending)} not answered at the end")
    return problems
