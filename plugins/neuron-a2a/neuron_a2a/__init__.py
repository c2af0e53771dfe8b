"""neuron-a2a: serve an agent of a `layer0.Orchestrator` over the A2A protocol (Agent2Agent).

`serve_a2a(orchestrator, agent, card_name=..., description=...)` serves it
with the official a2a-sdk, as pydantic-ai's `agent.to_a2a()` does: a message
becomes a turn on the session of its A2A context, the answer a completed
task with an artifact (streamed when the orchestrator streams), a turn
paused for approval an `input-required` task whose follow-up carries the
decisions, and `tasks/cancel` cancels the running dispatch. Every request
but the agent card needs the bearer token, and the Host header is checked.
`A2AExecutor` is the SDK `AgentExecutor` underneath, for an application that
builds its own server (`a2a_app` gives the guarded ASGI app).

The other direction: `RemoteAgent(url, token=...)` is a remote A2A agent as a
`layer0.Turn`, so an orchestrator hosts it by name and a turn delegates to it.
"""

from .card import BEARER_SCHEME, INPUT_MODES, OUTPUT_MODES, agent_card
from .errors import (
    A2AError,
    EmptyMessageError,
    InvalidContextError,
    InvalidDecisionsError,
    MessageTooLargeError,
    NonFiniteNumberError,
    RemoteAgentError,
    RemoteAnswerError,
    RemoteAuthError,
    RemoteInputError,
    RemoteTaskError,
    RemoteUnavailableError,
    ServerBusyError,
    UnsupportedPartError,
)
from .executor import A2AExecutor
from .limits import MessageLimits
from .remote import RemoteAgent
from .server import RPC_PATH, a2a_app, serve_a2a
from .task_store import BoundedTaskStore

__all__ = [
    "BEARER_SCHEME",
    "INPUT_MODES",
    "OUTPUT_MODES",
    "RPC_PATH",
    "A2AError",
    "A2AExecutor",
    "BoundedTaskStore",
    "EmptyMessageError",
    "InvalidContextError",
    "InvalidDecisionsError",
    "MessageLimits",
    "MessageTooLargeError",
    "NonFiniteNumberError",
    "RemoteAgent",
    "RemoteAgentError",
    "RemoteAnswerError",
    "RemoteAuthError",
    "RemoteInputError",
    "RemoteTaskError",
    "RemoteUnavailableError",
    "ServerBusyError",
    "UnsupportedPartError",
    "a2a_app",
    "agent_card",
    "serve_a2a",
]
