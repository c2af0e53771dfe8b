"""`WaitingLine`: what a turn is waiting for, when nothing else has shown for a while.

Loading a local model or waiting for a busy provider's first token can take
a minute with nothing to see. On a terminal a status line (rewritten in
place, erased before anything else is written) says what the turn waits for
and for how long, from the start and after a second of silence; when stderr
is piped, a plain line says so after `PIPED_FIRST` seconds of silence and
then every `PIPED_EVERY` seconds: quiet for programs, never silent for long.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Final, TextIO, TypeVar

from ..loop.events import ModelCallDone, ModelCallStart, TextDelta, ToolResult, ToolStart, TurnEvent

TERMINAL_AFTER: Final = 1.0
"""Seconds of silence before the status line shows on a terminal."""
PIPED_FIRST: Final = 10.0
"""Seconds of silence before the first line when stderr is not a terminal."""
PIPED_EVERY: Final = 30.0
"""Seconds between lines after that, while the silence lasts."""
_TICK: Final = 0.25
_CLEAR: Final = "\r\033[K"

T = TypeVar("T")


class WaitingLine:
    """Tracks the turn's events and says what it waits for when the wait is long."""

    def __init__(
        self,
        err: TextIO,
        *,
        terminal: bool,
        may_draw: Callable[[], bool] = lambda: True,
        clock: Callable[[], float] = time.monotonic,
        prog: str = "neuron-turn",
    ) -> None:
        """Write to `err`, in place when `terminal`; `may_draw` False holds the line back."""
        self.err = err
        self.terminal = terminal
        self.may_draw = may_draw
        self.clock = clock
        self.prog = prog
        self.waiting_for = "the turn to start"
        self.since = clock()
        self.quiet_since = self.since
        self.drawn = False
        self._drawn_text = ""
        self.next_line = PIPED_FIRST
        self.held = False
        """Whether a person is being asked something: nothing is drawn until the next event."""

    def note(self, event: TurnEvent) -> None:
        """Follow `event`: what shows next, and what the turn now waits for."""
        self.expect(_what_follows(event))

    def expect(self, what: str | None) -> None:
        """Start the silence again; the turn now waits for `what` (None: as it did).

        The command calls it for a wait no event of the turn announces.
        """
        self.clear()
        self.held = False
        now = self.clock()
        self.quiet_since = now
        self.next_line = PIPED_FIRST
        if what is not None:
            self._wait(what, now)

    def wrap(self, on_event: Callable[[TurnEvent], None]) -> Callable[[TurnEvent], None]:
        """Return `on_event` with the line erased before it writes, and the event followed."""

        def follow(event: TurnEvent) -> None:
            self.clear()
            on_event(event)
            self.note(event)

        return follow

    @contextlib.contextmanager
    def owning_stderr(self) -> Iterator[None]:
        """Route `sys.stderr` through the line while it runs: any other note erases it first."""
        with contextlib.redirect_stderr(_Erasing(self.err, self)):
            yield

    def hold(self) -> None:
        """Erase the line and draw nothing until the turn's next event.

        A question to the person (approve this call?) waits on the same
        terminal; the line drawn over it a second later would erase it. The
        person's time is not the turn's: the next wait is timed afresh.
        """
        self.clear()
        self.held = True
        self.waiting_for = ""

    def shown(self) -> None:
        """Say that something else was just written: the silence starts again."""
        self.clear()
        self.quiet_since = self.clock()

    def show_now(self) -> None:
        """On a terminal, draw the line at once: something shows before the turn is built."""
        if self.terminal and self.may_draw():
            text = f"{self.prog}: waiting for {self.waiting_for} (0s)"
            self.err.write(_CLEAR + text)
            self.err.flush()
            self.drawn, self._drawn_text = True, text

    def tick(self) -> None:
        """Draw or write the waiting line if the silence has lasted long enough."""
        if self.held:
            return
        now = self.clock()
        quiet = now - self.quiet_since
        waited = int(now - self.since)
        text = f"{self.prog}: waiting for {self.waiting_for} ({waited}s)"
        if self.terminal:
            unchanged = self.drawn and text == self._drawn_text
            if quiet >= TERMINAL_AFTER and not unchanged and self.may_draw():
                self.err.write(_CLEAR + text)
                self.err.flush()
                self.drawn, self._drawn_text = True, text
        elif quiet >= self.next_line:
            self.err.write(text + "\n")
            self.err.flush()
            self.next_line = quiet + PIPED_EVERY

    def clear(self) -> None:
        """Erase the status line, if one is drawn, so the next write starts clean."""
        if self.drawn:
            self.err.write(_CLEAR)
            self.err.flush()
            self.drawn = False

    async def run(self) -> None:
        """Tick until cancelled; the line is erased when it stops."""
        try:
            while True:
                self.tick()
                await asyncio.sleep(_TICK)
        finally:
            self.clear()

    def _wait(self, what: str, now: float) -> None:
        if what != self.waiting_for:
            self.waiting_for = what
            self.since = now


def _what_follows(event: TurnEvent) -> str | None:
    """What the turn waits for after `event` (None: what it waited for before)."""
    if isinstance(event, ModelCallStart):
        return f"the model (call {event.call})"
    if isinstance(event, ToolStart):
        return f"tool {event.name}"
    if isinstance(event, ToolResult | ModelCallDone):
        return "the next step"
    if isinstance(event, TextDelta):
        return "the rest of the answer"
    return None


async def watched(waiting: WaitingLine | None, work: Awaitable[T]) -> T:
    """Await `work` while `waiting` ticks beside it (None: just await it)."""
    if waiting is None:
        return await work
    ticker = asyncio.create_task(waiting.run())
    try:
        return await work
    finally:
        ticker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await ticker


def on_terminal(stream: TextIO) -> bool:
    """Return whether `stream` is a terminal (a closed or odd stream is not)."""
    try:
        return stream.isatty()
    except (ValueError, AttributeError):
        return False


class _Erasing:
    """A stand-in for stderr that erases the waiting line before each write."""

    def __init__(self, stream: TextIO, line: WaitingLine) -> None:
        self._stream = stream
        self._line = line

    def write(self, text: str) -> int:
        self._line.clear()
        written = self._stream.write(text)
        self._line.shown()
        return written

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
