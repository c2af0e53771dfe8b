"""The errors of neuron-ui-vercel: what a client sent that the server refuses, and why.

```
VercelAiError
├── InvalidChatRequestError   the body is no chat request (HTTP 400)
├── InvalidChatIdError        a chat id that cannot name a session
├── UnsupportedTriggerError   regenerating an answer
├── EmptyMessageError         nothing to run at the end of `messages`
├── UnsupportedPartError      a part the agent cannot take
├── MessageTooLargeError      past `ChatLimits`
├── InvalidDecisionsError     tool outputs or approvals of the wrong form
└── ServerBusyError           past `max_running` chats at once
```

Each but the first reaches the client as an `error` chunk whose `errorText` is
the error's class name and its message, saying what to fix. None carries a
traceback or the bearer token.
"""

from __future__ import annotations

__all__ = [
    "EmptyMessageError",
    "InvalidChatIdError",
    "InvalidChatRequestError",
    "InvalidDecisionsError",
    "MessageTooLargeError",
    "ServerBusyError",
    "UnsupportedPartError",
    "UnsupportedTriggerError",
    "VercelAiError",
]


class VercelAiError(Exception):
    """Base of neuron-ui-vercel's errors: a chat request the server refuses, saying why."""


class InvalidChatRequestError(VercelAiError):
    """The body is not a chat request of the AI SDK (not JSON, or not of its shape)."""


class InvalidChatIdError(VercelAiError):
    """A chat id that cannot name a session: empty, too long, or with other characters.

    An id is 1 to 128 letters, digits or `._:-` (the AI SDK's generated ids and UUIDs are).
    """


class UnsupportedTriggerError(VercelAiError):
    """A `regenerate-message` request: the session holds the answer given, and keeps it."""


class EmptyMessageError(VercelAiError):
    """The end of `messages` holds nothing to run: no user message, or an empty one."""


class UnsupportedPartError(VercelAiError):
    """A part the agent cannot take: a file by URL, audio, a bad image, a custom part.

    Refused rather than dropped, so the client never believes the agent saw it.
    """


class MessageTooLargeError(VercelAiError):
    """A request past `ChatLimits`: too much text, too many parts, too big a file."""


class InvalidDecisionsError(VercelAiError):
    """Tool outputs or approvals that do not fit the form they must have; nothing runs.

    (Whether they fit the session's waiting calls is the turn's check, which
    also runs nothing when they do not.)
    """


class ServerBusyError(VercelAiError):
    """As many chats as the server runs at once are running; this one is refused.

    Why: each chat request starts model calls and tools; a flood of them must
    not start unbounded work. Nothing of the refused request ran: send it again later.
    """
