"""Files a tool hands the model: images and documents beside its result, as `ToolReturn`.

A tool's result is JSON the model reads as text. A screenshot, a rendered
chart or a fetched PDF must reach the model as what it is, so a tool returns
`ToolReturn(value, files=[...])`: `value` is the result's text as before, and
each file is a layer0 block the model is shown with it, an `ImageBlock` or a
document (`document_block`: a custom block of content type `DOCUMENT_TYPE`,
which every layer0 reader, the Rust reference included, takes).

    {"type": "custom", "content_type": "neuron.document",
     "data": {"source": {"type": "base64", "data": "JVBERi0..."},
              "media_type": "application/pdf", "name": "report.pdf"}}

Files are checked when the `ToolReturn` is made (a block of another kind, a
document whose data is not that shape, base64 that does not decode), so a bad
one fails the call that returned it, naming what is wrong, rather than the
model request after it.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable
from typing import Final, TypeAlias, cast

from pydantic import JsonValue
from pydantic_core import to_jsonable_python

from layer0 import Base64Source, CustomBlock, ImageBlock, UrlSource

from .errors import ToolFileError

__all__ = [
    "DOCUMENT_TYPE",
    "IMAGE_TYPES",
    "FileBlock",
    "ToolReturn",
    "document_block",
    "document_of",
    "image_block",
    "image_type",
    "source_document_block",
]

DOCUMENT_TYPE: Final = "neuron.document"
"""The custom block content type of a document."""

FileBlock: TypeAlias = ImageBlock | CustomBlock
"""A file as layer0 content: an image, or a document's custom block."""

IMAGE_TYPES: Final = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""The image media types every model API here takes (Anthropic's four; OpenAI's and
Ollama's include them)."""

_IMAGE_SIGNATURES: Final = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def image_type(data: bytes) -> str | None:
    """The media type of an image of `IMAGE_TYPES` by its first bytes; None if not one.

    Why by its bytes: a name or a declared type is only a claim (an upload's, a peer's).
    """
    for signature, media_type in _IMAGE_SIGNATURES:
        if data.startswith(signature):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


class ToolReturn:
    """A tool's result together with files for the model to see (as pydantic-ai's `ToolReturn`).

    `value` is what the model reads as the result (a string as is, else its
    JSON); `files` are images (`image_block`, `layer0.ImageBlock`) and documents
    (`document_block`) sent with it. The provider shows them to the model with
    the result: inside it where its API allows (Anthropic), else in a message
    right after the results (OpenAI, Ollama). A provider that cannot show a
    file tells the model so in text, naming it.

    Raises:
        ToolFileError: a file is neither an image nor a well-formed document.
    """

    __slots__ = ("files", "value")

    value: JsonValue
    files: tuple[FileBlock, ...]

    def __init__(self, value: object = "", *, files: Iterable[FileBlock] = ()) -> None:
        # A model, dataclass, datetime... becomes JSON here, as a tool's plain result does.
        self.value = cast(JsonValue, value) if type(value) in _AS_IS else to_jsonable_python(value)
        self.files = tuple(files)
        for index, file in enumerate(self.files):
            _check_file(file, index)

    def __repr__(self) -> str:
        # The files' bytes never go into a repr: they may be megabytes.
        return f"ToolReturn(value={self.value!r}, files=<{len(self.files)} file(s)>)"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolReturn):
            return NotImplemented
        return self.value == other.value and self.files == other.files

    __hash__ = None  # type: ignore[assignment]  # the value may be a list or dict


_AS_IS: Final = frozenset({str, int, bool, type(None)})


def image_block(
    data: bytes | None = None, *, url: str | None = None, media_type: str = "image/png"
) -> ImageBlock:
    """An image given by its bytes (`data`) or a URL the model's API fetches.

    Raises:
        ValueError: neither or both of `data` and `url` given.
    """
    return ImageBlock(source=_source(data, url, "an image"), media_type=media_type)


def document_block(
    data: bytes | None = None,
    *,
    url: str | None = None,
    media_type: str = "application/pdf",
    name: str | None = None,
) -> CustomBlock:
    """A document (a PDF, or plain text) given by its bytes (`data`) or its URL.

    Raises:
        ValueError: neither or both of `data` and `url` given.
    """
    return source_document_block(_source(data, url, "a document"), media_type, name)


def source_document_block(
    source: Base64Source | UrlSource, media_type: str, name: str | None = None
) -> CustomBlock:
    """The custom block of a document whose source is already a layer0 source."""
    data: dict[str, JsonValue] = {
        "source": source.model_dump(mode="json"),
        "media_type": media_type,
    }
    if name is not None:
        data["name"] = name
    return CustomBlock(content_type=DOCUMENT_TYPE, data=data)


def document_of(data: JsonValue) -> tuple[Base64Source | UrlSource, str, str | None] | None:
    """The source, media type and name a `DOCUMENT_TYPE` block's data holds; None if not that."""
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
        return Base64Source(data=value), media_type, name
    if kind == "url" and "url" in source:
        return UrlSource(url=value), media_type, name
    return None


def _source(data: bytes | None, url: str | None, what: str) -> Base64Source | UrlSource:
    if (data is None) == (url is None):
        raise ValueError(f"{what} is given by its bytes (data=) or its URL (url=), not both")
    if url is not None:
        return UrlSource(url=url)
    return Base64Source(data=base64.b64encode(data or b"").decode("ascii"))


def _check_file(file: object, index: int) -> None:
    if isinstance(file, ImageBlock):
        if file.media_type not in IMAGE_TYPES:
            # Else the model request after the call would fail, not the call.
            raise ToolFileError(
                index,
                f"an image of {file.media_type!r}: the model APIs take "
                f"{', '.join(sorted(IMAGE_TYPES))}",
            )
        _check_source(file.source, index)
        return
    if isinstance(file, CustomBlock) and file.content_type == DOCUMENT_TYPE:
        document = document_of(file.data)
        if document is None:
            raise ToolFileError(
                index, "a document's data needs a source (base64 data or a url) and a media_type"
            )
        _check_source(document[0], index)
        return
    kind = (
        f"a custom block of {file.content_type!r}"
        if isinstance(file, CustomBlock)
        else type(file).__name__
    )
    raise ToolFileError(
        index, f"{kind} is not a file; give an image (image_block) or a document (document_block)"
    )


def _check_source(source: Base64Source | UrlSource, index: int) -> None:
    if isinstance(source, UrlSource):
        return
    try:
        base64.b64decode(source.data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ToolFileError(index, f"its base64 data does not decode ({exc})") from None
