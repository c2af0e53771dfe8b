"""Where `run`'s prompt comes from: the argument, standard input (`-`, or a pipe), or a file.

Like `llm` and `git commit -F`: `neuron-turn run -` and `... | neuron-turn run`
read the prompt from standard input, `--prompt-file PATH` from a file, so a
prompt of any size (an argument is capped by the OS near 128 KiB) and any
content can be sent, up to the 32 MiB the model APIs take (more is refused unread, so
`--prompt-file /dev/zero` cannot fill memory). An empty or blank prompt is a usage error,
never a call.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from ._errors import UsageError
from ._reading import TooLargeError, read_bounded

STDIN: str = "-"
"""The PROMPT that means: read standard input."""


def add_prompt_arguments(parser: argparse.ArgumentParser) -> None:
    """Add PROMPT (optional), `--prompt-file` and `--attach` to `parser`."""
    parser.add_argument(
        "prompt",
        metavar="PROMPT",
        nargs="?",
        help="the user message; - (or none, with stdin not a terminal) reads it from stdin",
    )
    parser.add_argument(
        "--prompt-file", metavar="PATH", help="read the user message from this file (UTF-8)"
    )
    parser.add_argument(
        "--attach",
        action="append",
        default=[],
        metavar="PATH",
        help="send this file with the message: an image (PNG, JPEG, GIF, WebP), a PDF or a "
        "UTF-8 text file (repeat)",
    )


def read_prompt(given: str | None, prompt_file: str | None, stdin: TextIO | None) -> str:
    """Return the prompt the command line gave, read from wherever it says.

    Raises:
        UsageError: two sources or none, an unreadable source, or a blank prompt.
    """
    if prompt_file is not None:
        if given is not None:
            raise UsageError(f"give PROMPT or --prompt-file, not both (got {_short(given)!r})")
        text, source = _read_file(prompt_file), f"--prompt-file {prompt_file!r}"
    elif given == STDIN or (given is None and stdin is not None and not _is_terminal(stdin)):
        text, source = _read_stdin(stdin), "standard input"
    elif given is None:
        raise UsageError(
            "no prompt: give PROMPT, - to read it from standard input, or --prompt-file PATH"
        )
    else:
        text, source = utf8_text(given, "PROMPT"), "PROMPT"
    if not text.strip():
        raise UsageError(f"the prompt ({source}) is empty or blank; nothing was sent to the model")
    # A file or a pipe ends with a newline the user did not mean as part of the message.
    return text.rstrip("\n") if source != "PROMPT" else text


def _read_file(path: str) -> str:
    try:
        with open(path, "rb") as file:
            data = read_bounded(file)
    except TooLargeError as exc:
        raise UsageError(f"--prompt-file {path!r} holds {exc}; no model takes that") from None
    except OSError as exc:
        raise UsageError(f"cannot read --prompt-file {path!r}: {exc.strerror}") from None
    return _decoded(data, f"--prompt-file {path!r}")


def _read_stdin(stdin: TextIO | None) -> str:
    if stdin is None:
        raise UsageError("PROMPT is - but there is no standard input to read")
    buffer = getattr(stdin, "buffer", None)
    try:
        if buffer is None:  # a text stream without bytes underneath (io.StringIO)
            return stdin.read()
        data: bytes = read_bounded(buffer)
    except TooLargeError as exc:
        raise UsageError(f"standard input holds {exc}; no model takes that") from None
    except OSError as exc:
        raise UsageError(f"cannot read the prompt from standard input: {exc}") from None
    return _decoded(data, "standard input")


def utf8_text(text: str, source: str) -> str:
    """Return `text` if it came from valid UTF-8; name the first undecodable byte if not.

    Python decodes command-line arguments (and, in some locales, standard
    input) with `surrogateescape`, so bytes that are not UTF-8 arrive as lone
    surrogates, which no model API or store can carry.

    Raises:
        UsageError: `text` holds a lone surrogate; the message gives its byte offset.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        try:
            raw = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            where = f"U+{ord(text[exc.start]):04X} at character {exc.start}"
            raise UsageError(f"{source} is not valid Unicode text ({where})") from None
        return _decoded(raw, source)
    return text


def _decoded(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{source} is not UTF-8 text (byte {exc.start})") from None


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except ValueError:  # closed
        return False


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:39] + "…"
