"""Which images of a session a page shows inline, and the HTML that shows or names them.

A page shows an image as chat UIs do, in an `<img>` with a `data:` URL (the
only images the Content-Security-Policy lets in). The model and the tools
are untrusted, so only what a browser decodes as a plain raster is inlined:
PNG, JPEG, GIF and WebP, named exactly, whose base64 decodes strictly and
whose bytes begin with that format's signature. SVG (a document that can
hold script and links), any other type, a media type with parameters, bad
base64 or bytes of another format are named instead, as in `history`. An
image by URL is named with its URL as text: the viewer fetches nothing.
One image and one page inline only so much (`ImageAllowance`); beyond it an
image is named with a note saying why.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from dataclasses import dataclass
from html import escape
from typing import Final

from pydantic import JsonValue

from ..loop._file_names import file_named

__all__ = ["MAX_IMAGE_BYTES", "MAX_PAGE_BYTES", "Figure", "ImageAllowance", "shown_image"]

MAX_IMAGE_BYTES: Final = 5 * 1024 * 1024
"""The most decoded bytes one image inlined may have: a larger one is named."""
MAX_PAGE_BYTES: Final = 20 * 1024 * 1024
"""The most decoded bytes of images one page inlines: the images after are named."""


def _png(raw: bytes) -> bool:
    return raw.startswith(b"\x89PNG\r\n\x1a\n")


def _jpeg(raw: bytes) -> bool:
    return raw.startswith(b"\xff\xd8\xff")


def _gif(raw: bytes) -> bool:
    return raw[:6] in (b"GIF87a", b"GIF89a")


def _webp(raw: bytes) -> bool:
    return raw[:4] == b"RIFF" and raw[8:12] == b"WEBP"


_SIGNATURES: Final[dict[str, Callable[[bytes], bool]]] = {
    "image/png": _png,
    "image/jpeg": _jpeg,
    "image/gif": _gif,
    "image/webp": _webp,
}
"""The media types inlined, each with the check of its bytes' signature."""


@dataclass
class ImageAllowance:
    """What one page may still inline: a page makes one and spends it as it shows images."""

    per_image: int = MAX_IMAGE_BYTES
    """The most decoded bytes of one image."""
    left: int = MAX_PAGE_BYTES
    """The decoded bytes of images the page may still inline."""


@dataclass(frozen=True)
class Figure:
    """An image inlined: its `<figure>`, the `<img>` and the caption naming it."""

    html: str


def shown_image(block: JsonValue, allowance: ImageAllowance) -> Figure | str | None:
    """An image block inlined if it is safe and allowed, else its name as text; None if no image.

    The name is text to escape (`[image image/svg+xml]`, with a note if the
    image is too large, or with its URL). An inlined image spends its size
    from `allowance`.
    """
    if not isinstance(block, dict) or block.get("type") != "image":
        return None
    name = file_named(block) or "[image]"
    source = block.get("source")
    source = source if isinstance(source, dict) else {}
    if source.get("type") == "url":
        return name  # named with its URL (`file_named`), never fetched
    media_type, data = block.get("media_type"), source.get("data")
    if not isinstance(media_type, str) or media_type not in _SIGNATURES:
        return name
    if source.get("type") != "base64" or not isinstance(data, str):
        return name
    return _inlined(media_type, data, name, allowance)


def _inlined(media_type: str, data: str, name: str, allowance: ImageAllowance) -> Figure | str:
    """The image of a type inlined, if its data allows: checked for size, base64, signature."""
    # Sized before decoding: an image past the caps costs no decoding of its megabytes.
    refusal = _too_large(_decoded_size(data), allowance)
    if refusal:
        return f"{name} not shown: {refusal}"
    raw = _strict_base64(data)
    if raw is None or not _SIGNATURES[media_type](raw):
        return name
    allowance.left -= len(raw)
    return _figure(media_type, raw, name)


def _too_large(size: int, allowance: ImageAllowance) -> str:
    """Why an image of `size` bytes is not inlined, or "" if it may be."""
    if size > allowance.per_image:
        return f"{_size(size)}, more than the {_size(allowance.per_image)} one image may be"
    if size > allowance.left:
        return f"the page already shows as many images as it may ({_size(allowance.left)} left)"
    return ""


def _decoded_size(data: str) -> int:
    """The bytes `data` decodes to, from its length alone."""
    return len(data) // 4 * 3 - (len(data) - len(data.rstrip("="))) if data else 0


def _strict_base64(data: str) -> bytes | None:
    """`data` decoded, or None if it holds anything but base64 (whitespace, a URL-safe alphabet)."""
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def _figure(media_type: str, raw: bytes, name: str) -> Figure:
    # Re-encoded from the bytes rather than the session's string: the URL then
    # holds only the base64 alphabet, whatever the session held.
    url = f"data:{media_type};base64,{base64.b64encode(raw).decode('ascii')}"
    return Figure(
        f'<figure class="image"><img src="{escape(url, quote=True)}" '
        f'alt="{escape(f"image ({media_type})", quote=True)}">'
        f"<figcaption>{escape(f'{name} {_size(len(raw))}')}</figcaption></figure>"
    )


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} B"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} KB"
    return f"{count / (1024 * 1024):.1f} MB"
