"""Exchanges: the spans of a conversation that a context strategy keeps or drops whole.

Every model API rejects a tool result whose call is missing (and OpenAI a
call without its result), so an assistant message asking for tools and the
messages answering them form one exchange. Anthropic also requires the first
message to come from the user; `starts_with_user` puts a short note in front
when a cut leaves the conversation opening with the assistant.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from .provider import ProviderMessage, TextPart, ToolResultPart, ToolUsePart

__all__ = ["OMITTED_NOTE", "exchanges", "has_tool_result", "has_tool_use", "starts_with_user"]

OMITTED_NOTE: Final = "[Earlier messages were removed to fit the context window.]"
"""The text of the note put in front of a conversation whose start was cut."""


def has_tool_use(message: ProviderMessage) -> bool:
    """Whether `message` asks for a tool call."""
    return any(isinstance(part, ToolUsePart) for part in message.content)


def has_tool_result(message: ProviderMessage) -> bool:
    """Whether `message` carries a tool result."""
    return any(isinstance(part, ToolResultPart) for part in message.content)


def exchanges(messages: Sequence[ProviderMessage]) -> list[range]:
    """Split `messages` into consecutive index ranges that must be kept or dropped whole.

    An assistant message with tool calls spans to the last following message
    that carries results; every other message is a range of its own.
    """
    spans: list[range] = []
    i = 0
    while i < len(messages):
        end = i + 1
        if messages[i].role == "assistant" and has_tool_use(messages[i]):
            while (
                end < len(messages)
                and messages[end].role == "user"
                and has_tool_result(messages[end])
            ):
                end += 1
        spans.append(range(i, end))
        i = end
    return spans


def starts_with_user(messages: Sequence[ProviderMessage]) -> list[ProviderMessage]:
    """Return `messages`, with a note in front if the first non-system one is not a user's.

    A conversation opening with the assistant (or with tool results) is what a
    cut leaves; Anthropic refuses it, and the note tells the model why its
    memory starts midway.
    """
    first = next((m for m in messages if m.role != "system"), None)
    if first is None or (first.role == "user" and not has_tool_result(first)):
        return list(messages)
    at = next(i for i, m in enumerate(messages) if m.role != "system")
    note = ProviderMessage("user", [TextPart(OMITTED_NOTE)])
    return [*messages[:at], note, *messages[at:]]
