"""`run --attach PATH`: files sent with the prompt (an image, a PDF, audio, video or text).

Each file goes in the user's message after the prompt's text: an image
(PNG, JPEG, GIF or WebP, known by its first bytes, not its name) as an
image block, a PDF (it starts with `%PDF-`) as an `application/pdf`
document (`neuron_turn.document_block`), audio (WAV, MP3, FLAC, Ogg, AAC,
AIFF, M4A) and video (MP4, QuickTime, WebM, AVI, MPEG, 3GPP), also known by
their first bytes, as documents of their media type, a UTF-8 file as a
`text/plain` one. Anything else, or a file over the APIs' 32 MiB, is a usage
error naming it: the model must never answer about a file it was not sent.
Whether the model's API takes what was attached is its provider's to say,
before any call (`InvalidRequestError` naming it).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Final

from layer0 import CustomBlock, ImageBlock
from neuron_tool.files import image_block, image_type

from ..loop.documents import document_block
from ._errors import UsageError
from ._reading import MAX_BYTES, TooLargeError, read_bounded

__all__ = ["read_attachment", "read_attachments"]


def read_attachments(paths: Sequence[str]) -> list[ImageBlock | CustomBlock]:
    """The image and document blocks for `paths`, in order.

    Raises:
        UsageError: a file that cannot be read, is too large, or is none of an image
            the APIs take, a PDF and UTF-8 text.
    """
    blocks: list[ImageBlock | CustomBlock] = []
    left = MAX_BYTES  # the files go in one request: together, no more than it carries
    for path in paths:
        block, size = _attachment(path, left)
        blocks.append(block)
        left -= size
    return blocks


def read_attachment(path: str, *, used: int = 0) -> tuple[ImageBlock | CustomBlock, int]:
    """The block for `path` and its size, within what `used` bytes attached before leave.

    Why: chat's `/attach` adds files one by one to one message, which carries
    at most `MAX_BYTES` of them together.

    Raises:
        UsageError: as `read_attachments`.
    """
    return _attachment(path, MAX_BYTES - used)


def _attachment(path: str, left: int) -> tuple[ImageBlock | CustomBlock, int]:
    """The block for `path` and its size in bytes, at most `left` (what the files before left)."""
    # A file name need not be UTF-8; as the block's name it must be, or no store could keep it.
    name = os.path.basename(path).encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    together = "" if left == MAX_BYTES else " with the files attached before it"
    try:
        size = os.path.getsize(path)
        if size > left:
            raise UsageError(
                f"--attach {path!r} is {size:,} bytes{together}; the model APIs take at most "
                f"{MAX_BYTES:,} in one request"
            )
        with open(path, "rb") as file:
            # A device or a pipe has no size to check first: read no more than can be sent.
            data = read_bounded(file, left)
    except TooLargeError:
        raise UsageError(
            f"--attach {path!r} holds more than {left:,} bytes{together}; the model APIs take "
            f"at most {MAX_BYTES:,} in one request"
        ) from None
    except OSError as exc:
        raise UsageError(f"cannot read --attach {path!r}: {exc.strerror}") from None
    return _block(data, name, path), len(data)


def _block(data: bytes, name: str, path: str) -> ImageBlock | CustomBlock:
    """`data` as the block its first bytes say: an image, a PDF, audio, video or text."""
    image = image_type(data)
    if image is not None:
        return image_block(data, media_type=image)
    if data.startswith(b"%PDF-"):
        return document_block(data, media_type="application/pdf", name=name)
    media = _audio_or_video_type(data)
    if media is not None:
        return document_block(data, media_type=media, name=name)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(
            f"--attach {path!r} is not an image (PNG, JPEG, GIF, WebP), a PDF, audio (WAV, "
            "MP3, FLAC, Ogg, AAC, AIFF, M4A), video (MP4, QuickTime, WebM, AVI, MPEG, 3GPP) or "
            "UTF-8 text; the models here read those"
        ) from None
    return document_block(data, media_type="text/plain", name=name)


_MP4_BRANDS: Final = {b"M4A ": "audio/mp4", b"qt  ": "video/quicktime", b"3gp": "video/3gpp"}


def _audio_or_video_type(data: bytes) -> str | None:
    """The audio or video media type `data`'s first bytes say (the formats Gemini reads)."""
    head = data[:12]
    if head[:4] == b"RIFF":
        return {b"WAVE": "audio/wav", b"AVI ": "video/avi"}.get(head[8:12])
    if head[:4] == b"FORM" and head[8:12] in (b"AIFF", b"AIFC"):
        return "audio/aiff"
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        return _MP4_BRANDS.get(brand) or _MP4_BRANDS.get(brand[:3]) or "video/mp4"
    for signature, media in _SIGNATURES:
        if head.startswith(signature):
            return media
    if len(head) >= 2 and head[0] == 0xFF:
        # ADTS AAC frames and MPEG audio frames share the 11-bit sync; the layer bits differ.
        if head[1] & 0xF6 == 0xF0:
            return "audio/aac"
        if head[1] & 0xE0 == 0xE0 and head[1] & 0x06:
            return "audio/mpeg"
    return None


_SIGNATURES: Final = (
    # With their version bytes, so a text file that starts "ID3 tags" stays text.
    (b"ID3\x02", "audio/mpeg"),
    (b"ID3\x03", "audio/mpeg"),
    (b"ID3\x04", "audio/mpeg"),
    (b"fLaC\x00", "audio/flac"),  # then STREAMINFO, the first block
    (b"fLaC\x80", "audio/flac"),  # STREAMINFO as the last block
    (b"OggS\x00", "audio/ogg"),
    (b"\x1a\x45\xdf\xa3", "video/webm"),
    (b"\x00\x00\x01\xba", "video/mpeg"),
    (b"\x00\x00\x01\xb3", "video/mpeg"),
)
