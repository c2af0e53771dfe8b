"""Helpers for providers showing the files a tool returned (`ToolResultPart.files`).

Anthropic takes images and documents inside a tool result. Chat Completions
and Ollama take only text there, so the files go in a user message right
after the results, introduced by `files_intro` so the model knows which call
they came from (as pydantic-ai and the OpenAI Agents SDK send them). A file
an API cannot show at all is never dropped silently: the model is told, in
the file's place, what it was and why it is not shown (`unseen_file_note`),
so it does not answer as if it had seen it. The same holds for a file a model
made (`ImageGeneration`), which most APIs take in no assistant message
(`made_file_note`, `made_files_as_notes`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from .documents import file_kind
from .provider import (
    ContentPart,
    DocumentPart,
    ImagePart,
    ProviderMessage,
    TextPart,
    ToolResultPart,
)

__all__ = [
    "describe_file",
    "files_intro",
    "made_file_as_text",
    "made_file_note",
    "made_files_as_notes",
    "unseen_file_note",
]


def describe_file(file: ImagePart | DocumentPart) -> str:
    """A file named for the model: `an image (image/png)`, `the audio call.wav (audio/wav)`."""
    if isinstance(file, ImagePart):
        return f"an image ({file.media_type})"
    kind = file_kind(file.media_type)
    if file.name:
        return f"the {kind} {file.name} ({file.media_type})"
    return f"{_UNNAMED[kind]} ({file.media_type})"


_UNNAMED: Final = {"document": "a document", "audio": "an audio file", "video": "a video"}


def files_intro(result: ToolResultPart, tool_name: str | None = None) -> str:
    """The text before a result's files in the message that carries them."""
    call = f"{tool_name} (call {result.tool_use_id})" if tool_name else result.tool_use_id
    count = len(result.files)
    what = "this file" if count == 1 else f"these {count} files"
    return f"The tool call {call} returned {what} with its result:"


def made_file_note(file: ImagePart | DocumentPart) -> str:
    """The text sent in place of a file a model made, to an API that takes none in its own turns.

    Why: Anthropic and OpenAI refuse an image in an assistant message, so a
    session whose image another model made (`ImageGeneration`) would fail every
    later call there; the note keeps the turn's place in the conversation.
    """
    return f"[Here the assistant made {describe_file(file)}, which is not shown again]"


def made_file_as_text(part: ContentPart) -> ContentPart:
    """`part` of an assistant message, a file it holds as the note naming it (`made_file_note`)."""
    if isinstance(part, ImagePart | DocumentPart):
        return TextPart(made_file_note(part))
    return part


def made_files_as_notes(messages: Sequence[ProviderMessage]) -> Sequence[ProviderMessage]:
    """`messages` with each assistant message's files as notes; `messages` itself if none has one.

    For providers whose API takes no file from the assistant (or none at all).
    """
    if not any(
        message.role == "assistant" and isinstance(part, ImagePart | DocumentPart)
        for message in messages
        for part in message.content
    ):
        return messages
    return [
        replace(message, content=[made_file_as_text(part) for part in message.content])
        if message.role == "assistant"
        else message
        for message in messages
    ]


def unseen_file_note(file: ImagePart | DocumentPart, why: str) -> str:
    """The text sent in place of a file the API cannot show, saying what it was and why."""
    return f"[The tool returned {describe_file(file)}, which is not shown: {why}]"
