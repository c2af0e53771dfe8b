"""The errors of neuron-ag-ui: what a client sent that the server refuses, and why.

Each reaches the client as a `RUN_ERROR` event whose `code` is the error's class
name and whose message says what to fix (or, for a body that is no run request
at all, as an HTTP 400). None carries a traceback or the bearer token.
"""

from __future__ import annotations

__all__ = [
    "AgUiError",
    "EmptyMessageError",
    "InvalidDecisionsError",
    "InvalidRunInputError",
    "InvalidThreadError",
    "MessageTooLargeError",
    "ServerBusyError",
    "UnsupportedPartError",
]


class AgUiError(Exception):
    """Base of neuron-ag-ui's errors: a run request the server refuses, saying why."""


class InvalidRunInputError(AgUiError):
    """The request body is not an AG-UI `RunAgentInput` (not JSON, or not of its shape)."""


class InvalidThreadError(AgUiError):
    """A thread or run id that cannot name a session: empty, too long, or with other characters.

    An id is 1 to 128 letters, digits or `._:-` (a UUID is one).
    """


class EmptyMessageError(AgUiError):
    """The end of `messages` holds nothing to run: no user message, or an empty one."""


class UnsupportedPartError(AgUiError):
    """A content part the agent cannot take: audio, video, a file by URL or handle, a bad image.

    Refused rather than dropped, so the client never believes the agent saw it.
    """


class MessageTooLargeError(AgUiError):
    """A request past `RunLimits`: too much text, too many parts or tools, too big a file."""


class InvalidDecisionsError(AgUiError):
    """Tool results, resume entries or decisions that do not fit the form they must have.

    Nothing runs: a tool message answering a call twice, a resume entry of
    another form, `forwardedProps.neuron_decisions` that are not decisions.
    (Whether they fit the session's waiting calls is the turn's check, which
    also runs nothing when they do not.)
    """


class ServerBusyError(AgUiError):
    """As many runs as the server runs at once are running; this one is refused.

    Why: each run starts model calls and tools; a flood of them must not start
    unbounded work. Nothing of the refused run ran: send it again later.
    """
