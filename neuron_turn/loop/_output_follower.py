"""Following a streamed answer for the turn's typed output, and yielding it as it grows.

A streamed turn with an output type yields `OutputDelta` events: the answer
as far as it has arrived, parsed as JSON cut short (pydantic-core's partial
parsing) and validated as far as it goes, as pydantic-ai's `stream_output`
does. It is read from the model's text (`native` and `prompted` modes, from
its first `{`, so a code fence or a line of prose before it is passed over)
or from the arguments of its call to the final-answer tool (`tool` mode).

A number still arriving is left out until what follows it shows it whole (a
population streamed as `21` on its way to `2100000` must not be shown), and
a partial is yielded only when it changed and validates: an object whose
required fields have yet to come is not one yet. The answer so far is parsed
again once it has grown by a sixteenth since the last parse (and when it
closes), so a long answer in tiny pieces, which a hostile model may send,
costs parsing time in proportion to its length, not to its square. The turn's output is still
the answer that validated whole; a partial can come from an answer that is
then refused (the model is asked again, and the partials start over). A strict
final-answer tool's arguments are read as the provider reads the whole call
(`StrictForm.restore`): the nulls strict mode has the model send for optional
fields are dropped, so a partial validates as the answer will.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from pydantic import JsonValue
from pydantic_core import from_json

from neuron_tool import StrictSchemaError, ToolSchema
from neuron_tool.strict import StrictForm, strict_form

from .events import OutputDelta, TextDelta, ToolCallDelta, ToolCallStart, TurnEvent
from .output import OutputMode, OutputSpec, OutputValidationError

__all__ = ["OutputFollower"]

_NUMBER_CHARS: Final = "0123456789.eE+-"
_REPARSE_AFTER: Final = 16
"""Parse again once the answer has grown by 1/16 of what was parsed last (at least a piece)."""
_NOTHING: Final = object()


class OutputFollower:
    """A model call's event sink that also yields its typed answer as it grows.

    One per model call: each call's answer starts afresh.
    """

    def __init__(
        self,
        spec: OutputSpec[Any],
        mode: OutputMode,
        sink: Callable[[TurnEvent], None],
        finals: Sequence[ToolSchema] = (),
    ) -> None:
        """Follow `sink`'s events for `spec`'s answer; `finals`: the call's final-answer tools.

        In `tool` mode the answer is the first call to one of them (a choice of
        types has one per type), validated by its type's spec.
        """
        self._spec = spec
        self._sink = sink
        self._finals = {tool.name: tool for tool in finals} if mode == "tool" else None
        self._form: StrictForm | None = None
        self._call: str | None = None
        self._pieces: list[str] = []
        self._length = 0
        self._parsed_at = 0
        self._depth = 0
        self._in_string = False
        self._escaped = False
        self._closed = False
        self._last: object = _NOTHING

    def __call__(self, event: TurnEvent) -> None:
        self._sink(event)
        if self._closed:
            return
        piece = self._piece(event)
        if piece and self._take(piece) and self._grown():
            self._yield_partial()

    def _piece(self, event: TurnEvent) -> str | None:
        """The part of `event` that belongs to the answer, if any."""
        if self._finals is None:
            return event.text if isinstance(event, TextDelta) else None
        if isinstance(event, ToolCallStart):
            answered = self._spec.final_spec(event.name)
            if answered is not None and event.name in self._finals and self._call is None:
                self._call, self._spec = event.id, answered
                self._form = _strict_form(self._finals[event.name])
            return None
        if isinstance(event, ToolCallDelta) and event.id == self._call:
            return event.arguments
        return None

    def _take(self, piece: str) -> bool:
        """Add `piece` to the answer's JSON; whether any of it was the answer's."""
        if not self._length:
            start = piece.find("{")
            if start < 0:
                return False  # prose or a fence before the answer's object
            piece = piece[start:]
        for index, char in enumerate(piece):
            if self._in_string:
                if self._escaped:
                    self._escaped = False
                elif char == "\\":
                    self._escaped = True
                elif char == '"':
                    self._in_string = False
            elif char == '"':
                self._in_string = True
            elif char in "{[":
                self._depth += 1
            elif char in "}]":
                self._depth -= 1
                if self._depth == 0:
                    # The object is whole: a fence or prose after it is not the answer.
                    self._add(piece[: index + 1])
                    self._closed = True
                    return True
        self._add(piece)
        return True

    def _add(self, piece: str) -> None:
        self._pieces.append(piece)
        self._length += len(piece)

    def _grown(self) -> bool:
        """Whether the answer grew enough since the last parse to parse it again."""
        grown = self._length - self._parsed_at
        if not self._closed and grown * _REPARSE_AFTER < self._parsed_at:
            return False
        self._parsed_at = self._length
        return True

    def _yield_partial(self) -> None:
        # Outside a string, a number at the very end may still grow: left out until whole.
        joined = "".join(self._pieces)
        self._pieces = [joined]
        text = joined if self._in_string else joined.rstrip(_NUMBER_CHARS)
        try:
            parsed: JsonValue = from_json(text, allow_partial="trailing-strings")
        except (ValueError, RecursionError):
            # Not JSON after all, or nested past what the parser takes: the whole
            # answer's validation says why.
            return
        if parsed == self._last:
            return
        self._last = parsed
        if self._form is not None:
            parsed = self._form.restore(parsed)
        try:
            value = self._spec.validate_partial(parsed)
        except OutputValidationError:
            return  # a required field has yet to come
        self._sink(OutputDelta(value, self._spec.dump(value)))


def _strict_form(final: ToolSchema) -> StrictForm | None:
    """The strict form of a strict final-answer tool, to restore its arguments by."""
    if final.strict is not True:
        return None
    try:
        return strict_form(final.input_schema, tool=final.name)
    except StrictSchemaError:
        # No OpenAI form: the provider's own strict mode (Anthropic's) sends no nulls to drop.
        return None
