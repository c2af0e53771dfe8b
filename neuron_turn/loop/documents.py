"""Documents in a message (a PDF, say): the custom block that carries them over layer0.

layer0 content names text, images, tool calls and results; a document rides
in a custom block of content type `DOCUMENT_TYPE`, which every layer0 reader
(the Rust reference included) takes, and the loop turns into a
`DocumentPart` for the providers: Anthropic's `document` block, OpenAI's
`file` part. A provider whose API takes no documents refuses the request,
saying so, rather than drop what the user sent.

    {"type": "custom", "content_type": "neuron.document",
     "data": {"source": {"type": "base64", "data": "JVBERi0..."},
              "media_type": "application/pdf", "name": "report.pdf"}}
"""

from __future__ import annotations

import base64
from typing import Final

from pydantic import JsonValue

from layer0 import Base64Source, CustomBlock, UrlSource

from .provider import DocumentPart

__all__ = ["DOCUMENT_TYPE", "document_block", "document_from_block", "document_to_block"]

DOCUMENT_TYPE: Final = "neuron.document"
"""The custom block content type of a document."""


def document_block(
    data: bytes | None = None,
    *,
    url: str | None = None,
    media_type: str = "application/pdf",
    name: str | None = None,
) -> CustomBlock:
    """A document for a message: its bytes (`data`) or where the model fetches it (`url`).

    Raises:
        ValueError: neither or both of `data` and `url` given.
    """
    if (data is None) == (url is None):
        raise ValueError("a document is given by its bytes (data=) or its URL (url=), not both")
    source: Base64Source | UrlSource = (
        UrlSource(url=url)
        if url is not None
        else Base64Source(data=base64.b64encode(data or b"").decode("ascii"))
    )
    return document_to_block(DocumentPart(source, media_type, name))


def document_to_block(part: DocumentPart) -> CustomBlock:
    """`part` as the custom block layer0 content carries."""
    data: dict[str, JsonValue] = {
        "source": part.source.model_dump(mode="json"),
        "media_type": part.media_type,
    }
    if part.name is not None:
        data["name"] = part.name
    return CustomBlock(content_type=DOCUMENT_TYPE, data=data)


def document_from_block(data: JsonValue) -> DocumentPart | None:
    """The document a `DOCUMENT_TYPE` block's data holds; None when it holds none."""
    if not isinstance(data, dict):
        return None
    source, media_type, name = data.get("source"), data.get("media_type"), data.get("name")
    if not isinstance(source, dict) or not isinstance(media_type, str):
        return None
    if name is not None and not isinstance(name, str):
        return None
    kind, value = source.get("type"), source.get("data", source.get("url"))
    if not isinstance(value, str):
        return None
    if kind == "base64" and "data" in source:
        return DocumentPart(Base64Source(data=value), media_type, name)
    if kind == "url" and "url" in source:
        return DocumentPart(UrlSource(url=value), media_type, name)
    return None
