"""The errors of neuron-a2a: what a remote sent that the agent will not take.

Each becomes the A2A (JSON-RPC) error of its kind at the protocol boundary,
its message telling the remote what to fix; none carries a traceback.
"""

from __future__ import annotations

__all__ = [
    "A2AError",
    "EmptyMessageError",
    "InvalidContextError",
    "InvalidDecisionsError",
    "MessageTooLargeError",
    "ServerBusyError",
    "UnsupportedPartError",
]


class A2AError(Exception):
    """Base of neuron-a2a's errors: a message or request the server refuses, saying why."""


class EmptyMessageError(A2AError):
    """A message holds nothing the agent can read (no parts, or only empty ones)."""


class UnsupportedPartError(A2AError):
    """A part the agent cannot take: a file of another media type, a file by URL, an empty part.

    Refused rather than dropped, so the remote never believes the agent saw it.
    """


class MessageTooLargeError(A2AError):
    """A message past `MessageLimits`: too many parts, too much text, too big a file."""


class InvalidContextError(A2AError):
    """A context id that cannot name a session: empty, too long, or with other characters.

    A context id is 1 to 128 letters, digits or `._:-` (a UUID is one).
    """


class InvalidDecisionsError(A2AError):
    """A follow-up on a task waiting for approval whose decisions do not fit the waiting calls.

    Nothing runs and the task keeps waiting: a call left out, an unknown or repeated call
    id, or an entry not of the documented form.
    """


class ServerBusyError(A2AError):
    """As many dispatches as the server runs at once are running; the message is refused.

    Why: each message starts model calls and tools; a flood of them must not start
    unbounded work. Nothing of the refused message ran: send it again later.
    """
