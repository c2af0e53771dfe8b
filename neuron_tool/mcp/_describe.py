"""`describe`: an error in a message's few words, as the bridge's messages quote errors."""

from __future__ import annotations


def describe(exc: BaseException) -> str:
    """`Type: message` of the first error in `exc`, looking inside exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
