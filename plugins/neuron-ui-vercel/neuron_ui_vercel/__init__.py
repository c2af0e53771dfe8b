"""neuron-ui-vercel: serve an agent of a `layer0.Orchestrator` to a Vercel AI SDK frontend.

The AI SDK's `useChat` (`@ai-sdk/react`, AI SDK 5 and 6) POSTs the chat and
reads the answer as a UI message stream (server-sent JSON chunks).
`serve_vercel_ai(orchestrator, agent)` serves one agent that way, as
pydantic-ai's `VercelAIAdapter` does: a request becomes a turn on the session
of its chat, answered as chunks (steps, text, reasoning, the server's tool
calls and outputs, a typed answer as the `data-output` part, the end); the
client's own tools (`frontend_tools`) are offered to the model and handed to
the client to run; calls held for approval end the response with approval
requests. Every request needs the bearer token, and the Host and Origin
headers are checked. `vercel_ai_app` gives the guarded ASGI app;
`VercelAiRunner` the chunks, for a server of one's own.
"""

from ._chunks import OUTPUT_PART
from ._request import DECISIONS_FIELD
from .errors import (
    EmptyMessageError,
    InvalidChatIdError,
    InvalidChatRequestError,
    InvalidDecisionsError,
    MessageTooLargeError,
    ServerBusyError,
    UnsupportedPartError,
    UnsupportedTriggerError,
    VercelAiError,
)
from .limits import ChatLimits
from .runner import VercelAiRunner
from .server import CHAT_PATH, STREAM_HEADERS, serve_vercel_ai, vercel_ai_app

__all__ = [
    "CHAT_PATH",
    "DECISIONS_FIELD",
    "OUTPUT_PART",
    "STREAM_HEADERS",
    "ChatLimits",
    "EmptyMessageError",
    "InvalidChatIdError",
    "InvalidChatRequestError",
    "InvalidDecisionsError",
    "MessageTooLargeError",
    "ServerBusyError",
    "UnsupportedPartError",
    "UnsupportedTriggerError",
    "VercelAiError",
    "VercelAiRunner",
    "serve_vercel_ai",
    "vercel_ai_app",
]
