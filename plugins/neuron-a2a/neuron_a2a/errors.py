"""The errors of neuron-a2a: what a remote sent that the server refuses; what failed calling one.

The server's errors become the A2A (JSON-RPC) error of their kind at the protocol
boundary, their message telling the remote what to fix. The client's
(`RemoteAgentError` and its subclasses) are layer0 turn errors too, retryable or
not by their meaning, so an orchestrator decides on them as on any turn's. None
carries a traceback or the bearer token.
"""

from __future__ import annotations

from layer0 import NonRetryableError, RetryableError, TurnError

__all__ = [
    "A2AError",
    "EmptyMessageError",
    "InvalidContextError",
    "InvalidDecisionsError",
    "MessageTooLargeError",
    "NonFiniteNumberError",
    "RemoteAgentError",
    "RemoteAnswerError",
    "RemoteAuthError",
    "RemoteInputError",
    "RemoteTaskError",
    "RemoteUnavailableError",
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


class NonFiniteNumberError(A2AError):
    """A request holding NaN or infinity (`NaN`, `Infinity`, `1e999`), which JSON has no form for.

    Python's parser takes them, but a task holding one could never be written out
    again: every answer listing it (`ListTasks`, for every client) would fail.
    """


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


class RemoteAgentError(A2AError, TurnError):
    """Base of the errors of calling a remote A2A agent (`RemoteAgent`): the remote's URL and why.

    Why a `layer0.TurnError`: a `RemoteAgent` is a turn, and an orchestrator
    retries or not by the class of a turn's error.
    """


class RemoteUnavailableError(RemoteAgentError, RetryableError):
    """The remote agent could not be reached or is overloaded (no connection, a 5xx, a 429).

    The same call may succeed later; `retry_after` holds the remote's wait, when it said one.
    """


class RemoteAuthError(RemoteAgentError, NonRetryableError):
    """The remote agent refused the bearer token (HTTP 401 or 403), or none was given.

    Nothing ran on the remote; the call fails again until the token is fixed.
    """


class RemoteInputError(RemoteAgentError, NonRetryableError):
    """The turn's input cannot be sent to the remote agent, found before any request.

    A session that makes no context id the remote takes (too long), an image or
    document by URL, a content block A2A has no part for, decisions without the
    session of the paused turn.
    """


class RemoteTaskError(RemoteAgentError, NonRetryableError):
    """The remote agent's task failed or was rejected (or asks for input it cannot be given).

    Not retried: the remote may have done part of the work (its tools ran), and a
    retry would do it again. The message is the remote's own, cut short.
    """


class RemoteAnswerError(RemoteAgentError, NonRetryableError):
    """The remote agent's answer cannot be used: malformed, or past the size allowed.

    The remote is untrusted: its answer is bounded and checked before it becomes a turn's.
    """
