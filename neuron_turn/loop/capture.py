"""`capture_run_messages`: the messages of a run, kept even when it fails.

pydantic-ai's `capture_run_messages()`: a run that raises returns no result, so
`all_messages()` is out of reach just when one wants to see what the model was
sent and said. Inside the block, the first run started (`run`, `run_sync`,
`stream`, `execute`, an orchestrator's dispatch) leaves its conversation in the
list the block gives, as it ends or fails: the history it went on from, then its
own messages. Later runs in the block (an agent tool's inner run among them)
leave it alone, so the list is the outer run's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Final

from ._transcript import Transcript
from .message_history import settled
from .provider import ProviderMessage

__all__ = ["Capture", "capture_run_messages", "claim_capture"]


class Capture:
    """A `capture_run_messages` block's list, and whether a run has taken it."""

    def __init__(self) -> None:
        self.messages: list[ProviderMessage] = []
        self.claimed = False

    def fill(self, transcript: Transcript) -> None:
        """Put the run's conversation as `transcript` holds it in the block's list."""
        self.messages[:] = settled([*transcript.history, *transcript.new])


_CAPTURE: Final[ContextVar[Capture | None]] = ContextVar("neuron_turn_capture", default=None)


@contextmanager
def capture_run_messages() -> Iterator[list[ProviderMessage]]:
    """Give the list the first run started in the block leaves its messages in, failed or not.

    Usage::

        with capture_run_messages() as messages:
            try:
                await turn.run("...")
            except ModelError:
                print(messages)  # what was sent and answered before it failed
    """
    capture = Capture()
    token = _CAPTURE.set(capture)
    try:
        yield capture.messages
    finally:
        _CAPTURE.reset(token)


def claim_capture() -> Capture | None:
    """The block's capture for the run starting now, unless there is none or it is taken."""
    capture = _CAPTURE.get()
    if capture is None or capture.claimed:
        return None
    capture.claimed = True
    return capture
