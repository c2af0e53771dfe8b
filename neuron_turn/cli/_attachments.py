"""`run --attach PATH`: files sent with the prompt (an image, a PDF, or a text file).

Each file goes in the user's message after the prompt's text: an image
(PNG, JPEG, GIF or WebP, known by its first bytes, not its name) as an
image block, a PDF (it starts with `%PDF-`) as an `application/pdf`
document (`neuron_turn.document_block`), a UTF-8 file as a `text/plain` one.
Anything else, or a file over the APIs' 32 MiB, is a usage error naming it:
the model must never answer about a file it was not sent.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Final

from layer0 import CustomBlock, ImageBlock
from neuron_tool.files import image_block, image_type

from ..loop.documents import document_block
from ._errors import UsageError

__all__ = ["read_attachments"]

MAX_BYTES: Final = 32 * 1024 * 1024
"""The largest request Anthropic's and OpenAI's APIs take: a file larger can never be sent."""


def read_attachments(paths: Sequence[str]) -> list[ImageBlock | CustomBlock]:
    """The image and document blocks for `paths`, in order.

    Raises:
        UsageError: a file that cannot be read, is too large, or is none of an image
            the APIs take, a PDF and UTF-8 text.
    """
    return [_attachment(path) for path in paths]


def _attachment(path: str) -> ImageBlock | CustomBlock:
    # A file name need not be UTF-8; as the block's name it must be, or no store could keep it.
    name = os.path.basename(path).encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    try:
        size = os.path.getsize(path)
        if size > MAX_BYTES:
            raise UsageError(
                f"--attach {path!r} is {size:,} bytes; the model APIs take at most {MAX_BYTES:,}"
            )
        with open(path, "rb") as file:
            data = file.read()
    except OSError as exc:
        raise UsageError(f"cannot read --attach {path!r}: {exc.strerror}") from None
    image = image_type(data)
    if image is not None:
        return image_block(data, media_type=image)
    if data.startswith(b"%PDF-"):
        return document_block(data, media_type="application/pdf", name=name)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(
            f"--attach {path!r} is not an image (PNG, JPEG, GIF, WebP), a PDF or UTF-8 text; "
            "the models here read those"
        ) from None
    return document_block(data, media_type="text/plain", name=name)
