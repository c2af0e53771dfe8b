"""Files in stored history named for a person (`history`, the viewer), never dumped.

An image's or a document's data is megabytes of base64: a listing names each
by its media type or file name instead.
"""

from __future__ import annotations

from typing import Final

from pydantic import JsonValue

from .documents import DOCUMENT_TYPE, document_from_block, file_kind

LONGEST_URL: Final = 300
"""The most characters of a file's URL a listing shows."""


def cut_url(url: str) -> str:
    """`url`, cut at `LONGEST_URL` characters with a note of its full length."""
    if len(url) <= LONGEST_URL:
        return url
    return f"{url[:LONGEST_URL]}… ({len(url)} characters)"


def tool_files_named(data: JsonValue) -> str:
    """The files a tool returned (the block after its result), each named as a message's are."""
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, list):
        return "[tool files: unreadable]"  # never the JSON: it may hold their base64
    return " ".join(file_named(file) or "[unreadable file]" for file in files)


def file_named(block: JsonValue) -> str | None:
    """A file block named (`[image image/png]`, `[document q3.pdf]`, `[audio call.wav]`).

    An image by URL is named with its URL as text, cut at `LONGEST_URL` characters
    (a `data:` URL can be megabytes): it says where the image is, and nothing fetches it.
    """
    if not isinstance(block, dict):
        return None
    if block.get("type") == "image":
        named = f"[image {block.get('media_type')}]"
        source = block.get("source")
        if isinstance(source, dict) and source.get("type") == "url":
            return f"{named} {cut_url(str(source.get('url')))}"
        return named
    if block.get("type") == "custom" and block.get("content_type") == DOCUMENT_TYPE:
        document = document_from_block(block.get("data"))
        if document is not None:
            return f"[{file_kind(document.media_type)} {document.name or document.media_type}]"
    return None
