"""Where each turn of a session's stored history starts: the places a fork may cut it.

A turn appends its messages to its session's history in one piece
(`layer0.history`): the message it was sent (the opening) first, then the
model's messages and the tools' results. A resumed turn (approval decisions) or
a continued one (a turn kept in part) appends no opening: it goes on with the
turn before it. So turns start at the openings, and an opening is a user
message holding no tool result: every `user:` line of `neuron-turn history`
but the tools' results.

That is what a person counts there, and what can be known of any store: turn
records would say more (the correction the loop sends within a turn after an
answer that failed its output type is a user message of plain text too, where
`neuron-turn show` counts one turn), but a store need not keep them, and a fork's
copied turns have none. The correction counts as a turn here, as it reads in
`history`; a cut before it is whole all the same, ending on the answer it
corrected.

Whatever the messages say, no turn starts inside a round of tool calls:
between a call and its result, the history would be cut in two.
"""

from __future__ import annotations

from collections.abc import Sequence

from .provider import ProviderMessage, ToolResultPart, ToolUsePart

__all__ = ["turn_starts"]


def turn_starts(history: Sequence[ProviderMessage]) -> list[int]:
    """Return the index of each turn's opening in `history`, in order."""
    inside = _inside_tool_rounds(history)
    return [
        index for index, message in enumerate(history) if index not in inside and _opens(message)
    ]


def _opens(message: ProviderMessage) -> bool:
    return message.role == "user" and not any(
        isinstance(part, ToolResultPart) for part in message.content
    )


def _inside_tool_rounds(history: Sequence[ProviderMessage]) -> set[int]:
    """The indexes a cut before would part a call from its result.

    A result answers the latest call of its id before it: models reuse ids
    (`call_1` in every turn), so an id names a call only until it is answered.
    """
    called: dict[str, int] = {}
    inside: set[int] = set()
    for index, message in enumerate(history):
        for part in message.content:
            if isinstance(part, ToolUsePart):
                called[part.id] = index
            elif isinstance(part, ToolResultPart) and part.tool_use_id in called:
                inside.update(range(called.pop(part.tool_use_id) + 1, index + 1))
    return inside
