"""What `neuron-turn run` writes while a turn streams: text, activity lines, or JSON lines.

`TextPrinter` writes the answer to stdout as it arrives and, when asked,
one line per model and tool call to stderr, each with that call's own
tokens, cost and duration (they come from the events, which carry them,
not from running totals). `JsonLinesPrinter` writes every event as one
JSON object per line, for programs.
"""

from __future__ import annotations

import json
from typing import Final, TextIO

from pydantic_core import to_json

from layer0 import (
    BudgetAction,
    BudgetWarning,
    CompactionComplete,
    ContextPressure,
    CustomExit,
    ObserverHalt,
    PreCompactionFlush,
    TextBlock,
    TurnOutput,
)

from ..loop.events import (
    HookHalted,
    Lifecycle,
    LimitReached,
    ModelCallDone,
    ModelCallStart,
    TextDelta,
    ToolProgress,
    ToolResult,
    ToolStart,
    TurnEvent,
    event_json,
)
from ._visible import json_shown_on, shown_on

_WIDTH: Final = 80


class TextPrinter:
    """Streams a turn for people: the answer on `out`, activity on `err` when `progress`."""

    def __init__(self, out: TextIO, err: TextIO, *, progress: bool, width: int = _WIDTH) -> None:
        """Write to `out` and `err`; activity lines only with `progress`."""
        self.out = out
        self.err = err
        self.progress = progress
        self.width = width
        self.wrote_text = False
        self.mid_line = False
        self._call_text: list[str] = []
        """The text the current model call streamed: the answer, unless the turn changed it."""
        # The answer and tool results are untrusted text: on a terminal, shown inert.
        self._shown_out = shown_on(out)
        self._shown_err = shown_on(err)

    def __call__(self, event: TurnEvent) -> None:
        """Write what `event` shows."""
        if isinstance(event, TextDelta):
            self._text(event.text)
            return
        if isinstance(event, ModelCallStart):
            self.end_line()  # each model call's text starts on a line of its own
            self._call_text.clear()
        if self.progress:
            line = describe(event, width=self.width)
            if line is not None:
                self._activity(line)

    def finish(self, output: TurnOutput) -> None:
        """End the answer with a newline; print it whole if it is not what streamed last.

        The answer a completed turn ends with may not be the text its last model
        call streamed: a stop tool's result, or an output validator's change; it
        is then printed on a line of its own. An answer with no text (a turn
        stopped by a limit while calling tools) prints nothing: an empty line
        would look like an empty answer.
        """
        text = "".join(b.text for b in output.message.blocks if isinstance(b, TextBlock))
        self.end_line()
        streamed = "".join(self._call_text)
        if not self.wrote_text or (output.exit_reason == "complete" and text != streamed):
            if text:
                self.out.write(self._shown_out(text) + "\n")
                self.out.flush()

    def _text(self, text: str) -> None:
        if not text:
            return
        self.out.write(self._shown_out(text))
        self.out.flush()
        self._call_text.append(text)
        self.wrote_text = True
        self.mid_line = not text.endswith("\n")

    def end_line(self) -> None:
        """End the answer's current line, if text left it open."""
        if self.mid_line:
            self.out.write("\n")
            self.out.flush()
            self.mid_line = False

    def _activity(self, line: str) -> None:
        if self.mid_line and _same_terminal(self.out, self.err):
            self.end_line()  # else the line would land in the middle of the answer
        self.err.write(self._shown_err(line) + "\n")
        self.err.flush()


class JsonLinesPrinter:
    """Streams a turn for programs: each event as one JSON object on a line of `out`."""

    def __init__(self, out: TextIO) -> None:
        """Write to `out`."""
        self.out = out
        self._shown = json_shown_on(out)

    def __call__(self, event: TurnEvent) -> None:
        """Write `event` as one line."""
        # As the layer0 wire writes JSON: a model's NaN or infinity goes out as null,
        # which every JSON reader takes (json.dumps would write a bare NaN).
        line = to_json(event_json(event), inf_nan_mode="null").decode()
        self.out.write(self._shown(line) + "\n")
        self.out.flush()


def describe(event: TurnEvent, *, width: int = _WIDTH) -> str | None:
    """Return the activity line for `event`, or None for events that have none."""
    if isinstance(event, ModelCallStart):
        return f"[model] call {event.call}"
    if isinstance(event, ModelCallDone):
        usage = event.usage
        cost = "price unknown" if event.cost is None else f"${event.cost.amount:.4f}"
        return (
            f"[model] call {event.call}: {usage.input_tokens} tokens in / "
            f"{usage.output_tokens} out, {cost} ({event.stop_reason})"
        )
    if isinstance(event, ToolStart):
        arguments = _shorten(json.dumps(event.input, ensure_ascii=False), width)
        return f"[tool] {event.name}({arguments})"
    if isinstance(event, ToolResult):
        outcome = "failed: " if event.is_error else "-> "
        files = "".join(f" [+ {name}]" for name in event.files)
        shown = _shorten(event.content, width)
        return f"[tool] {event.name} {outcome}{shown}{files} ({_seconds(event)})"
    if isinstance(event, ToolProgress):
        done = "" if event.fraction is None else f" ({event.fraction:.0%})"
        return f"[tool] {event.name}: {_shorten(event.message, width)}{done}"
    if isinstance(event, HookHalted):
        return f"[turn] halted by a hook: {event.reason}"
    if isinstance(event, LimitReached):
        return f"[turn] stopped: {_reason(event)}"
    if isinstance(event, Lifecycle):
        return _lifecycle(event)
    return None


def _lifecycle(notice: Lifecycle) -> str | None:
    # CostIncurred has no line: the model call's own line already shows its cost.
    event = notice.event
    if isinstance(event, ContextPressure):
        return (
            f"[context] {event.fill_percent:.0f}% full "
            f"({event.tokens_used} tokens, {event.tokens_available} left)"
        )
    if isinstance(event, PreCompactionFlush):
        return "[context] compacting"
    if isinstance(event, CompactionComplete):
        return f"[context] {event.strategy} freed {event.tokens_freed} tokens"
    if isinstance(event, BudgetWarning):
        return f"[budget] ${event.spent.amount:.4f} of ${event.limit.amount:.4f} spent"
    if isinstance(event, BudgetAction):
        return f"[budget] {event.action}"
    return None


def _seconds(event: ToolResult) -> str:
    return f"{event.duration / 1000:.2f}s"


def _reason(event: LimitReached) -> str:
    reason = event.reason
    if isinstance(reason, CustomExit):
        return reason.name
    if isinstance(reason, ObserverHalt):
        return reason.reason
    return reason


def _shorten(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _same_terminal(out: TextIO, err: TextIO) -> bool:
    try:
        return out.isatty() and err.isatty()
    except ValueError:  # a closed stream
        return False
