"""`run --attach PATH`: documents sent with the prompt (a PDF, or a text file).

Each file goes in the user's message as a document block
(`neuron_turn.document_block`), after the prompt's text: a PDF (it starts
with `%PDF-`) as `application/pdf`, a UTF-8 file as `text/plain`. Anything
else, or a file over the APIs' 32 MiB, is a usage error naming it: the model
must never answer about a file it was not sent.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Final

from layer0 import CustomBlock

from ..loop.documents import document_block
from ._errors import UsageError

__all__ = ["read_attachments"]

MAX_BYTES: Final = 32 * 1024 * 1024
"""The largest request Anthropic's and OpenAI's APIs take: a file larger can never be sent."""


def read_attachments(paths: Sequence[str]) -> list[CustomBlock]:
    """The document blocks for `paths`, in order.

    Raises:
        UsageError: a file that cannot be read, is too large, or is neither PDF nor UTF-8 text.
    """
    return [_attachment(path) for path in paths]


def _attachment(path: str) -> CustomBlock:
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
    if data.startswith(b"%PDF-"):
        return document_block(data, media_type="application/pdf", name=name)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(
            f"--attach {path!r} is neither a PDF nor UTF-8 text; the models here read those"
        ) from None
    return document_block(data, media_type="text/plain", name=name)
