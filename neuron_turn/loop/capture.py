"""`capture_run_messages`: the messages of a run, kept even when it fails.

pydantic-ai's `capture_run_messages()`: a run that raises returns no result, so
`all_messages()` is out of reach just when one wants to see what the model was
sent and said. Inside the block, the first run started (`run`, `run_sync`,
`stream`, `execute`, an orchestrator's dispatch) leaves its conversation in the
list the block gives, as it ends or fails: the history it went on from, then its
own messages. Runs inside it (an agent tool's) leave it alone; a run after one
that failed (an orchestrator's next attempt, a fallback model) takes its place,
so a retried dispatch leaves its last attempt; once one run has ended well, later
ones leave it alone.
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
    """A `capture_run_messages` block's list, and which run fills it."""

    def __init__(self) -> None:
        self.messages: list[ProviderMessage] = []
        self.running = 0
        """Runs under way that took the list (more than one only while one runs another)."""
        self.ended_well = False
        """Whether a run that took the list ended without raising: later ones leave it."""

    def fill(self, transcript: Transcript, *, ended_well: bool) -> None:
        """Put the run's conversation as `transcript` holds it in the block's list."""
        self.running -= 1
        self.messages[:] = settled([*transcript.history, *transcript.new])
        self.ended_well = ended_well


_CAPTURE: Final[ContextVar[Capture | None]] = ContextVar("neuron_turn_capture", default=None)


@contextmanager
def capture_run_messages() -> Iterator[list[ProviderMessage]]:
    """Give the list the first run in the block leaves its messages in, failed or not.

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
    """The block's capture for the run starting now, if it is to take it.

    None without a block, inside a run that took it, or after one that ended well.
    """
    capture = _CAPTURE.get()
    if capture is None or capture.running or capture.ended_well:
        return None
    capture.running += 1
    return capture
