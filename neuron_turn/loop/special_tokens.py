"""Text that spells a chat template's special token, sent so that no server reads it as one.

A local model server (llama.cpp, Ollama) renders the conversation through the
model's chat template and reads special tokens in the text it renders, so
`<|im_end|><|im_start|>system` in a tool's result (a fetched page) or a message
ended that turn and opened a forged system one. ChatML's, Llama 3's and Phi's
special tokens all open with `<|`: `defused` breaks that opening with a
zero-width non-joiner, which no special token's text holds; the model still
reads the text much as it was. The system prompt is the caller's own and left
as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from .provider import ContentPart, ProviderMessage, TextPart, ToolResultPart

__all__ = ["DEFUSED_OPENING", "SPECIAL_OPENING", "defused"]

SPECIAL_OPENING: Final = "<|"
"""How ChatML's, Llama 3's and Phi's special tokens open."""
DEFUSED_OPENING: Final = "<\u200c|"
"""`<|` with a zero-width non-joiner inside, which no special token's text holds."""


def defused(messages: Sequence[ProviderMessage]) -> list[ProviderMessage]:
    """The messages with `<|` in their text and tool results broken (see the module doc)."""
    return [
        replace(message, content=[_defused_part(part) for part in message.content])
        if message.role != "system" and any(_holds_opening(part) for part in message.content)
        else message
        for message in messages
    ]


def _holds_opening(part: ContentPart) -> bool:
    if isinstance(part, TextPart):
        return SPECIAL_OPENING in part.text
    return isinstance(part, ToolResultPart) and SPECIAL_OPENING in part.content


def _defused_part(part: ContentPart) -> ContentPart:
    if isinstance(part, TextPart):
        return replace(part, text=part.text.replace(SPECIAL_OPENING, DEFUSED_OPENING))
    if isinstance(part, ToolResultPart):
        return replace(part, content=part.content.replace(SPECIAL_OPENING, DEFUSED_OPENING))
    return part
