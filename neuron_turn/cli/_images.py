"""`--save-images DIR`: the images a model made (`--hosted-tool image_generation`), as files.

The answer's images are in its output message (and the session's history) as
image blocks; a terminal shows none of them, so `run` writes each to
`DIR/<turn id>-<n>.<ext>` and names the file on stderr. Without the flag it
says how many the answer holds and how to get them, rather than drop them
unsaid. Each file is written whole or not at all (a temporary file renamed),
and none is overwritten: the turn id makes each name new.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import mimetypes
import os
import tempfile
from pathlib import Path
from typing import Final

from layer0 import Base64Source, TurnOutput

from ..loop.remote import answer_images

__all__ = ["image_directory", "images_note", "save_images"]

_EXTENSIONS: Final = {"image/jpeg": ".jpg", "image/png": ".png", "image/webp": ".webp"}


class ImageSaveError(OSError):
    """An image of the answer could not be written; the message names the file and why."""


def image_directory(text: str) -> Path:
    """`--save-images`'s directory: made if missing, refused before the turn if unwritable.

    Checked first so that no model call is paid for images that could not be kept.
    """
    directory = Path(text).expanduser()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise argparse.ArgumentTypeError(
            f"cannot make the directory {text!r}: {exc.strerror or exc}"
        ) from exc
    if not directory.is_dir() or not os.access(directory, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{text!r} is not a directory this user can write in")
    return directory


def images_note(
    output: TurnOutput, how: str = "--save-images DIR writes them to files"
) -> str | None:
    """What to say of an answer's images when they are not saved (None: it has none)."""
    count = len(answer_images(output))
    if not count:
        return None
    what = "an image" if count == 1 else f"{count} images"
    return f"the answer holds {what}; {how}"


def save_images(output: TurnOutput, directory: Path, stem: str) -> list[str]:
    """Write the answer's images to `directory` as `<stem>-<n>.<ext>`; return a line for each.

    An image given by URL is named by its URL, not fetched.

    Raises:
        ImageSaveError: an image's bytes are not base64, or a file could not be written
            (the images written before it stay; the session's history holds them all).
    """
    lines: list[str] = []
    for number, block in enumerate(answer_images(output), start=1):
        source = block.source
        if not isinstance(source, Base64Source):
            lines.append(f"image {number}: {source.url}")
            continue
        extension = _EXTENSIONS.get(block.media_type) or mimetypes.guess_extension(block.media_type)
        path = directory / f"{stem}-{number}{extension or '.img'}"
        _write(path, _decoded(source.data, number))
        lines.append(f"image {number}: {path}")
    return lines


def _decoded(data: str, number: int) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ImageSaveError(f"image {number} of the answer is not base64: {exc}") from exc


def _write(path: Path, data: bytes) -> None:
    """Write `data` to `path` whole: a temporary file beside it, renamed when complete."""
    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".image-")
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(data)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as exc:
        raise ImageSaveError(f"cannot write {path}: {exc.strerror or exc}") from exc
