"""Documents in a message (a PDF, say): the custom block that carries them over layer0.

layer0 content names text, images, tool calls and results; a document rides
in a custom block of content type `DOCUMENT_TYPE` (`neuron_tool.files`
defines it, so that a tool can return one), which every layer0 reader (the
Rust reference included) takes, and the loop turns into a `DocumentPart` for
the providers: Anthropic's `document` block, OpenAI's `file` part. Audio
and video ride in the same block with their media type (Gemini's inline
data, OpenAI's `input_audio`). A provider whose API takes no such file
refuses the request, saying so, rather than drop what the user sent.

    {"type": "custom", "content_type": "neuron.document",
     "data": {"source": {"type": "base64", "data": "JVBERi0..."},
              "media_type": "application/pdf", "name": "report.pdf"}}
"""

from __future__ import annotations

from pydantic import JsonValue

from layer0 import CustomBlock
from neuron_tool.files import DOCUMENT_TYPE, document_block, document_of, source_document_block

from .provider import DocumentPart

__all__ = [
    "DOCUMENT_TYPE",
    "document_block",
    "document_from_block",
    "document_to_block",
    "file_kind",
]


def document_to_block(part: DocumentPart) -> CustomBlock:
    """`part` as the custom block layer0 content carries."""
    return source_document_block(part.source, part.media_type, part.name)


def document_from_block(data: JsonValue) -> DocumentPart | None:
    """The document a `DOCUMENT_TYPE` block's data holds; None when it holds none."""
    document = document_of(data)
    return None if document is None else DocumentPart(*document)


def file_kind(media_type: str) -> str:
    """What a document block holds, for people and models: `audio`, `video` or `document`."""
    kind = media_type.partition("/")[0]
    return kind if kind in ("audio", "video") else "document"
